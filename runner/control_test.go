package runner

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// A run that stops on errors of some kinds ends at the first of them,
// and goes on after the others; either way the first error is kept.
func TestStopOnErrorEndsAtTheFirstFailureOfItsKinds(t *testing.T) {
	failAt50 := func() *fakeSession {
		return &fakeSession{fail: func(n int64) error {
			if n == 50 || n == 60 {
				return syscall.EIO
			}
			return nil
		}}
	}
	for _, c := range []struct {
		reads               int
		stopOn              string
		wantReason          string
		wantOps, wantErrors int64
	}{
		{100, "all", StopError, 50, 1},
		{100, "read", StopError, 50, 1},
		{100, "write,verify", StopOps, 998, 2}, // fio's continue_on_error=read
		{0, "read,verify", StopOps, 998, 2},    // =write
		{0, "write", StopError, 50, 1},
		{100, "", StopOps, 998, 2},
	} {
		o := mustRun(t, context.Background(), failAt50(), workloadOf(func(w *spec.Workload) {
			w.ReadPercent, w.StopOnError, w.TotalOps = c.reads, c.stopOn, 1000
			w.Workers, w.QueueDepth = 1, 1
		}))
		ops, errs := totalOps(o)
		if o.StopReason != c.wantReason || ops != c.wantOps || errs != c.wantErrors || o.FirstError != "EIO" {
			t.Errorf("reads %d%%, stop on %q: stop %q, %d ops, %d errors, first %q; want %q, %d, %d, EIO",
				c.reads, c.stopOn, o.StopReason, ops, errs, o.FirstError, c.wantReason, c.wantOps, c.wantErrors)
		}
	}
}

// Closing Options.Stop ends the run there, measured up to then.
func TestStopEndsTheRun(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		stop := make(chan struct{})
		time.AfterFunc(2*time.Second, func() { close(stop) })
		s := &fakeSession{delay: func(int64) time.Duration { return time.Millisecond }}
		w := workloadOf(func(w *spec.Workload) { w.Duration = spec.Duration(time.Minute) })
		o, err := Run(context.Background(), s, w, Options{Seed: 1, Clock: clock, Stop: stop})
		if err != nil {
			t.Fatal(err)
		}
		if o.StopReason != StopTerminated || o.Elapsed < 2*time.Second || o.Elapsed > 2*time.Second+10*time.Millisecond {
			t.Errorf("stop %q after %v; want terminated after 2s", o.StopReason, o.Elapsed)
		}
	})
}

// A run at a steady 1000 ops/s meets iops:1% over 3 s at its third
// second, after ss_ramp's seconds are left out, and ends there.
func TestSteadyStateEndsTheRun(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		s := &fakeSession{delay: func(int64) time.Duration { return time.Millisecond }}
		w := workloadOf(func(w *spec.Workload) {
			w.Duration, w.Ramp = spec.Duration(time.Minute), spec.Duration(time.Second)
			w.Workers, w.QueueDepth = 1, 1
			w.SteadyState = &spec.SteadyState{Metric: "iops", Limit: 1, Percent: true,
				Window: spec.Duration(3 * time.Second), Ramp: spec.Duration(2 * time.Second)}
		})
		o := mustRunOn(t, context.Background(), s, w, clock)
		ss := o.Steady
		// Samples count from 3 s after the start, the ramp included: the
		// measured seconds ending at 2, 3 and 4.
		if o.StopReason != StopSteady || o.Elapsed.Round(10*time.Millisecond) != 4*time.Second || ss == nil || !ss.Attained {
			t.Fatalf("stop %q after %v, steady state %+v; want steady after 4 s", o.StopReason, o.Elapsed, ss)
		}
		for _, n := range ss.IOPS {
			if n < 990 || n > 1010 {
				t.Errorf("samples %v; want about 1000 each", ss.IOPS)
				break
			}
		}
	})
}

// Think time pauses each worker after every ThinkEvery of its ops, its
// queue drained first; the pauses are measured time.
func TestThinkTime(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		for _, c := range []struct {
			s     engine.Session
			every int64
			want  time.Duration
		}{
			// One op at a time of 1 ms, then 9 ms of thought: 100 ops
			// in 1 s.
			{&fakeSession{delay: func(int64) time.Duration { return time.Millisecond }}, 1, time.Second},
			// Queues completing at once: only the 25 pauses take time.
			{&fakeAsync{}, 4, 25 * 9 * time.Millisecond},
		} {
			w := workloadOf(func(w *spec.Workload) {
				w.TotalOps, w.Workers, w.QueueDepth = 100, 1, 1
				w.ThinkTime, w.ThinkEvery, w.ThinkSpin = spec.Duration(9*time.Millisecond), c.every, 0
			})
			if _, async := c.s.(*fakeAsync); async {
				w.QueueDepth = 4
			}
			o := mustRunOn(t, context.Background(), c.s, w, clock)
			if ops, _ := totalOps(o); ops != 100 || o.Elapsed < c.want-10*time.Millisecond || o.Elapsed > c.want+10*time.Millisecond {
				t.Errorf("%T: %d ops in %v; want 100 in %v", c.s, ops, o.Elapsed, c.want)
			}
		}
	})
}

func TestStopOnErrorAndThinkTimeAreValidated(t *testing.T) {
	for _, mut := range []func(*spec.Workload){
		func(w *spec.Workload) { w.StopOnError = "reads" },
		func(w *spec.Workload) { w.StopOnError = "read,,write" },
		func(w *spec.Workload) {
			w.ThinkTime, w.ThinkSpin = spec.Duration(time.Millisecond), spec.Duration(time.Second)
		},
		func(w *spec.Workload) {
			w.SteadyState = &spec.SteadyState{Metric: "iops", Limit: 1, Window: spec.Duration(time.Second / 2)}
		},
	} {
		w := workloadOf(func(w *spec.Workload) { w.TotalOps = 1; mut(w) })
		if err := w.Validate(); err == nil {
			t.Errorf("%+v accepted", w)
		}
	}
	w := workloadOf(func(w *spec.Workload) { w.TotalOps = 1; w.StopOnError = "verify, write" })
	if err := w.Validate(); err != nil || !w.StopsOnError("sync", false) || w.StopsOnError("read", false) || !w.StopsOnError("read", true) {
		t.Errorf("stop on %q: %v, or the kinds it names are wrong", w.StopOnError, err)
	}
}
