package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/cmdline"
	"github.com/cephbench/cephbench/plan"
	"github.com/cephbench/cephbench/plan/planrun"
	"github.com/cephbench/cephbench/spec"
)

// runFlags are the run command's flags.
type runFlags struct {
	target                       string
	duration                     spec.Duration
	format, results, out, resume string
	sets                         []string
	dryRun, quiet                bool
}

// plan checks the flags and prepares the run they ask for: of the quick
// plan, a plan file or built-in plan, or a resumed one.
func (f *runFlags) plan(env Env, cmd *cobra.Command, args []string) (*planrun.Run, error) {
	if f.format != "text" && f.format != "json" {
		return nil, usagef("invalid --format %q (want text or json)", f.format)
	}
	if f.duration <= 0 {
		return nil, usagef("--duration must be positive")
	}
	vars, err := plan.ParseSets(f.sets)
	if err != nil {
		return nil, usageErr(err)
	}
	quick := len(args) == 0 || args[0] == "quick"
	ownFlags := cmd.Flags().Changed("target") || cmd.Flags().Changed("duration")
	switch {
	case f.resume != "" && (len(args) > 0 || f.out != "" || len(f.sets) > 0 || ownFlags):
		return nil, usagef("--resume takes the plan, its variables and its folder from the folder: give no plan, --out, --set, --target or --duration")
	case f.resume != "":
		return planrun.Resume(env.path(f.resume), f.quiet)
	case !quick && ownFlags:
		return nil, usagef("--target and --duration are the quick plan's; set a plan's variables with --set NAME=VALUE")
	case quick && len(f.sets) > 0:
		return nil, usagef("the quick plan has no variables; use --target and --duration")
	case quick:
		return quickPlan(env, f.target, f.duration, f.quiet)
	}
	return planrun.FromFile(env.path(args[0]), vars)
}

func newRunCmd(env Env) *cobra.Command {
	f := runFlags{duration: spec.Duration(10 * time.Second)}
	cmd := &cobra.Command{
		Use:   "run [PLAN.yaml|BUILT-IN] [--set NAME=VALUE]... [--out DIR | --resume DIR] [--dry-run]",
		Short: "Run a test plan: the built-in quick plan by default, a built-in one, or a YAML file",
		Long: `Run a test plan and save every step's result, its text output and a
manifest in one results folder (--out DIR, by default a new timestamped
folder under --results). A plan that fails or is interrupted keeps what
it finished and runs its cleanup; --resume DIR runs the steps it did not
finish (and the steps those need, such as the write a read reads).
--dry-run prints the steps, their command lines and the time they take,
and runs nothing. "cephbench plans" lists the built-in plans and prints
any of them as YAML, the format of a plan file.

With no plan, the built-in "quick" plan runs against a local directory
(./cephbench-data by default, created if needed): 4M object writes, then
sequential and random object reads (like rados bench write/seq/rand), then
4K random writes and reads of a file, each printing a per-second table
and a summary. Only the files the plan created are removed at the end.
Its --target may be rados://POOL (the object steps on a pool),
s3://BUCKET[/PREFIX] (on S3; the bucket is created if missing and removed
only if the plan created it), rbd://POOL/IMAGE (4M sequential and 4K random
writes and reads on the image: an existing image is written over unless
it is in use or holds a filesystem; rbd://POOL/IMAGE?create=true creates
one of 256 MiB and removes it at the end) or cephfs://[FS]/PATH (the file
steps in a CephFS directory).

A plan from a file or a built-in one shows a line per finished step and a
live progress line on a terminal's stderr (not with --quiet); each step's
full text is in its folder's output.txt.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := f.plan(env, cmd, args)
			if err != nil {
				return err
			}
			r.Stdout, r.Stderr, r.JSON = env.Stdout, env.Stderr, f.format == "json"
			r.Parse, r.Command = env.parseJob, env.runCommand
			run, err := env.runner()
			if err != nil {
				return err
			}
			// A quick plan's steps print their text as they run: its
			// live line goes only where it does not mix with them.
			if env.StderrTerminal && !f.quiet && (r.Name != "quick" || !env.StdoutTerminal) {
				r.Live = env.Stderr
			}
			if r.Dir == "" {
				r.Dir = env.path(f.out)
			}
			if r.Dir == "" {
				r.Dir, r.NewDir = stamped(env.path(f.results), r.Name), true
			}
			if f.dryRun {
				return r.DryRun()
			}
			run, done, err := env.metrics.serve(cmd.Context(), env.Stderr, run)
			if err != nil {
				return err
			}
			defer done()
			r.Job = run
			return ranErr(r.Execute(cmd.Context()))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.target, "target", "cephbench-data", "the quick plan's target: a directory, or rados://POOL, rbd://POOL/IMAGE, cephfs://[FS]/PATH, s3://BUCKET[/PREFIX]")
	fl.Var(&f.duration, "duration", "the quick plan's measured time per step: 10s, 1m, ...")
	fl.StringArrayVar(&f.sets, "set", nil, "set a plan variable: NAME=VALUE (repeatable)")
	fl.StringVarP(&f.out, "out", "o", "", "the results folder (default: a new timestamped folder under --results)")
	fl.StringVar(&f.resume, "resume", "", "finish the plan whose results folder this is")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the steps and the time they take; run nothing")
	fl.StringVar(&f.format, "format", "text", "text, or json (only the JSON results on stdout; the rest goes to stderr)")
	resultsFlag(fl, &f.results)
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no per-second tables and no live progress line")
	env.hosts.register(fl)
	env.metrics.register(fl)
	return cmd
}

// quickPlan is the quick plan on target, a local path taken from the
// working directory.
func quickPlan(env Env, target string, dur spec.Duration, quiet bool) (*planrun.Run, error) {
	t, err := env.target(target)
	if err != nil {
		return nil, err
	}
	return planrun.Quick(t.Short(), dur, quiet)
}

// notInPlans are commands a plan cannot run: they do not end, start
// clusters, or run plans themselves.
var notInPlans = map[string]bool{"run": true, "sandbox": true, "net server": true, "plans": true, "iperf": true}

// parseJob parses a plan step's command line, without running anything,
// into the job it runs with its results under the folder results. A
// command that runs no workload (report, compare, cleanup) has its flags
// and arguments checked and gives the zero Job: the plan runs it as a
// command.
func (env Env) parseJob(args []string, results string) (frontend.Job, error) {
	var j frontend.Job
	root := newRoot(Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: env.Getenv, Dir: env.Dir, parsed: &j})
	args = cmdline.OneDashFor(root, args)
	cmd, rest, err := root.Find(args)
	if err != nil {
		return j, err
	}
	path := strings.TrimPrefix(cmd.CommandPath(), "cephbench ")
	if cmd == root || !cmd.Runnable() {
		return j, fmt.Errorf("%q is not a cephbench command", strings.Join(args, " "))
	}
	if notInPlans[path] || notInPlans[strings.Fields(path)[0]] {
		return j, fmt.Errorf("%q cannot run in a plan", path)
	}
	if !slices.Contains(frontend.Commands(), path) {
		if err := cmd.ParseFlags(rest); err != nil {
			return j, err
		}
		return j, cmd.ValidateArgs(cmd.Flags().Args())
	}
	root.SetArgs(append(append([]string{}, args...), "--results", results))
	if err := root.ExecuteContext(context.Background()); err != nil {
		return j, err
	}
	if j.Command == "" { // --help, --version
		return j, fmt.Errorf("%q runs nothing", strings.Join(args, " "))
	}
	return j, nil
}

// ParseJob is the job a command line asks for, parsed as a plan's step is, without running anything.
func ParseJob(env Env, args []string, results string) (frontend.Job, error) {
	j, err := env.parseJob(args, results)
	if err != nil { // on one line, as Main prints it: cobra's suggestions and flags as typed take more
		err = fmt.Errorf("%s", oneLine(err.Error()))
	}
	return j, err
}

// runCommand runs a command line of a plan's cleanup, its text to w.
func (env Env) runCommand(ctx context.Context, w io.Writer, args []string) error {
	var stderr strings.Builder
	if code := Main(ctx, Env{Stdout: w, Stderr: io.MultiWriter(w, &stderr), Getenv: env.Getenv, Dir: env.Dir}, args); code != ExitOK {
		return fmt.Errorf("%s", strings.TrimPrefix(strings.TrimSpace(lastLine(stderr.String())), "cephbench: "))
	}
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
