package frontend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/io/diskstats"
	"github.com/cephbench/cephbench/internal/peer/fiolog"
	"github.com/cephbench/cephbench/internal/peer/fioreport"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

func init() { register("fio", front{run: runFio, estimate: fioEstimate}) }

// FioOptions are a fio invocation's options that span its jobs; each
// job's own are its step's Front.Fio.
type FioOptions struct {
	// OutputFormats are --output-format's: normal, json, json+ and
	// terse, each at most once, printed in this order.
	OutputFormats []string `json:"output_formats"`
	// Output is --output's file, created when the job runs; "" is
	// standard output.
	Output string `json:"output,omitempty"`
	// StatusInterval is --status-interval: print the output of the run
	// so far this often; zero prints it only at the end.
	StatusInterval spec.Duration `json:"status_interval,omitempty"`
	// GlobalOptions are the options every job was given, as written, for
	// fio's JSON "global options".
	GlobalOptions []step.FioOption `json:"global_options,omitempty"`
	// Results is the folder the steps save their results in, which the
	// run names when it ends.
	Results string `json:"results"`
}

// fioRun is one fio job in progress.
type fioRun struct {
	job   Job
	opts  FioOptions
	live  *step.Live
	hooks func(i int) step.Hooks

	mu     sync.Mutex
	header func() // prints fio's header, the first time it is called

	// latest is each step's result so far, for --status-interval: nil
	// before it starts, its figures up to its last second while it runs,
	// its result once done.
	latest []*result.Result
	// clones are each step's clones' own results, for fio's sections per
	// clone; nil for a step that has none.
	clones [][]*result.Result
}

// runFio runs the job's steps (each stonewall waits for the steps before
// it, the others start together) and prints fio's output of them. An
// interrupted run still reports what it measured.
func runFio(ctx context.Context, j Job, out IO) error {
	if j.Fio == nil {
		return engine.Usagef("fio: the job has no fio options")
	}
	for _, st := range j.Steps {
		if st.Front.Fio == nil {
			return engine.Usagef("fio: job %q has no fio options", st.Name)
		}
	}
	w, closeOutput, err := fioOutput(j, out.Stdout)
	if err != nil {
		return err
	}
	defer closeOutput()
	r := &fioRun{job: j, opts: *j.Fio, live: out.Live, hooks: out.hooks, latest: make([]*result.Result, len(j.Steps)), clones: make([][]*result.Result, len(j.Steps))}
	rep := r.report()
	// fio's header goes out once the first job's target is open, so that
	// a run refused before any I/O prints its error alone.
	var headerErr error
	r.header = sync.OnceFunc(func() {
		if slices.Contains(r.opts.OutputFormats, "normal") {
			h := *rep
			h.Groups = r.groups(nil)
			headerErr = h.WriteHeader(w)
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
		return r.write(w, rep)
	}
	stopStatus := r.printStatus(writeAll)
	results, errs := r.runJobs(ctx)
	stopStatus()
	if watch != nil {
		rep.Disks, _ = watch.Stop()
	}
	if n := countNonNil(results); n > 0 {
		r.header()
		if err := errors.Join(headerErr, writeAll(results)); err != nil {
			return err
		}
		for i, res := range results {
			if res != nil {
				report.ClusterLines(out.Stderr, res, "cephbench: "+res.Name+": ")
				if line := belowMinLine(res, r.job.Steps[i].Front.Fio.NumJobs); line != "" {
					fmt.Fprintln(out.Stderr, line)
				}
			}
		}
		fmt.Fprintf(out.Stderr, "cephbench: %d results saved in %s\n", n, r.opts.Results)
	}
	return jobsError(ctx, errs, results)
}

// fioOutput is where j's fio output goes: its --output file, created
// now, or stdout.
func fioOutput(j Job, stdout io.Writer) (w io.Writer, closeIt func(), err error) {
	if j.Fio.Output == "" {
		return stdout, func() {}, nil
	}
	f, err := os.Create(j.Fio.Output)
	if err != nil {
		return nil, nil, engine.Usagef("--output: %v", err)
	}
	return f, func() { f.Close() }, nil
}

// report is the report of the job, before any result.
func (r *fioRun) report() *fioreport.Report {
	return &fioreport.Report{
		Version: "cephbench-" + result.Version, PID: os.Getpid(),
		GlobalOptions: fioOptions(r.opts.GlobalOptions),
	}
}

// WriteFio prints fio's output of fio job j from results measured
// elsewhere (on other hosts, merged), one per step of j, nil for a step
// that did not run: in j's output formats, to j's --output file or to
// stdout. It makes no I/O but that output.
func WriteFio(stdout io.Writer, j Job, results []*result.Result) error {
	if j.Fio == nil || len(results) != len(j.Steps) {
		return engine.Usagef("fio: %d results for a job of %d steps", len(results), len(j.Steps))
	}
	w, closeOutput, err := fioOutput(j, stdout)
	if err != nil {
		return err
	}
	defer closeOutput()
	r := &fioRun{job: j, opts: *j.Fio}
	rep := r.report()
	rep.Time = time.Now()
	if slices.Contains(r.opts.OutputFormats, "normal") {
		h := *rep
		h.Groups = r.groups(nil)
		if err := h.WriteHeader(w); err != nil {
			return err
		}
	}
	rep.Groups = r.groups(results)
	return r.write(w, rep)
}

// write prints rep in each of the output formats, in order.
func (r *fioRun) write(w io.Writer, rep *fioreport.Report) error {
	for _, f := range r.opts.OutputFormats {
		var err error
		switch f {
		case "normal":
			err = rep.WriteNormal(w)
		case "json":
			err = rep.WriteJSON(w)
		case "json+":
			err = rep.WriteJSONPlus(w)
		case "terse":
			err = rep.WriteTerse(w)
		}
		if err != nil {
			return fmt.Errorf("writing the %s output: %w", f, err)
		}
	}
	return nil
}

// runJobs runs the job's steps: each stonewall waits for the steps
// before it, the others start together. It returns each step's result
// and error.
func (r *fioRun) runJobs(ctx context.Context) ([]*result.Result, []error) {
	steps := r.job.Steps
	results := make([]*result.Result, len(steps))
	errs := make([]error, len(steps))
	exits := newFioExits(steps)
	for from := 0; from < len(steps) && ctx.Err() == nil && !exits.stopped(); {
		to := from + 1
		for to < len(steps) && !steps[to].Front.Fio.Stonewall {
			to++
		}
		var wg sync.WaitGroup
		for i := from; i < to; i++ {
			wg.Go(func() {
				results[i], errs[i] = r.runJob(ctx, i, exits.stop(i))
				r.mu.Lock()
				r.latest[i] = results[i]
				r.mu.Unlock()
				exits.ended(i, from, to, results[i], errs[i])
			})
		}
		wg.Wait()
		from = to
	}
	return results, errs
}

// jobsError is the run's error from its jobs' errors and results: the
// one failure, or how many failed, or that it was interrupted. A job
// that ended at a failed op failed too, as in fio, which then exits 1.
func jobsError(ctx context.Context, errs []error, results []*result.Result) error {
	var failed []error
	for i, err := range errs {
		switch {
		case errors.Is(err, step.ErrInterrupted):
		case err != nil:
			failed = append(failed, err)
		case results[i] != nil && results[i].StopReason == result.StopError:
			failed = append(failed, fmt.Errorf("%s: ended at its first failed op (%s), as continue_on_error says", results[i].Name, results[i].FirstError))
		}
	}
	switch {
	case len(failed) == 1:
		return failed[0]
	case len(failed) > 1:
		return fmt.Errorf("%d jobs failed: %w", len(failed), errors.Join(failed...))
	case ctx.Err() != nil:
		return step.ErrInterrupted
	}
	return nil
}

// runJob runs step i: its start delay, then its workload, whose result
// it saves where the step says, until stop is closed. A job stopped in
// its start delay does not run: no result and no error.
func (r *fioRun) runJob(ctx context.Context, i int, stop <-chan struct{}) (*result.Result, error) {
	st := r.job.Steps[i]
	if d := st.Front.Fio.StartDelay.D(); d > 0 {
		select {
		case <-ctx.Done():
			return nil, step.ErrInterrupted
		case <-stop:
			return nil, nil
		case <-time.After(d):
		}
	}
	// The jobs between stonewalls run at once, so their gates are
	// called concurrently, each from its job's goroutine once its target
	// is open (and its start delay over): a follower sees one gate per
	// job, in the order they open, not one for the group.
	var series []metrics.Second // what the status lines need of the run so far
	so := step.Output{Live: r.live, Hooks: r.hooks(i), Stop: stop, Opened: func(engine.Session) metrics.Subscriber {
		r.header()
		if r.opts.StatusInterval <= 0 {
			return nil
		}
		return func(t metrics.Tick) {
			t.Kinds = maps.Clone(t.Kinds)
			series = append(series, t.Second)
		}
	}}
	if interval := r.opts.StatusInterval.D(); interval > 0 {
		var last time.Time
		so.SoFar = func(o *runner.Outcome) {
			// A result encodes every histogram: make one only as
			// often as the status is printed, not every second.
			if time.Since(last) < interval/2 {
				return
			}
			last = time.Now()
			// o is valid only now: Result copies it.
			res, err := o.Result(st.Name, &st.Workload, result.ThisHost())
			if err != nil {
				return // the status line misses one second; the run goes on
			}
			// Every second so far: its subscriber runs before this.
			res.Series = slices.Clone(series)
			r.mu.Lock()
			r.latest[i] = res
			r.mu.Unlock()
		}
	}
	finish, err := r.perOp(i, &so)
	if err != nil {
		return nil, err
	}
	res, err := step.Run(ctx, st, so)
	return res, errors.Join(err, finish(res))
}

// perOp sets so to follow step i's ops as they complete, when the job
// writes fio's logs or prints its clones apart, and returns what ends
// that once the step has run: the logs closed (removed when res is nil,
// as a job refused before any I/O leaves none), the clones' figures kept.
func (r *fioRun) perOp(i int, so *step.Output) (finish func(res *result.Result) error, err error) {
	st := r.job.Steps[i]
	logs, err := r.openLogs(i)
	if err != nil {
		return nil, err
	}
	var clones *cloneFigures
	if f := st.Front.Fio; !f.GroupReporting && f.NumJobs > 1 && st.Workload.Workers == f.NumJobs {
		clones = newCloneFigures(f.NumJobs)
	}
	if logs == nil && clones == nil {
		return func(*result.Result) error { return nil }, nil
	}
	so.Completed = func(c runner.Completion) {
		k := c.Op.Kind
		if k != engine.Read && k != engine.Write {
			return
		}
		size := int64(len(c.Op.Buf))
		if logs != nil {
			logs.Add(fiolog.Sample{Clone: c.Worker, Write: k == engine.Write, Offset: c.Op.Offset, Size: size, Start: c.Start, End: c.End})
		}
		if clones != nil {
			clones.add(c.Worker, k == engine.Write, size, c.End-c.Start, c.End)
		}
	}
	return func(res *result.Result) error {
		if res == nil {
			if logs != nil {
				logs.Remove()
			}
			return nil
		}
		var errs []error
		if logs != nil {
			if err := logs.Close(time.Duration(res.ElapsedSeconds * float64(time.Second))); err != nil {
				errs = append(errs, fmt.Errorf("%s: the log files: %w", st.Name, err))
			}
		}
		if clones != nil {
			perClone, err := clones.results(res)
			errs = append(errs, err)
			r.mu.Lock()
			r.clones[i] = perClone
			r.mu.Unlock()
		}
		return errors.Join(errs...)
	}, nil
}

// openLogs creates step i's fio log files, nil if it writes none. fio
// numbers its clones' logs by thread, counting the clones of the jobs
// before.
func (r *fioRun) openLogs(i int) (*fiolog.Logs, error) {
	f := r.job.Steps[i].Front.Fio
	if f.Logs == nil {
		return nil, nil
	}
	first := 1
	for _, st := range r.job.Steps[:i] {
		first += max(st.Front.Fio.NumJobs, 1)
	}
	logs, err := fiolog.Open(*f.Logs, first, max(r.job.Steps[i].Workload.Workers, 1))
	if err != nil {
		return nil, engine.Usagef("%s: the log files: %v", r.job.Steps[i].Name, err)
	}
	return logs, nil
}

// printStatus writes the output of every job so far each
// --status-interval, as fio does, until the returned stop is called.
func (r *fioRun) printStatus(write func([]*result.Result) error) (stop func()) {
	interval := r.opts.StatusInterval.D()
	if interval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
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

// groups builds the report's groups from the job's steps and their
// results (nil before the run, or for a step that did not run).
func (r *fioRun) groups(results []*result.Result) []fioreport.Group {
	var groups []fioreport.Group
	for i, st := range r.job.Steps {
		f := st.Front.Fio
		if len(groups) == 0 || groups[len(groups)-1].ID != f.Group {
			groups = append(groups, fioreport.Group{ID: f.Group})
		}
		g := &groups[len(groups)-1]
		g.GroupReporting = g.GroupReporting || f.GroupReporting
		fj := fioreport.Job{
			Name: st.Name, Description: f.Description, NumJobs: f.NumJobs,
			RW: f.RW, IOEngine: f.IOEngine, BlockSize: int64(st.Workload.BlockSize), BlockSizes: st.Workload.BlockSizes, IODepth: f.IODepth,
			PercentileList: f.PercentileList, LatPercentiles: f.LatPercentiles,
			Options: fioOptions(f.Options), ContinueOnError: f.ContinueOnError != "",
		}
		if results != nil {
			fj.Result = results[i]
			if i < len(r.clones) && fj.Result != nil {
				r.mu.Lock()
				fj.Clones = r.clones[i]
				r.mu.Unlock()
			}
			if res := results[i]; res != nil && res.BelowMinRate != nil {
				// fio fails the job with EIO from check_min_rate.
				fj.Err, fj.ErrText = int(syscall.EIO), "func=check_min_rate, error=Input/output error"
			}
			if res := results[i]; res != nil && res.Errors["verify"] > 0 {
				fj.Err = int(unix.EILSEQ) // fio's error for a block that fails verification
			}
		}
		g.Jobs = append(g.Jobs, fj)
	}
	return groups
}

// filePaths are the files and devices the job's local steps use, for
// their disks' statistics.
func (r *fioRun) filePaths() []string {
	var paths []string
	for _, st := range r.job.Steps {
		if d, err := engine.Describe(st.Workload.Target.Scheme); err == nil && d.LocalDisks {
			paths = append(paths, st.Workload.Target.Location)
		}
	}
	return paths
}

// fioEstimate is a fio job's time: steps between stonewalls run
// together, so each stretch takes its longest step, start delay and ramp
// included.
func fioEstimate(j Job) (time.Duration, bool) {
	var total, stretch time.Duration
	for i, st := range j.Steps {
		var delay time.Duration
		if f := st.Front.Fio; f != nil {
			if i > 0 && f.Stonewall {
				total += stretch
				stretch = 0
			}
			delay = f.StartDelay.D()
		}
		stretch = max(stretch, time.Duration(st.Workload.Duration+st.Workload.Ramp)+delay)
	}
	return total + stretch, true
}

func fioOptions(opts []step.FioOption) []fioreport.Option {
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

// belowMinLine is the line fio prints when a job fails its minimum rate,
// in one clone's figures (fio checks each clone), or "".
func belowMinLine(res *result.Result, clones int) string {
	s := res.BelowMinRate
	if s == nil {
		return ""
	}
	n := float64(max(clones, 1))
	if s.Unit == "bytes" {
		return fmt.Sprintf("%s: rate_min=%.0fB/s not met, got %.0fB/s", res.Name, s.Min/n, s.Got/n)
	}
	return fmt.Sprintf("%s: rate_iops_min=%.0f not met, got %.0f IOPS", res.Name, s.Min/n, s.Got/n)
}
