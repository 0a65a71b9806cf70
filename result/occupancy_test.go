package result

import (
	"testing"

	"github.com/cephbench/cephbench/spec"
)

// A queue that held 20 of its 64 slots is short only when nothing in the
// workload kept it so, and the run ran to its bound.
func TestQueueShortOnlyWhereAFullQueueWasDue(t *testing.T) {
	cases := []struct {
		name   string
		change func(r *Result)
		short  bool
	}{
		{"unpaced to its duration", func(*Result) {}, true},
		{"to its op bound", func(r *Result) { r.StopReason = StopOps }, true},
		{"held 90%", func(r *Result) { r.MeanInFlight = 0.9 * 64 }, false},
		{"paced", func(r *Result) { r.Spec.RateIOPS = 1000 }, false},
		{"reads paced", func(r *Result) { r.Spec.ReadRate.Bytes = 1 << 20 }, false},
		{"think time", func(r *Result) { r.Spec.ThinkTime = spec.Duration(1000) }, false},
		{"byte backlog", func(r *Result) { r.Spec.MaxBacklog = 1 << 20 }, false},
		{"fsync", func(r *Result) { r.Spec.FsyncEvery = 8 }, false},
		{"verify pass", func(r *Result) { r.Spec.VerifyWrites = true }, false},
		{"bounds per worker", func(r *Result) { r.Spec.BoundsPerWorker = true }, false},
		{"interrupted", func(r *Result) { r.StopReason = StopInterrupted }, false},
		{"out of objects", func(r *Result) { r.StopReason = StopExhausted }, false},
		{"saved before occupancy", func(r *Result) { r.Slots, r.MeanInFlight = 0, 0 }, false},
	}
	for _, c := range cases {
		r := &Result{StopReason: StopDuration, MeanInFlight: 20, Slots: 64,
			Spec: spec.Workload{Workers: 4, QueueDepth: 16}}
		c.change(r)
		if held, short := r.QueueShort(); short != c.short || short && held != 20.0/64 {
			t.Errorf("%s: short %v (held %g), want %v", c.name, short, held, c.short)
		}
	}
}
