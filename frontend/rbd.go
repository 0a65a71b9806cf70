//go:build ceph

package frontend

import (
	"context"
	"fmt"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/peer/cephtext"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

func init() {
	f := front{run: eachStep(rbdBench), estimate: rbdBenchTime}
	register("rbd bench", f)
	// rbd's older spelling makes an "rbd bench" job; registered, it is
	// known for a command that makes jobs (a plan asks Commands).
	register("rbd bench-write", f)
}

// rbdBench runs st as rbd bench does: its start line, per-second table
// and closing lines, then the summary with latency percentiles.
func rbdBench(ctx context.Context, st step.Step, hooks step.Hooks, out IO) error {
	opts := st.Front.RBDBench
	if opts == nil {
		return engine.Usagef("%s: no rbd bench options", st.Name)
	}
	w := st.Workload
	pattern := map[spec.Pattern]string{spec.Sequential: "sequential", spec.Random: "random"}[w.Pattern]
	so := step.Output{Live: out.Live, Hooks: hooks, Opened: func(engine.Session) metrics.Subscriber {
		cephtext.RBDStart(out.Stdout, opts.IOType, w.ReadPercent, int64(w.BlockSize), w.QueueDepth, int64(w.TotalBytes), pattern)
		return cephtext.NewRBDProgress(out.Stdout).Tick
	}}
	res, err := step.Run(ctx, st, so)
	if err != nil {
		return err
	}
	cephtext.RBDSummary(out.Stdout, res)
	fmt.Fprintf(out.Stdout, "result saved to: %s\n", st.Save)
	if res.Interrupted {
		return step.ErrInterrupted
	}
	return nil
}

// rbdBenchTime is the steps' --duration: each stops then, or sooner, once
// it has transferred --io-total.
func rbdBenchTime(j Job) (time.Duration, bool) {
	return durations(j), false
}
