package runner

import (
	"context"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// corrupting stores one write with a byte changed, as a faulty target
// would.
type corrupting struct {
	fakeSession
	writes int
}

func (c *corrupting) Do(ctx context.Context, op *engine.Op) error {
	if err := c.fakeSession.Do(ctx, op); err != nil || op.Kind != engine.Write {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writes++; c.writes == 7 {
		c.data[op.Offset][100] ^= 0xff
	}
	return nil
}

// A write-only workload that verifies its writes reads back each op it
// wrote, after the writes, and checks it: as many reads as writes, sync
// or async, sequential or random, every read passing on a good target and
// the changed block failing on a faulty one.
func TestVerifyWritesReadsBackEveryWrite(t *testing.T) {
	for _, pattern := range []spec.Pattern{spec.Sequential, spec.Random} {
		for _, async := range []bool{false, true} {
			var s engine.Session = &fakeSession{data: map[int64][]byte{}}
			if async {
				s = &fakeAsync{fakeSession{data: map[int64][]byte{}}}
			}
			o := mustRun(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
				w.Pattern, w.ReadPercent, w.TotalOps, w.VerifyWrites = pattern, 0, 300, true
			}))
			reads, _, readErrs := o.Collector.Totals(0)
			writes, _, _ := o.Collector.Totals(1)
			if reads != 300 || writes != 300 || readErrs != 0 || o.StopReason != StopOps {
				t.Errorf("%s, async %v: %d reads (%d failed), %d writes, stopped for %q; want 300 good reads after 300 writes, stopped by the op bound",
					pattern, async, reads, readErrs, writes, o.StopReason)
			}
		}
	}
	bad := &corrupting{fakeSession: fakeSession{data: map[int64][]byte{}}}
	o := mustRun(t, context.Background(), bad, workloadOf(func(w *spec.Workload) {
		w.Pattern, w.ReadPercent, w.TotalOps, w.VerifyWrites = spec.Sequential, 0, 100, true
		w.Workers, w.QueueDepth = 1, 1
	}))
	if reads, _, errs := o.Collector.Totals(0); reads != 99 || errs != 1 || o.Collector.Errors()["verify"] != 1 {
		t.Errorf("one changed block: %d good reads, %d failed (%v); want 99 and 1 verify failure", reads, errs, o.Collector.Errors())
	}
}

// An interrupted write reads nothing back.
func TestVerifyWritesSkipsAnInterruptedRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := mustRun(t, ctx, &fakeSession{data: map[int64][]byte{}}, workloadOf(func(w *spec.Workload) {
		w.ReadPercent, w.TotalOps, w.VerifyWrites = 0, 1000, true
	}))
	if reads, _, _ := o.Collector.Totals(0); reads != 0 || o.StopReason != StopInterrupted {
		t.Errorf("%d reads, stopped for %q; want none, interrupted", reads, o.StopReason)
	}
}
