// Package step runs one workload the way every cephbench command runs
// one: open the target, complete the workload from it, record the
// cluster's state around the run, run it through the runner with its ticks
// going to a tick log and to the presentation's subscribers, close the
// session (which removes what it created unless the workload keeps it),
// and save the result.
//
// A Step is a plain value that round-trips through JSON unchanged, so that
// what runs here can be recorded, checked, and run on another host; an
// Output is how this process presents it, and is not part of the step.
package step

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/failpoint"
	"github.com/cephbench/cephbench/internal/io/diskstats"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
)

// Step is one workload to run and where its result goes.
type Step struct {
	// Name names the step in reports and its result.
	Name     string        `json:"name"`
	Workload spec.Workload `json:"workload"`
	// Passes, when set, bounds the workload by that many passes over its
	// target as opened, each rounded down to whole blocks (a fio job
	// without size= on a device or image).
	Passes int64 `json:"passes,omitempty"`
	// Seed makes the random offsets repeat from run to run; zero draws
	// new ones each run.
	Seed uint64 `json:"seed,omitempty"`
	// Save is the JSON result's path, its tick log beside it; empty
	// means not saved.
	Save string `json:"save,omitempty"`
	// Notes are facts its result's reader needs that the workload
	// cannot hold (a front end's options); they head the result's notes.
	Notes []string `json:"notes,omitempty"`
	// Plan, if set, places the step in a plan run; its result carries it.
	Plan *result.PlanStep `json:"plan,omitempty"`
	// Front is the command the step was asked for with, and that
	// command's options beyond the workload.
	Front Front `json:"front"`
	// Watch is how the cluster is watched during the run, for targets
	// on a Ceph cluster; the zero Watch watches nothing.
	Watch Watch `json:"watch,omitzero"`
}

// Output says how this process presents a step while it runs. The zero
// Output prints nothing.
type Output struct {
	Progress io.Writer // the heading and per-second table; nil for none
	Summary  io.Writer // the summary; nil for none
	// Heading, if set, replaces report.Heading's line (s3 bench says what
	// a phase does in its own words).
	Heading string
	// Opened, if set, sees the session before the run starts and returns
	// the per-second table of a front end that prints its own format
	// (rados bench), or nil for none.
	Opened func(engine.Session) metrics.Subscriber
	// SoFar, if set, sees the run's outcome up to each second
	// (runner.Options.SoFar).
	SoFar func(*runner.Outcome)
	// Completed, if set, sees every measured op that succeeded
	// (runner.Options.Completed).
	Completed func(runner.Completion)
	// Live, if set, draws a live progress line.
	Live *Live
	// Stop, if set, ends the run when closed (runner.Options.Stop).
	Stop <-chan struct{}
	Hooks
}

// Hooks let a caller follow a step beyond what it prints: how an agent
// holds the step for a coordinator's start and streams its ticks and
// result. The zero Hooks does nothing.
type Hooks struct {
	// Gate, if set, is called once the session is open and laid out
	// and just before the run starts, so that no measured I/O happens
	// before it returns. An error ends the step there: the session is
	// closed (removing what it created) and the step returns
	// ErrInterrupted if ctx ended, that error otherwise.
	Gate func(ctx context.Context) error
	// Tick, if set, receives every interval of the run, after the tick
	// log and the table (metrics.Subscriber's contract).
	Tick metrics.Subscriber
	// Result, if set, gets the step's result once it is made and saved,
	// an interrupted step's too; it is not called for a step that made
	// none.
	Result func(*result.Result)
	// Cluster, if set, receives each sample of the cluster's watch, as
	// it is taken, after the tick log, from the watch's goroutine (the
	// watch waits for it), never after the run ended.
	Cluster func(cluster.Sample)
}

// Live is a live progress line on a terminal, for a step run as a part of
// something larger (a plan's step).
type Live struct {
	W io.Writer
	// Label starts the line; the step's name follows unless Part, the
	// name of what the step is part of, already starts with it.
	Label, Part string
}

// ErrInterrupted is returned when ctx ended before the step could start;
// a step interrupted once running returns its result instead.
var ErrInterrupted = errors.New("interrupted")

// Run opens the step's target, runs the step on it and closes it. Errors
// in what the step asks for, found before any I/O, are
// *engine.UsageError.
func Run(ctx context.Context, st Step, out Output) (*result.Result, error) {
	if st.Passes == 0 {
		if err := st.Workload.Validate(); err != nil {
			return nil, &engine.UsageError{Err: err}
		}
	}
	sess, err := engine.Open(ctx, &st.Workload)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, fmt.Errorf("%s: %w", st.Name, err)
	}
	closeSess := func() error { return sess.Close(context.WithoutCancel(ctx)) }
	if st.Passes > 0 {
		if err := st.Workload.BoundToPasses(spec.Size(sess.Geometry().Size), st.Passes); err != nil {
			return nil, errors.Join(engine.Usagef("%s: %v", st.Name, err), closeSess())
		}
	}
	return RunOn(ctx, sess, st, out, runner.Options{}, closeSess)
}

// RunOn runs st on sess, an open session, with opts (its seed, ticks and
// SoFar set here), then calls closeSess, if set, before the result is
// made (a session that serves more steps stays open), and saves and
// prints the result. An interrupted step still returns its result.
func RunOn(ctx context.Context, sess engine.Session, st Step, out Output, opts runner.Options, closeSess func() error) (*result.Result, error) {
	if closeSess == nil {
		closeSess = func() error { return nil }
	}
	opts.Seed, opts.SoFar = st.Seed, out.SoFar
	if out.Completed != nil {
		opts.Completed = out.Completed
	}
	if out.Stop != nil {
		opts.Stop = out.Stop
	}
	if opts.Seed == 0 {
		opts.Seed = uint64(time.Now().UnixNano())
	}
	subscribers := out.subscribers(sess, st)
	if out.Live != nil {
		live := out.Live.Line(st)
		subscribers = append(subscribers, live.Tick)
		defer live.Clear()
	}
	if out.Tick != nil {
		subscribers = append(subscribers, out.Tick)
	}

	state := snapshotBefore(sess)
	disks := watchDisks(&st.Workload)
	watch := dialWatch(sess, st.Watch)
	notRun := func(err error) (*result.Result, error) {
		disks.stop()
		watch.stop()
		return nil, errors.Join(fmt.Errorf("%s: %w", st.Name, err), closeSess())
	}
	if watch.quiesceErr != nil {
		return notRun(watch.quiesceErr)
	}
	if out.Gate != nil {
		if err := out.Gate(ctx); err != nil {
			if ctx.Err() != nil {
				err = ErrInterrupted
			}
			return notRun(err)
		}
	}
	// Made after the gate, so that its start is the run's.
	var pending *result.Pending
	if st.Save != "" {
		var err error
		if pending, err = result.Begin(st.Save, st.Provisional(time.Now())); err != nil {
			return notRun(fmt.Errorf("the result: %w", err))
		}
		// First in line: a second is on disk before it is printed.
		opts.Subscribers = append(opts.Subscribers, pending.Tick)
	}
	opts.Subscribers = append(opts.Subscribers, subscribers...)
	watch.start(pending, out.Cluster)
	outcome, runErr := runner.Run(ctx, sess, &st.Workload, opts)
	during := watch.stop()
	state.takeAfter()
	// Clean up even when interrupted: the user's Ctrl-C must not leave
	// our files behind.
	closeErr := closeSess()
	var res *result.Result
	if runErr == nil {
		res, runErr = outcome.Result(st.Name, &st.Workload, result.ThisHost())
	}
	if runErr != nil {
		if pending != nil {
			pending.Discard()
		}
		return nil, fmt.Errorf("%s: %w", st.Name, runErr)
	}
	res.Cluster = state.pair
	if during != nil || watch.quiesce != nil {
		if res.Cluster == nil {
			res.Cluster = &cluster.Pair{}
		}
		res.Cluster.During, res.Cluster.Quiesced = during, watch.quiesced()
	}
	res.Disks = disks.stop()
	res.Plan = st.Plan
	res.Notes = append(append(append([]string{}, st.Notes...), res.Notes...), notes(sess, res, state, watch, closeErr)...)
	var saveErr error
	if pending != nil {
		failpoint.Hit(failpoint.Save)
		if res.Path, saveErr = pending.Finish(res); saveErr != nil {
			saveErr = fmt.Errorf("%s: %w", st.Name, saveErr)
		}
	}
	if out.Result != nil {
		out.Result(res)
	}
	// A result saved in a fallback place is still printed, and where.
	out.Closing(res, res.Path)
	if res.BelowMinRate != nil {
		// The run failed as its workload defines failure; its result
		// still says what it measured until then.
		return res, errors.Join(fmt.Errorf("%s: %w", st.Name, res.BelowMinRate), saveErr)
	}
	return res, saveErr
}

// Provisional is the result st is to make, as known when its run starts
// at start: what a run killed before it saves leaves for result.Load.
func (st Step) Provisional(start time.Time) *result.Result {
	return &result.Result{
		Version: result.Version, Name: st.Name, Spec: st.Workload, Host: result.ThisHost(), Start: start.UTC(),
		Plan: st.Plan, Notes: st.Notes,
	}
}

// Closing prints res's summary and where it was saved (saved; empty for
// not saved) to out.Summary, as Run does after a step; nothing when
// out.Summary is nil.
func (out Output) Closing(res *result.Result, saved string) {
	if out.Summary != nil {
		report.Summary(out.Summary, res)
		if saved != "" {
			fmt.Fprintf(out.Summary, "  result saved to %s\n", saved)
		}
	}
}

// Opening prints st's heading, as Run does when st's target is open, and
// returns its per-second table, if any: to out.Progress, or the heading
// alone to out.Summary. It leaves out.Opened aside.
func (out Output) Opening(st Step) metrics.Subscriber {
	heading := func(w io.Writer) {
		if out.Heading != "" {
			fmt.Fprint(w, out.Heading)
		} else {
			report.Heading(w, st.Name, &st.Workload)
		}
	}
	if out.Progress != nil {
		heading(out.Progress)
		return report.NewProgress(out.Progress).Tick
	}
	if out.Summary != nil {
		heading(out.Summary)
	}
	return nil
}

// subscribers prints the step's heading and returns its per-second table,
// if any.
func (out Output) subscribers(sess engine.Session, st Step) []metrics.Subscriber {
	table := out.Opening(st)
	if out.Opened != nil {
		if tick := out.Opened(sess); tick != nil {
			table = tick
		}
	}
	if table == nil {
		return nil
	}
	return []metrics.Subscriber{table}
}

// Line starts the live line of st, for a command that runs st its own
// way; its Tick subscribes it to the run and Clear erases it after.
func (l *Live) Line(st Step) *report.Live {
	label := l.Label
	if !strings.HasPrefix(l.Part, st.Name) {
		label += " " + st.Name
	}
	return report.NewLive(l.W, label, time.Duration(st.Workload.Duration))
}

// notes are what a reader of the result needs to trust it: the ops that
// failed, the cluster's state that could not be read or that changed,
// buffered I/O in place of O_DIRECT, a failed cleanup.
func notes(sess engine.Session, res *result.Result, state *snapshots, watch *clusterWatch, closeErr error) []string {
	var n []string
	if f := failureNote(res); f != "" {
		n = append(n, f)
	}
	n = append(n, state.notes()...)
	n = append(n, watch.notes()...)
	if df, ok := sess.(engine.BufferedFallback); ok && df.DirectFallback() {
		n = append(n, "the filesystem refused O_DIRECT, so this step used buffered I/O (page cache)")
	}
	if closeErr != nil {
		n = append(n, "cleanup failed: "+closeErr.Error())
	}
	return n
}

// diskWatch samples the block devices under a local target around a run.
type diskWatch struct{ w *diskstats.Watch }

// watchDisks starts sampling the devices under w's target if its engine
// asks for them and the path is on block devices; otherwise its stop
// returns nothing.
func watchDisks(w *spec.Workload) diskWatch {
	if d, err := engine.Describe(w.Target.Scheme); err != nil || !d.LocalDisks {
		return diskWatch{}
	}
	devices, err := diskstats.DevicesOf(w.Target.Location)
	if err != nil || len(devices) == 0 {
		return diskWatch{}
	}
	watch, err := diskstats.Start(devices)
	if err != nil {
		return diskWatch{}
	}
	return diskWatch{watch}
}

func (d diskWatch) stop() []result.DiskUsage {
	if d.w == nil {
		return nil
	}
	usage, err := d.w.Stop()
	if err != nil {
		return nil
	}
	out := make([]result.DiskUsage, 0, len(usage))
	for _, u := range usage {
		out = append(out, result.DiskUsage{Name: u.Name, Util: u.Util, ReadIOs: int64(u.ReadIOs), WriteIOs: int64(u.WriteIOs)})
	}
	return out
}
