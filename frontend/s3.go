package frontend

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cephbench/cephbench/engine"
	cbs3 "github.com/cephbench/cephbench/engine/s3"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
	"github.com/cephbench/cephbench/workload"
)

func init() { register("s3 bench", front{run: runS3Bench, estimate: phasesOfOneDuration}) }

// S3Bench is what the phases of an s3 bench job share: the objects they
// stand on, the keys they connect with and the run's results folder. The
// phases are the job's steps, each with its step.S3, all on one target
// with one object size, concurrency and duration.
type S3Bench struct {
	// Prepare is how many objects are put, unmeasured, before the first
	// phase, for the phases that get, list or delete to work on.
	Prepare int64 `json:"prepare,omitempty"`
	// Kept says that the phases read the objects an earlier kept write
	// left at the target, and take their size.
	Kept bool `json:"kept,omitempty"`
	// SizeGiven, with Kept, refuses kept objects of another size than the
	// steps' block size instead of taking theirs.
	SizeGiven bool `json:"size_given,omitempty"`
	// Credentials are the keys given on the command line; nil takes them
	// from the environment or the shared credentials file when the
	// session opens. They are never printed or saved in a result, but
	// they are in the Job's JSON: a job handed to another host carries
	// them, so a Job is not written where others can read it.
	Credentials *cbs3.Credentials `json:"credentials,omitempty"`
	// Results is the folder the phases' results are saved in, which the
	// run names at its end.
	Results string `json:"results"`
}

// phasesOfOneDuration is an s3 bench's time: each phase runs its
// duration (a phase that runs out of objects ends sooner).
func phasesOfOneDuration(j Job) (time.Duration, bool) {
	if len(j.Steps) == 0 {
		return 0, false
	}
	return time.Duration(len(j.Steps)) * time.Duration(j.Steps[0].Workload.Duration), true
}

// runS3Bench opens the target once, puts the objects the phases need,
// runs the phases in turn, then closes the session, which removes what
// the run wrote unless the phases keep it, and prints the table of the
// phases and where their results are.
func runS3Bench(ctx context.Context, j Job, out IO) error {
	if j.S3 == nil || len(j.Steps) == 0 || slices.ContainsFunc(j.Steps, func(st step.Step) bool { return st.Front.S3 == nil }) {
		return engine.Usagef("an s3 bench job needs its options and a phase in each step")
	}
	var creds cbs3.Credentials
	if j.S3.Credentials != nil {
		creds = *j.S3.Credentials
	}
	steps := slices.Clone(j.Steps)
	if j.S3.Kept {
		if err := takeKeptSize(ctx, steps, creds, j.S3.SizeGiven); err != nil {
			return err
		}
	}
	first := steps[0].Workload
	open := spec.Workload{
		Target: first.Target, Pattern: spec.Random, BlockSize: first.BlockSize, Workers: first.Workers, QueueDepth: 1,
		Duration: first.Duration, Keep: first.Keep,
	}
	if j.S3.Kept {
		open.ReadPercent = 100 // the kept objects, which Geometry counts
	}
	sess, err := cbs3.OpenWith(ctx, &open, creds)
	if err != nil {
		if ctx.Err() != nil {
			return step.ErrInterrupted
		}
		return err
	}
	b := &s3Bencher{out: out, quiet: j.Quiet, sess: sess, objs: workload.NewObjects(sess.Geometry().ObjectCount), name: s3Name(first.Target)}
	runErr := b.run(ctx, steps, j.S3.Prepare)
	if err := sess.Close(context.WithoutCancel(ctx)); err != nil {
		err = fmt.Errorf("cleaning up %s: %w", b.name, err)
		if runErr != nil {
			fmt.Fprintf(out.Stderr, "cephbench: %s\n", oneLine(err.Error()))
		} else {
			runErr = err
		}
	}
	if len(b.done) > 1 {
		fmt.Fprintln(out.Stdout)
		report.Table(out.Stdout, b.done)
	}
	if len(b.done) > 0 {
		fmt.Fprintf(out.Stdout, "\nresults: %s\n", j.S3.Results)
	}
	return runErr
}

// takeKeptSize reads the record of the kept objects the steps read and
// gives the steps their size, or, with sizeGiven, refuses objects of
// another size than theirs.
func takeKeptSize(ctx context.Context, steps []step.Step, creds cbs3.Credentials, sizeGiven bool) error {
	w := steps[0].Workload
	m, err := cbs3.LastWrite(ctx, w.Target.Location, creds)
	if err != nil {
		return err
	}
	if sizeGiven && int64(w.BlockSize) != m.ObjectSize {
		t, _ := cbs3.ParseTarget(w.Target.Location) // LastWrite parsed it
		return engine.Usagef("the objects kept at %s are %s, not --obj-size %s", t, spec.Size(m.ObjectSize), w.BlockSize)
	}
	for i := range steps {
		steps[i].Workload.BlockSize = spec.Size(m.ObjectSize)
	}
	return nil
}

// s3Name is the target as the user wrote it, with the endpoint.
func s3Name(target spec.Target) string {
	t, _ := cbs3.ParseTarget(target.Location) // the command line's, parsed
	return t.String() + " at " + t.Endpoint
}

// s3Bencher runs the phases of one s3 bench on one session.
type s3Bencher struct {
	out   IO
	quiet bool
	sess  *cbs3.Session
	objs  *workload.Objects // what the phases get, stat and delete
	name  string
	done  []*result.Result
}

// run puts prepare objects, then runs the phases in turn until one fails
// or is interrupted.
func (b *s3Bencher) run(ctx context.Context, phases []step.Step, prepare int64) error {
	if prepare > 0 {
		if err := b.prepare(ctx, prepare, &phases[0].Workload); err != nil {
			return err
		}
	}
	for i, p := range phases {
		res, err := b.phase(ctx, p, b.out.hooks(i))
		if err != nil {
			return err
		}
		b.done = append(b.done, res)
		if res.Interrupted {
			return step.ErrInterrupted
		}
	}
	return nil
}

// prepare puts n new objects of w's size, as many at once as w's
// workers, unmeasured: they are the ground the phases stand on, not a
// phase.
func (b *s3Bencher) prepare(ctx context.Context, n int64, w *spec.Workload) error {
	fmt.Fprintf(b.out.Stdout, "putting %d objects of %s in %s (not measured)\n", n, w.BlockSize, b.name)
	start := time.Now()
	err := b.objs.Put(ctx, b.sess, n, int(w.BlockSize), w.Workers)
	if ctx.Err() != nil {
		return step.ErrInterrupted
	}
	if err != nil {
		return fmt.Errorf("putting the run's objects: %w", err)
	}
	fmt.Fprintf(b.out.Stdout, "put %d objects in %.1fs\n\n", n, time.Since(start).Seconds())
	return nil
}

// heading says what phase p does, as report.Heading does for a step.
func (b *s3Bencher) heading(p step.Step) string {
	w := p.Workload
	size := w.BlockSize.String()
	what := map[string]string{
		"put":    "put new " + size + " objects",
		"get":    fmt.Sprintf("get %s objects at random, of %d", size, b.objs.Count()),
		"list":   fmt.Sprintf("list up to %d keys a request, of %d", cbs3.ListPage, b.objs.Count()),
		"delete": fmt.Sprintf("delete %d %s objects", b.objs.Count(), size),
		"mixed":  fmt.Sprintf("%s on %d %s objects", w.Mix.Drawn(), b.objs.Count(), size),
	}[p.Front.S3.Phase]
	return fmt.Sprintf("== %s: %s in %s, %d concurrent, up to %s\n", p.Name, what, b.name, w.Workers, w.Duration)
}

// phase runs phase p through the runner for its duration, or until it
// has nothing left to do, printing a row a second unless quiet, then
// saves and prints its result. Its gate opens once the session and the
// phase's objects are there: every phase runs on the one session, each
// taking the gate of its own.
func (b *s3Bencher) phase(ctx context.Context, p step.Step, hooks step.Hooks) (*result.Result, error) {
	switch p.Front.S3.Phase {
	case "put", "mixed": // bounded by the command line's objects, if at all
	default:
		p.Workload.Objects = b.objs.Count()
	}
	out := step.Output{Summary: b.out.Stdout, Heading: b.heading(p), Live: b.out.Live, Hooks: hooks}
	if !b.quiet {
		out.Progress = b.out.Stdout
	}
	res, err := step.RunOn(ctx, b.sess, p, out, runner.Options{Objects: b.objs}, nil)
	if err == nil {
		fmt.Fprintln(b.out.Stdout)
	}
	return res, err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
