package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/io/diskstats"
	"github.com/cephbench/cephbench/internal/peer/fiojob"
	"github.com/cephbench/cephbench/internal/peer/fioreport"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/step"
)

const fioHelp = `Usage: cephbench fio [options] [jobfile ...]

Runs fio's jobs with cephbench's own engines: the same command-line options
(--name=value, -name=value, --name value) and INI job files ([global],
include, ${VAR}, numjobs, stonewall, new_group), and fio's output
(--output-format=normal, json, json+ or terse). An option cephbench cannot
honour is an error naming it, never ignored.

Engines: psync (also sync, vsync, pvsync, pvsync2), libaio, io_uring, null,
rbd (pool=, rbdname=, clientname=) and rados (pool=, clientname=).

cephbench's own options:
  --force         write over a file, device or image cephbench did not create
  --keep          leave the files and images cephbench created
  --results DIR   where cephbench's own JSON results go (default cephbench-results)

Examples:
  cephbench fio --rw=rw --bs=1m --size=10M --numjobs=20 --group_reporting --name=test-rw
  cephbench fio -direct=1 -iodepth=128 -rw=randwrite -ioengine=libaio -bs=4k -size=1G -runtime=60 -time_based -filename=/dev/sdb -name=Rand_Write_Test --force
  cephbench fio write.fio --output-format=json
`

func newFioCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "fio [options] [jobfile ...]",
		Short: "Run fio command lines and job files natively, with fio's output",
		// fio's options are not POSIX flags (-direct=1, bare booleans,
		// job files between them): fiojob reads them all.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, err := fiojob.Parse(args, os.Getenv, os.ReadFile)
			switch {
			case err != nil:
				return usageErr(err)
			case plan.Help:
				fmt.Fprint(env.Stdout, fioHelp)
				return nil
			case plan.Version:
				fmt.Fprintf(env.Stdout, "cephbench-%s\n", result.Version)
				return nil
			case len(plan.Jobs) == 0:
				return usagef("no jobs: give a --name=NAME with its options, or a job file")
			}
			return runFio(cmd.Context(), env, plan)
		},
	}
}

// fioRun is one fio invocation in progress.
type fioRun struct {
	plan    *fiojob.Plan
	results string // the folder of cephbench's own results
	stamp   string // the invocation's time, naming its result files
	live    *step.Live

	mu     sync.Mutex
	header func() // prints fio's header, the first time it is called

	// latest is each job's result so far, for --status-interval: nil
	// before it starts, its figures up to its last second while it runs,
	// its result once done.
	latest []*result.Result
}

// runFio runs the plan's jobs (each stonewall waits for the jobs before
// it, the others start together) and prints fio's output of them. An
// interrupted run still reports what it measured.
func runFio(ctx context.Context, env Env, plan *fiojob.Plan) error {
	out := env.Stdout
	if plan.Output != "" {
		f, err := os.Create(plan.Output)
		if err != nil {
			return usagef("--output: %v", err)
		}
		defer f.Close()
		out = f
	}
	r := &fioRun{
		plan: plan, results: plan.ResultsDir, stamp: time.Now().Format(stampLayout), live: env.live,
		latest: make([]*result.Result, len(plan.Jobs)),
	}
	if r.results == "" {
		r.results = defaultResults
	}
	rep := &fioreport.Report{
		Version: "cephbench-" + result.Version, PID: os.Getpid(),
		GlobalOptions: fioOptions(plan.GlobalOptions),
	}
	// fio's header goes out once the first job's target is open, so that
	// a run refused before any I/O prints its error alone.
	var headerErr error
	r.header = sync.OnceFunc(func() {
		if slices.Contains(plan.OutputFormats, "normal") {
			h := *rep
			h.Groups = r.groups(nil)
			headerErr = h.WriteHeader(out)
		}
	})

	devices, _ := diskstats.DevicesOf(r.filePaths()...) // no block device: no Disk stats, as fio
	var watch *diskstats.Watch
	if len(devices) > 0 {
		watch, _ = diskstats.Start(devices)
	}
	writeAll := func(results []*result.Result) error {
		rep.Time = time.Now()
		rep.Groups = r.groups(results)
		for _, f := range plan.OutputFormats {
			var err error
			switch f {
			case "normal":
				err = rep.WriteNormal(out)
			case "json":
				err = rep.WriteJSON(out)
			case "json+":
				err = rep.WriteJSONPlus(out)
			case "terse":
				err = rep.WriteTerse(out)
			}
			if err != nil {
				return fmt.Errorf("writing the %s output: %w", f, err)
			}
		}
		return nil
	}
	stopStatus := r.printStatus(writeAll)
	results, errs := r.runJobs(ctx)
	stopStatus()
	if watch != nil {
		rep.Disks, _ = watch.Stop()
	}
	if countNonNil(results) > 0 {
		r.header()
		if err := errors.Join(headerErr, writeAll(results)); err != nil {
			return err
		}
	}
	if n := countNonNil(results); n > 0 {
		fmt.Fprintf(env.Stderr, "cephbench: %d results saved in %s\n", n, r.results)
	}
	return jobsError(ctx, errs)
}

// runJobs runs the plan's jobs: each stonewall waits for the jobs before
// it, the others start together. It returns each job's result and error.
func (r *fioRun) runJobs(ctx context.Context) ([]*result.Result, []error) {
	plan := r.plan
	results := make([]*result.Result, len(plan.Jobs))
	errs := make([]error, len(plan.Jobs))
	for from := 0; from < len(plan.Jobs) && ctx.Err() == nil; {
		to := from + 1
		for to < len(plan.Jobs) && !plan.Jobs[to].Stonewall {
			to++
		}
		var wg sync.WaitGroup
		for i := from; i < to; i++ {
			wg.Go(func() {
				results[i], errs[i] = r.runJob(ctx, i)
				r.mu.Lock()
				r.latest[i] = results[i]
				r.mu.Unlock()
			})
		}
		wg.Wait()
		from = to
	}
	return results, errs
}

// jobsError is the run's error from its jobs' errors: the one failure, or
// how many failed, or that it was interrupted.
func jobsError(ctx context.Context, errs []error) error {
	var failed []error
	for _, err := range errs {
		switch {
		case errors.Is(err, step.ErrInterrupted):
		case err != nil:
			failed = append(failed, err)
		}
	}
	switch {
	case len(failed) == 1:
		return failed[0]
	case len(failed) > 1:
		return fmt.Errorf("%d jobs failed: %w", len(failed), errors.Join(failed...))
	case ctx.Err() != nil:
		return errInterrupted
	}
	return nil
}

// runJob runs job i: its start delay, then its workload, whose result it
// saves under the results folder.
func (r *fioRun) runJob(ctx context.Context, i int) (*result.Result, error) {
	j := r.plan.Jobs[i]
	if j.StartDelay > 0 {
		select {
		case <-ctx.Done():
			return nil, step.ErrInterrupted
		case <-time.After(j.StartDelay):
		}
	}
	st := step.Step{
		Name: j.Name, Workload: j.Workload,
		Save: filepath.Join(r.results, fmt.Sprintf("%s-fio-%d-%s.json", r.stamp, i, fileSafe(j.Name))),
	}
	if j.WholeTarget {
		st.Passes = j.Passes()
	}
	if j.RandRepeat {
		// fio's randrepeat=1 (its default): every run draws the same
		// offsets.
		st.Seed = 1
	}
	so := step.Output{Live: r.live, Opened: func(engine.Session) metrics.Subscriber {
		r.header()
		return nil
	}}
	if r.plan.StatusInterval > 0 {
		var last time.Time
		so.SoFar = func(o *runner.Outcome) {
			// A result encodes every histogram: make one only as
			// often as the status is printed, not every second.
			if time.Since(last) < r.plan.StatusInterval/2 {
				return
			}
			last = time.Now()
			// o is valid only now: Result copies it.
			res, err := o.Result(st.Name, &st.Workload, result.ThisHost())
			if err == nil {
				// The log holds every second so far: its subscriber
				// runs before this.
				res.Series, err = result.ReadTickLog(result.TickLogPath(st.Save))
			}
			if err != nil {
				return // the status line misses one second; the run goes on
			}
			r.mu.Lock()
			r.latest[i] = res
			r.mu.Unlock()
		}
	}
	return step.Run(ctx, st, so)
}

// printStatus writes the output of every job so far each
// --status-interval, as fio does, until the returned stop is called.
func (r *fioRun) printStatus(write func([]*result.Result) error) (stop func()) {
	if r.plan.StatusInterval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(r.plan.StatusInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			r.mu.Lock()
			latest := slices.Clone(r.latest)
			r.mu.Unlock()
			if countNonNil(latest) == 0 {
				continue // nothing measured yet
			}
			if write(latest) != nil {
				return // the final output reports the same failure
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// groups builds the report's groups from the plan's jobs and their
// results (nil before the run, or for a job that did not run).
func (r *fioRun) groups(results []*result.Result) []fioreport.Group {
	var groups []fioreport.Group
	for i, j := range r.plan.Jobs {
		if len(groups) == 0 || groups[len(groups)-1].ID != j.Group {
			groups = append(groups, fioreport.Group{ID: j.Group})
		}
		g := &groups[len(groups)-1]
		g.GroupReporting = g.GroupReporting || j.GroupReporting
		fj := fioreport.Job{
			Name: j.Name, Description: j.Description, NumJobs: j.NumJobs,
			RW: j.RW, IOEngine: j.IOEngine, BlockSize: int64(j.Workload.BlockSize), IODepth: j.IODepth,
			PercentileList: j.PercentileList, LatPercentiles: j.LatPercentiles,
			Options: fioOptions(j.Options),
		}
		if results != nil {
			fj.Result = results[i]
		}
		g.Jobs = append(g.Jobs, fj)
	}
	return groups
}

// filePaths are the files and devices the plan's local jobs use, for their
// disks' statistics.
func (r *fioRun) filePaths() []string {
	var paths []string
	for _, j := range r.plan.Jobs {
		if d, err := engine.Describe(j.Workload.Target.Scheme); err == nil && d.LocalDisks {
			paths = append(paths, j.Workload.Target.Location)
		}
	}
	return paths
}

func fioOptions(opts []fiojob.Option) []fioreport.Option {
	out := make([]fioreport.Option, len(opts))
	for i, o := range opts {
		out[i] = fioreport.Option{Name: o.Name, Value: o.Value}
	}
	return out
}

func countNonNil(rs []*result.Result) int {
	n := 0
	for _, r := range rs {
		if r != nil {
			n++
		}
	}
	return n
}

// fileSafe makes a job name usable in a file name.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r < ' ' {
			return '_'
		}
		return r
	}, name)
}
