//go:build failpoint

package runner

import (
	"context"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/failpoint"
	"github.com/cephbench/cephbench/spec"
)

// The op fail point fails exactly the ops it is set for, on sync and
// async sessions alike, and the run counts them as failed ops of their
// errno, the others as done: 100 ops in all.
func TestOpFailPointFailsTheNextNOps(t *testing.T) {
	t.Cleanup(func() { _ = failpoint.Set("") })
	for _, s := range []engine.Session{&fakeSession{}, &fakeAsync{}} {
		if err := failpoint.Set("op=7*error(EIO)"); err != nil {
			t.Fatal(err)
		}
		o := mustRun(t, context.Background(), s, workloadOf(func(w *spec.Workload) { w.TotalOps = 100 }))
		ops, errs := totalOps(o) // done, failed
		if ops != 93 || errs != 7 || o.Collector.Errors()["EIO"] != 7 {
			t.Errorf("%T: %d ops, %d failed (%v); want 93 done and 7 failed with EIO of the 100", s, ops, errs, o.Collector.Errors())
		}
	}
}
