package runner

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// lateReaper is an async target whose ops each take lat, but whose
// completions its queue hands back only at the next multiple of every
// (plus phase): a queue that completes in bursts, its slots idle from an
// op's completion until the runner reaps it.
type lateReaper struct {
	fakeSession
	clock             Clock
	lat, every, phase time.Duration
}

func (s *lateReaper) NewQueue(depth int) (engine.Queue, error) {
	return &lateQueue{s: s}, nil
}

type lateQueue struct {
	s       *lateReaper
	pending []*engine.Op
}

func (q *lateQueue) Submit(op *engine.Op) error {
	op.Completed = q.s.clock.Now() + q.s.lat
	q.pending = append(q.pending, op)
	return nil
}

func (q *lateQueue) Reap(ctx context.Context, min int, done []*engine.Op) (int, error) {
	now := q.s.clock.Now()
	if min > 0 {
		wake := q.s.phase
		for wake <= now {
			wake += q.s.every
		}
		select {
		case <-time.After(wake - now):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		now = wake
	}
	n := 0
	rest := q.pending[:0]
	for _, op := range q.pending {
		if op.Completed <= now && n < len(done) {
			done[n] = op
			n++
		} else {
			rest = append(rest, op)
		}
	}
	q.pending = rest
	return n, nil
}

func (q *lateQueue) Close() error { return nil }

// seriesMeans runs w on s in simulated time and returns the outcome and
// each interval's mean in flight and length.
func seriesMeans(t *testing.T, clock Clock, s engine.Session, w *spec.Workload) (*Outcome, []metrics.Tick) {
	t.Helper()
	var ticks []metrics.Tick
	o, err := Run(context.Background(), s, w, Options{Seed: 1, Clock: clock,
		Subscribers: []metrics.Subscriber{func(tk metrics.Tick) { ticks = append(ticks, tk) }}})
	if err != nil {
		t.Fatal(err)
	}
	return o, ticks
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// A synchronous target with a fixed latency keeps every slot busy all
// the time: each second's mean in flight, and the run's, is the number
// of slots, exactly.
func TestSyncSlotsAlwaysBusy(t *testing.T) {
	for _, c := range []struct{ workers, depth int }{{1, 1}, {2, 4}} {
		simulated(t, func(t *testing.T, clock Clock) {
			s := &fakeSession{delay: millisecondOps}
			o, ticks := seriesMeans(t, clock, s, workloadOf(func(w *spec.Workload) {
				w.Workers, w.QueueDepth, w.Duration = c.workers, c.depth, spec.Duration(3*time.Second)
			}))
			want := float64(c.workers * c.depth)
			for _, tk := range ticks {
				if tk.Dur > 0 && !near(tk.MeanInFlight, want) {
					t.Errorf("%d×%d: %gs to %gs held %g ops on average, want %g", c.workers, c.depth, tk.T-tk.Dur, tk.T, tk.MeanInFlight, want)
				}
			}
			if !near(o.MeanInFlight, want) {
				t.Errorf("%d×%d: the run held %g ops on average, want %g", c.workers, c.depth, o.MeanInFlight, want)
			}
		})
	}
}

// A queue of 8 whose ops take 1 ms but come back only every 10 ms holds
// its 8 ops 1 ms of every 10: 0.8 on average. The runner learns when an
// op completed only when it reaps it, so an interval that ends between
// the two counts the op until then, and the next gives the time back:
// the run's mean is exact.
func TestAsyncQueueReapedInBursts(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		s := &lateReaper{clock: clock, lat: time.Millisecond, every: 10 * time.Millisecond, phase: 5 * time.Millisecond}
		o, ticks := seriesMeans(t, clock, s, workloadOf(func(w *spec.Workload) {
			w.Workers, w.QueueDepth, w.Duration = 1, 8, spec.Duration(3*time.Second)
		}))
		if len(ticks) != 3 {
			t.Fatalf("%d intervals, want 3", len(ticks))
		}
		// Ops start at 0 and at 5, 15, … ms; the batch started at 995 ms
		// is counted until the tick at 1 s.
		first := (8*1 + 99*8*1 + 8*5) / 1000.0
		if !near(ticks[0].MeanInFlight, first) || !near(ticks[1].MeanInFlight, 0.8) {
			t.Errorf("the first two seconds held %g and %g ops on average, want %g and 0.8", ticks[0].MeanInFlight, ticks[1].MeanInFlight, first)
		}
		// 301 batches of 8 ops of 1 ms, over 3.005 s (the last reaped at
		// 3005 ms).
		if want := 301 * 8 / 3005.0; !near(o.MeanInFlight, want) || o.Elapsed != 3005*time.Millisecond {
			t.Errorf("the run held %g ops on average over %s, want %g over 3.005s", o.MeanInFlight, o.Elapsed, want)
		}
	})
}

// summaryOf is the text summary of o's result.
func summaryOf(t *testing.T, o *Outcome, w *spec.Workload) string {
	t.Helper()
	r, err := o.Result("step", w, result.Host{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	report.Summary(&b, r)
	return b.String()
}

// The summary says so when an unpaced run's queue sat mostly empty, and
// not when the workload's pace kept it so.
func TestSummaryFlagsAStarvedQueueOnly(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		s := &lateReaper{clock: clock, lat: time.Millisecond, every: 10 * time.Millisecond, phase: 5 * time.Millisecond}
		w := workloadOf(func(w *spec.Workload) { w.Workers, w.QueueDepth, w.Duration = 1, 8, spec.Duration(2*time.Second) })
		o, _ := seriesMeans(t, clock, s, w)
		if got := summaryOf(t, o, w); !strings.Contains(got, "queue held 0.8 of its 8 slots on average (10%)") {
			t.Errorf("a starved queue's summary does not say so:\n%s", got)
		}
		s = &lateReaper{clock: clock, lat: time.Millisecond, every: 10 * time.Millisecond, phase: 5 * time.Millisecond}
		w = workloadOf(func(w *spec.Workload) {
			w.Workers, w.QueueDepth, w.Duration, w.RateIOPS = 1, 8, spec.Duration(2*time.Second), 100
		})
		o, _ = seriesMeans(t, clock, s, w)
		if o.MeanInFlight >= 0.9*8 {
			t.Fatalf("a paced run held %g ops on average, its queue nearly full", o.MeanInFlight)
		}
		if got := summaryOf(t, o, w); strings.Contains(got, "queue held") {
			t.Errorf("a paced run's summary calls its queue short:\n%s", got)
		}
	})
}
