// Package cli is cephbench's command line. Every process input and output
// goes through Env, so the whole CLI runs in-process in tests. Nothing
// imports cli but the commands under cmd/.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/cmdline"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailure     = 1   // the run could not be done or failed
	ExitUsage       = 2   // bad input, found before any I/O
	ExitInterrupted = 130 // stopped by Ctrl-C; results of what ran are saved
)

// Env is the process environment of one CLI invocation.
type Env struct {
	// Stdin is what the agent reads its jobs from; nil is nothing.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// StdoutTerminal and StderrTerminal say whether each goes to a
	// terminal: a live progress line is drawn only on one.
	StdoutTerminal, StderrTerminal bool
	// Getenv reads the environment (fio's ${VAR}, AWS_ENDPOINT_URL); nil
	// is the process's.
	Getenv func(string) string
	// Dir is the working directory relative paths are taken from; empty
	// is the process's. Paths are resolved when a command line is
	// parsed, so a job holds them as they are meant.
	Dir string
	// live, set by a plan run for the commands it runs, draws the live
	// progress line of their steps.
	live *step.Live
	// parsed, if set, receives the job a command line asks for instead
	// of running it: how a plan reads its steps.
	parsed *frontend.Job
	// hosts are the flags that run a command's job on other hosts.
	hosts *hostFlags
	// metrics are the flags that serve a run's live metrics.
	metrics *metricsFlags
	// watch is how the commands on Ceph targets watch the cluster
	// (--cluster-interval), given to every step a command line runs.
	watch *step.Watch
}

func (env Env) getenv(key string) string {
	if env.Getenv == nil {
		return os.Getenv(key)
	}
	return env.Getenv(key)
}

// path is p taken from the working directory.
func (env Env) path(p string) string {
	if env.Dir == "" || p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(env.Dir, p)
}

// target parses a target as the user names it, a local path taken from
// the working directory.
func (env Env) target(s string) (spec.Target, error) {
	t, err := spec.ParseTarget(s)
	if err != nil {
		return t, usageErr(err)
	}
	return engine.InDir(t, env.Dir), nil
}

// readFile reads a file named from the working directory.
func (env Env) readFile(p string) ([]byte, error) { return os.ReadFile(env.path(p)) }

// run runs the job a command line asked for, printing to env's streams,
// or hands it over when env only parses.
func (env Env) run(ctx context.Context, j frontend.Job) error {
	if stray := env.hosts.stray(); stray != "" && !env.hosts.given() {
		return usagef("%s is for a run on other hosts: give them with --hosts or --hostfile", stray)
	}
	if err := env.watch.Validate(); err != nil {
		return usageErr(err)
	}
	for i := range j.Steps {
		j.Steps[i].Watch = *env.watch
	}
	if env.parsed != nil {
		if env.metrics.listen != "" {
			return usagef("--metrics-listen is for a command run here, not for a plan's step or a job sent elsewhere")
		}
		*env.parsed = j
		return nil
	}
	run, err := env.runner()
	if err != nil {
		return err
	}
	run, done, err := env.metrics.serve(ctx, env.Stderr, run)
	if err != nil {
		return err
	}
	defer done()
	return ranErr(run(ctx, j, frontend.IO{Stdout: env.Stdout, Stderr: env.Stderr, Live: env.live}))
}

// ranErr is the error of a command that ran: bad input found before any
// I/O (exit 2) and an interruption (exit 130) say so themselves; any other
// error is a failure (exit 1).
func ranErr(err error) error {
	var ee *exitError
	if err == nil || engine.IsUsage(err) || errors.Is(err, step.ErrInterrupted) || errors.As(err, &ee) {
		return err
	}
	return &exitError{ExitFailure, err}
}

// exitError carries an exit code up to Main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(err error) error { return &exitError{ExitUsage, err} }

func usagef(format string, args ...any) error { return usageErr(fmt.Errorf(format, args...)) }

// errInterrupted ends a command that was stopped by a signal after saving
// what it measured.
var errInterrupted = &exitError{ExitInterrupted, errors.New("interrupted")}

// Main runs cephbench with args (without the program name) and returns the
// exit code. Canceling ctx is Ctrl-C: the current step stops, its result
// and the finished steps' are saved and reported, and what the run wrote
// is removed.
func Main(ctx context.Context, env Env, args []string) int {
	root := newRoot(env)
	root.SetArgs(cmdline.OneDashFor(root, args))
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitUsage // cobra's own errors are about arguments and flags
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case engine.IsUsage(err):
		code = ExitUsage
	case errors.Is(err, step.ErrInterrupted):
		code = ExitInterrupted
	}
	if code != ExitInterrupted {
		fmt.Fprintf(env.Stderr, "cephbench: %s\n", oneLine(err.Error()))
	}
	return code
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func newRoot(env Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "cephbench",
		Short: "Measure Ceph clusters, disks and networks, one tool for the whole test plan",
		Long: `cephbench runs the tests of a Ceph performance test plan natively and measures
them all the same way: exact latency percentiles, per-second series,
bandwidth and IOPS statistics, and a JSON result for every step.

With no arguments, "cephbench run" runs a short built-in plan on a local
directory; no cluster is needed. "cephbench k8s render|run" runs a
command's job on Kubernetes pods at once (cephbench-k8s, "make k8s").`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       result.Version,
	}
	env.hosts, env.metrics, env.watch = &hostFlags{}, &metricsFlags{}, new(step.DefaultWatch)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr(err) })
	root.AddCommand(newRunCmd(env), newBenchCmd(env), newRadosCmd(env), newRBDCmd(env), newClusterCmd(env), newFioCmd(env))
	root.AddCommand(newSandboxCmd(env))
	root.AddCommand(newS3Cmd(env))
	root.AddCommand(newNetCmd(env), newIperfCmd(env))
	root.AddCommand(newDiskCmd(env))
	root.AddCommand(newPlansCmd(env), newCleanupCmd(env), newCompareCmd(env), newReportCmd(env))
	root.AddCommand(newMergeCmd(env))
	root.AddCommand(newAgentCmd(env))
	return root
}
