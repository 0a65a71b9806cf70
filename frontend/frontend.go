// Package frontend runs what one command line asks for, a Job, the way
// that command runs it: bench, rados bench, rbd bench, fio, s3 bench,
// rados load-gen, disk and net client. A Job is a plain value that
// round-trips through JSON: the command line is parsed into it (by the
// CLI, or by a plan for each of its steps) without I/O, and running it
// needs nothing else, so it runs the same in a plan or on another host.
package frontend

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/step"
)

// Job is what one command line asks for: its steps, each with its
// command's options in step.Front, and the command's options that span
// its steps.
type Job struct {
	// Command is the command ("bench", "rados bench", ...); every
	// step's Front.Command is the same.
	Command string      `json:"command"`
	Steps   []step.Step `json:"steps"`
	// Format is how the command prints its results, in its own words
	// ("text" or "json" for bench); empty is the command's default.
	Format string `json:"format,omitempty"`
	// Quiet leaves out the per-second table.
	Quiet bool `json:"quiet,omitempty"`
	// Fio is a fio job's options that span its jobs.
	Fio *FioOptions `json:"fio,omitempty"`
	// S3 is an s3 bench job's options.
	S3 *S3Bench `json:"s3,omitempty"`
	// Disk is a disk job's options.
	Disk *Disk `json:"disk,omitempty"`
	// Notes are what the command line's parse has to tell the user (a
	// deprecated spelling, an option ignored): Run prints them to
	// stderr, one a line, before the job runs, so that a plan's step
	// log has them too.
	Notes []string `json:"notes,omitempty"`
}

// IO is where a job's text goes. Its zero value prints nothing.
type IO struct {
	Stdout, Stderr io.Writer
	// Live, if set, draws a live progress line of each step.
	Live *step.Live
	// Hooks, if set, gives the hooks of step i of the job (its index in
	// Job.Steps), called once for each step that runs. Every command
	// that runs its steps through step.Run or step.RunOn honours them;
	// one that does not (net client) refuses a job run with them.
	Hooks func(i int) step.Hooks
	// HostTicks, if set, follows a job run on many hosts at once host by
	// host (multihost honours it): it gives the subscriber of host's own
	// ticks of step i, and what to call once the step has ended.
	HostTicks func(i int, host string) (tick metrics.Subscriber, ended func())
}

// hooks are step i's hooks, none if the caller set none.
func (out IO) hooks(i int) step.Hooks {
	if out.Hooks == nil {
		return step.Hooks{}
	}
	return out.Hooks(i)
}

// front is a command's way of running and timing its jobs.
type front struct {
	// run runs j, printing to out. It returns a *engine.UsageError for
	// bad input found before any I/O, and step.ErrInterrupted when ctx
	// ended, after saving and printing what was measured.
	run func(ctx context.Context, j Job, out IO) error
	// estimate is how long j runs; with exact false, at least that.
	estimate func(j Job) (d time.Duration, exact bool)
	// unhooked says that run cannot honour IO.Hooks.
	unhooked bool
	// present, if set, is how the command prints step i of j when it
	// runs elsewhere (Present); run prints its own steps the same way.
	present func(j Job, i int, out IO) Presenter
}

var fronts = map[string]front{}

// register makes command's jobs runnable; each command's file registers
// itself, so a build without Ceph has no Ceph commands.
func register(command string, f front) {
	if _, dup := fronts[command]; dup {
		panic("frontend: " + command + " registered twice")
	}
	fronts[command] = f
}

func lookup(command string) (front, error) {
	f, ok := fronts[command]
	if !ok {
		return front{}, engine.Usagef("%q runs no workload", command)
	}
	return f, nil
}

// Run runs j, printing to out, and saves each step's result where the
// step says, or under the first free name after it (PrepareResults and
// result.Begin). Errors in what j asks for, found before any I/O, are
// *engine.UsageError; a run stopped by ctx saves and prints what it
// measured and returns step.ErrInterrupted. Run is safe for concurrent
// use with other jobs.
func Run(ctx context.Context, j Job, out IO) error {
	f, err := lookup(j.Command)
	if err != nil {
		return err
	}
	if f.unhooked && out.Hooks != nil {
		return engine.Usagef("a %s job cannot be followed step by step: its test does not run as a step", j.Command)
	}
	j, done, err := PrepareResults(j)
	if err != nil {
		return err
	}
	defer done()
	out = out.orDiscard()
	for _, n := range j.Notes {
		fmt.Fprintln(out.Stderr, n)
	}
	return f.run(ctx, j, out)
}

// Estimate is how long j runs, and whether exactly (otherwise at least
// that long); zero when unknown.
func Estimate(j Job) (d time.Duration, exact bool) {
	f, err := lookup(j.Command)
	if err != nil || f.estimate == nil {
		return 0, false
	}
	return f.estimate(j)
}

// text is where j's text goes: stdout, or stderr when stdout is for JSON.
func (j Job) text(out IO) io.Writer {
	if j.Format == "json" {
		return out.Stderr
	}
	return out.Stdout
}

func (out IO) orDiscard() IO {
	if out.Stdout == nil {
		out.Stdout = io.Discard
	}
	if out.Stderr == nil {
		out.Stderr = io.Discard
	}
	return out
}

// Commands are the commands whose jobs Run runs, sorted.
func Commands() []string {
	return slices.Sorted(maps.Keys(fronts))
}
