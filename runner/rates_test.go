package runner

import (
	"context"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// opsOf returns the ops of each kind o measured.
func opsOf(o *Outcome) map[string]int64 {
	out := map[string]int64{}
	for k, name := range o.Kinds {
		out[name], _, _ = o.Collector.Totals(k)
	}
	return out
}

func millisecondOps(int64) time.Duration { return time.Millisecond }

// Reads and writes paced each at its own rate keep each rate, whatever
// the mix draws, on synchronous and asynchronous sessions alike.
func TestRatesPerDirection(t *testing.T) {
	for _, async := range []bool{false, true} {
		simulated(t, func(t *testing.T, clock Clock) {
			var s engine.Session = &fakeSession{delay: millisecondOps}
			if async {
				s = &fakeAsync{fakeSession{delay: millisecondOps}}
			}
			o := mustRunOn(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
				w.ReadPercent = 70
				w.ReadRate.IOPS, w.WriteRate.IOPS = 200, 50
				w.Duration = spec.Duration(2 * time.Second)
			}), clock)
			// Ops are due at n/rate: 400 reads and 100 writes before 2s.
			ops := opsOf(o)
			if ops["read"] < 398 || ops["read"] > 400 || ops["write"] < 98 || ops["write"] > 100 {
				t.Errorf("async %v: %d reads, %d writes in 2s at 200 and 50/s", async, ops["read"], ops["write"])
			}
			if o.Late != 0 || o.Missed != 0 {
				t.Errorf("async %v: %d late, %d missed", async, o.Late, o.Missed)
			}
		})
	}
}

// A direction without a rate is unpaced: it takes the time the paced
// one leaves.
func TestUnpacedDirectionFillsTheGaps(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		o := mustRunOn(t, context.Background(), &fakeSession{delay: millisecondOps}, workloadOf(func(w *spec.Workload) {
			w.Workers, w.QueueDepth = 1, 1
			w.ReadRate.IOPS = 100
			w.Duration = spec.Duration(time.Second)
		}), clock)
		ops := opsOf(o)
		if ops["read"] < 98 || ops["read"] > 100 || ops["write"] < 800 {
			t.Errorf("%d reads at 100/s, %d unpaced writes of 1ms in 1s", ops["read"], ops["write"])
		}
	})
}

// A direction below its minimum rate fails the run once it has settled
// and a cycle has passed; one above it does not.
func TestMinRate(t *testing.T) {
	tenMs := func(int64) time.Duration { return 10 * time.Millisecond }
	simulated(t, func(t *testing.T, clock Clock) {
		o := mustRunOn(t, context.Background(), &fakeSession{delay: tenMs}, workloadOf(func(w *spec.Workload) {
			w.Workers, w.QueueDepth, w.ReadPercent = 1, 1, 100
			w.ReadRate.MinIOPS = 150 // the target does 100/s
			w.RateCycle = spec.Duration(250 * time.Millisecond)
			w.Duration = spec.Duration(5 * time.Second)
		}), clock)
		s := o.BelowMinRate
		if o.StopReason != StopMinRate || s == nil || s.Kind != "read" || s.Unit != "ops" || s.Got < 95 || s.Got > 105 {
			t.Fatalf("stop %q, shortfall %+v; want reads at 100/s below 150", o.StopReason, s)
		}
		if o.Elapsed < 2250*time.Millisecond || o.Elapsed > 2300*time.Millisecond {
			t.Errorf("failed after %v; want 2s to settle and a 250ms cycle", o.Elapsed)
		}
		res, err := o.Result("r", &spec.Workload{}, result.Host{})
		if err != nil || res.BelowMinRate == nil || res.StopReason != StopMinRate {
			t.Errorf("the result does not record the failure: %v", err)
		}
	})
	simulated(t, func(t *testing.T, clock Clock) {
		o := mustRunOn(t, context.Background(), &fakeSession{delay: tenMs}, workloadOf(func(w *spec.Workload) {
			w.Workers, w.QueueDepth = 1, 1
			w.ReadRate.MinIOPS, w.WriteRate.MinBytes = 20, 20*4096
			w.Duration = spec.Duration(3 * time.Second)
		}), clock)
		if o.StopReason != StopDuration || o.BelowMinRate != nil {
			t.Errorf("stop %q, shortfall %+v; want reads and writes at 50/s above 20", o.StopReason, o.BelowMinRate)
		}
	})
}

// Poisson pacing keeps the mean rate.
func TestPoissonPacing(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		o := mustRunOn(t, context.Background(), &fakeSession{delay: millisecondOps}, workloadOf(func(w *spec.Workload) {
			w.WriteRate.IOPS, w.ReadRate.IOPS = 500, 500
			w.RateProcess = "poisson"
			w.Duration = spec.Duration(2 * time.Second)
		}), clock)
		// 1000 of each expected; a Poisson count's sd is about 32.
		for kind, n := range opsOf(o) {
			if n < 880 || n > 1120 {
				t.Errorf("%d %ss in 2s at 500/s", n, kind)
			}
		}
	})
}

// A rate for a direction the workload does not issue paces nothing and
// misses nothing.
func TestRateOfAnotherDirection(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		o := mustRunOn(t, context.Background(), &fakeSession{delay: millisecondOps}, workloadOf(func(w *spec.Workload) {
			w.Workers, w.QueueDepth, w.ReadPercent = 1, 1, 100
			w.WriteRate.IOPS = 10
			w.Duration = spec.Duration(time.Second)
		}), clock)
		if ops := opsOf(o); ops["read"] != 1000 || o.Missed != 0 {
			t.Errorf("%d reads of 1ms in 1s, %d missed; want 1000 unpaced, none missed", ops["read"], o.Missed)
		}
	})
}
