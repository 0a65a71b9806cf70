package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
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

// A write-only workload with a verify backlog of 8 reads back each 8
// blocks it wrote right after them, then the 4 left once the writes end:
// every block read once, sync or async, and a changed block caught
// during the writes, not after.
func TestVerifyBacklogReadsBackAsItGoes(t *testing.T) {
	for _, async := range []bool{false, true} {
		var s engine.Session = &fakeSession{data: map[int64][]byte{}}
		if async {
			s = &fakeAsync{fakeSession{data: map[int64][]byte{}}}
		}
		o, trace := runTraced(t, s, spec.Random)
		reads, rbytes, readErrs := o.Collector.Totals(0)
		writes, wbytes, _ := o.Collector.Totals(1)
		if reads != 100 || writes != 100 || rbytes != wbytes || readErrs != 0 || o.StopReason != StopOps {
			t.Errorf("async %v: %d reads of %d bytes (%d failed), %d writes of %d bytes, stopped for %q; want 100 good reads of what 100 writes wrote, stopped by the op bound",
				async, reads, rbytes, readErrs, writes, wbytes, o.StopReason)
		}
		for i := 0; i+16 <= min(len(trace), 192); i += 16 {
			for j := range 8 {
				w, r := trace[i+j], trace[i+8+j]
				if !strings.HasPrefix(w, "write ") || r != "read "+strings.TrimPrefix(w, "write ") {
					t.Fatalf("async %v: op %d is %q, op %d %q; want each 8 writes read back in order after them", async, i+j, w, i+8+j, r)
				}
			}
		}
	}
	o, trace := runTraced(t, &corrupting{fakeSession: fakeSession{data: map[int64][]byte{}}}, spec.Sequential)
	if reads, _, errs := o.Collector.Totals(0); reads != 99 || errs != 1 || o.Collector.Errors()["verify"] != 1 {
		t.Errorf("one changed block: %d good reads, %d failed (%v); want 99 and 1 verify failure", reads, errs, o.Collector.Errors())
	}
	// The failed read is not traced: ops 8 to 14 are the 7 good reads of
	// the first batch, and the writes go on after it.
	if len(trace) < 16 || trace[14] != "read 28672" || trace[15] != "write 32768" {
		t.Errorf("one changed block: ops %v; want the first batch read back, 7 of 8 good, before the 9th write", trace[:min(16, len(trace))])
	}
}

// runTraced runs a write-only workload of 100 ops with a verify backlog
// of 8 on s, one worker and slot, and returns its outcome and the ops
// that completed well, in order, as "write OFFSET" or "read OFFSET".
func runTraced(t *testing.T, s engine.Session, pattern spec.Pattern) (*Outcome, []string) {
	t.Helper()
	var trace []string
	var mu sync.Mutex
	o, err := Run(context.Background(), s, workloadOf(func(w *spec.Workload) {
		w.Pattern, w.ReadPercent, w.TotalOps, w.VerifyWrites, w.VerifyBacklog = pattern, 0, 100, true, 8
		w.Workers, w.QueueDepth = 1, 1
	}), Options{Seed: 1, Completed: func(c Completion) {
		mu.Lock()
		defer mu.Unlock()
		trace = append(trace, fmt.Sprintf("%s %d", c.Op.Kind, c.Op.Offset))
	}})
	if err != nil {
		t.Fatal(err)
	}
	return o, trace
}
