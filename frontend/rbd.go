//go:build ceph

package frontend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/peer/cephtext"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

func init() {
	f := front{run: eachStep(rbdBench), estimate: rbdBenchTime, present: presentRBDBench}
	register("rbd bench", f)
	// rbd's older spelling makes an "rbd bench" job; registered, it is
	// known for a command that makes jobs (a plan asks Commands).
	register("rbd bench-write", f)
}

// rbdBench runs st as rbd bench does: its start line, per-second table
// and closing lines, then the summary with latency percentiles.
func rbdBench(ctx context.Context, st step.Step, hooks step.Hooks, out IO) error {
	if st.Front.RBDBench == nil {
		return engine.Usagef("%s: no rbd bench options", st.Name)
	}
	p := rbdPresenter(st, out)
	so := step.Output{Live: out.Live, Hooks: hooks, Opened: func(engine.Session) metrics.Subscriber { return p.Opened() }}
	res, err := step.Run(ctx, st, so)
	if res == nil {
		return err
	}
	// A result that could not be saved where asked is still printed.
	if err := errors.Join(err, p.Done(res, res.Path)); err != nil {
		return err
	}
	if res.Interrupted {
		return step.ErrInterrupted
	}
	return nil
}

func presentRBDBench(j Job, i int, out IO) Presenter {
	if j.Steps[i].Front.RBDBench == nil {
		return benchPresenter(j, i, out)
	}
	return rbdPresenter(j.Steps[i], out)
}

// rbdPresenter prints st as rbd bench does.
func rbdPresenter(st step.Step, out IO) Presenter {
	opts, w := st.Front.RBDBench, st.Workload
	pattern := map[spec.Pattern]string{spec.Sequential: "sequential", spec.Random: "random"}[w.Pattern]
	return Presenter{
		Opened: func() metrics.Subscriber {
			cephtext.RBDStart(out.Stdout, opts.IOType, w.ReadPercent, int64(w.BlockSize), w.QueueDepth, int64(w.TotalBytes), pattern)
			return cephtext.NewRBDProgress(out.Stdout).Tick
		},
		Done: func(res *result.Result, saved string) error {
			cephtext.RBDSummary(out.Stdout, res)
			report.ClusterFields(out.Stdout, res, 0)
			if saved != "" {
				fmt.Fprintf(out.Stdout, "result saved to: %s\n", saved)
			}
			return nil
		},
	}
}

// rbdBenchTime is the steps' --duration: each stops then, or sooner, once
// it has transferred --io-total.
func rbdBenchTime(j Job) (time.Duration, bool) {
	return durations(j), false
}
