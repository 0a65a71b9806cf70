package runner

import (
	"context"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// The runner's own cost per op, through the sync and async paths, on one
// worker: the ceiling of any engine. bench/compare-fio.sh compares the same
// figure, end to end, with fio's null engine.
func BenchmarkRunnerPerOp(b *testing.B) {
	for name, s := range map[string]engine.Session{"sync": &fakeSession{}, "async": &fakeAsync{}} {
		b.Run(name, func(b *testing.B) {
			w := workloadOf(func(w *spec.Workload) {
				w.Workers, w.QueueDepth, w.ReadPercent, w.TotalOps = 1, 1, 100, int64(b.N)
			})
			b.ReportAllocs()
			b.ResetTimer()
			if _, err := Run(context.Background(), s, w, Options{}); err != nil {
				b.Fatal(err)
			}
		})
	}
}
