package runner

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/spec"
)

// stagingSession serves ops through stagingQueues: depth in flight, the
// rest staged and started (Issued) when an op in flight completes. Every
// op takes exactly opTime from its start, whatever it waited staged.
type stagingSession struct {
	fakeSession
	spare          int
	staged         atomic.Bool // Stage was called
	issued         atomic.Int64
	notIssued      atomic.Int64
	maxActive      atomic.Int64
	maxOutstanding atomic.Int64
}

const opTime = time.Millisecond

type stagingQueue struct {
	s       *stagingSession
	depth   int
	cutoff  time.Duration
	staging bool
	active  []*engine.Op
	staged  []*engine.Op
}

func (s *stagingSession) NewQueue(depth int) (engine.Queue, error) {
	return &stagingQueue{s: s, depth: depth}, nil
}

func raise(v *atomic.Int64, n int64) {
	for cur := v.Load(); n > cur && !v.CompareAndSwap(cur, n); cur = v.Load() {
	}
}

func (q *stagingQueue) Spare() int { return q.s.spare }

func (q *stagingQueue) Stage(cutoff time.Duration) {
	q.s.staged.Store(true)
	q.staging, q.cutoff = true, cutoff
}

func (q *stagingQueue) start(op *engine.Op, at time.Duration) {
	op.Issued = at
	q.active = append(q.active, op)
	q.s.issued.Add(1)
	raise(&q.s.maxActive, int64(len(q.active)))
}

func (q *stagingQueue) Submit(op *engine.Op) error {
	switch {
	case len(q.active) < q.depth:
		q.start(op, engine.Now())
	case q.staging && len(q.staged) < q.s.spare:
		q.staged = append(q.staged, op)
	default:
		return errors.New("queue full")
	}
	raise(&q.s.maxOutstanding, int64(len(q.active)+len(q.staged)))
	return nil
}

// Reap completes every op in flight; each one's place goes to the oldest
// staged op, which starts now, or fails ErrNotIssued past the cutoff.
func (q *stagingQueue) Reap(_ context.Context, _ int, done []*engine.Op) (int, error) {
	time.Sleep(opTime)
	n := 0
	finished := q.active
	q.active = nil
	for _, op := range finished {
		op.Completed = op.Issued + opTime
		done[n] = op
		n++
		if len(q.staged) > 0 {
			next := q.staged[0]
			q.staged = q.staged[1:]
			if now := engine.Now(); now < q.cutoff {
				q.start(next, now)
				continue
			}
			next.Err = engine.ErrNotIssued
			q.s.notIssued.Add(1)
			done[n] = next
			n++
		}
	}
	return n, nil
}

func (q *stagingQueue) Close() error { return nil }

func TestStagingQueueIsFilledAndTimedFromIssue(t *testing.T) {
	s := &stagingSession{spare: 3}
	var maxInFlight atomic.Int64
	w := workloadOf(func(w *spec.Workload) {
		w.Workers, w.QueueDepth, w.Duration = 2, 4, spec.Duration(200*time.Millisecond)
	})
	o, err := Run(context.Background(), s, w, Options{Seed: 1, Interval: 20 * time.Millisecond,
		Subscribers: []metrics.Subscriber{func(tk metrics.Tick) { raise(&maxInFlight, tk.InFlight) }}})
	if err != nil {
		t.Fatal(err)
	}
	if !s.staged.Load() || s.maxOutstanding.Load() != 4+3 {
		t.Errorf("staged %v, at most %d ops outstanding in a queue; want staging and 4+3",
			s.staged.Load(), s.maxOutstanding.Load())
	}
	if s.maxActive.Load() > 4 || maxInFlight.Load() > 2*4 {
		t.Errorf("%d ops in flight in a queue, %d reported in flight; want at most the depth 4 and 2×4",
			s.maxActive.Load(), maxInFlight.Load())
	}
	ops, errs := totalOps(o)
	if errs != 0 || ops != s.issued.Load() {
		t.Errorf("%d ops recorded, %d errors; want the %d started and no errors (unstarted ops count for nothing)",
			ops, errs, s.issued.Load())
	}
	// Only ops that started count in the depths, and never deeper than
	// the queue: staged ops wait outside the engine.
	q := o.Collector.Queue()
	var depths int64
	for _, n := range q.Depth {
		depths += n
	}
	if depths != ops || q.Depth[2] == 0 || q.Depth[3]+q.Depth[4]+q.Depth[5]+q.Depth[6] != 0 {
		t.Errorf("depths %v for %d ops at depth 4", q.Depth, ops)
	}
	if s.notIssued.Load() == 0 || o.Abandoned != 0 {
		t.Errorf("%d ops never started, %d abandoned; want some cut off by the end, none abandoned in a run that drained",
			s.notIssued.Load(), o.Abandoned)
	}
	for k := range o.Kinds {
		h := o.Collector.Histogram(k)
		if lo, hi := time.Duration(h.Min()), time.Duration(h.Max()); h.TotalCount() > 0 && (lo < opTime*9/10 || hi > opTime*11/10) {
			t.Errorf("%s: latency from %v to %v; every op took %v from its start", o.Kinds[k], lo, hi, opTime)
		}
	}
}

func TestPacedRunsDoNotStage(t *testing.T) {
	s := &stagingSession{spare: 3}
	mustRun(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
		w.RateIOPS, w.TotalOps = 2000, 50
	}))
	if s.staged.Load() || s.maxOutstanding.Load() > 2 {
		t.Errorf("staged %v, %d ops outstanding in a queue of depth 2: a paced run must not stage",
			s.staged.Load(), s.maxOutstanding.Load())
	}
}
