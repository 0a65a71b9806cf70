package runner

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/spec"
)

// bytesSession counts the bytes of the ops in flight across all its slots
// and queues (an async op is in flight from Submit until Reap hands it
// back) and the most it saw when an op started; each op takes delay, on
// clock (nil: engine.Now).
type bytesSession struct {
	delay    time.Duration
	clock    Clock
	inFlight atomic.Int64
	atStart  atomic.Int64 // the most bytes in flight when an op started
	most     atomic.Int64 // the most bytes in flight, the new op's included
	lengths  sync.Map     // op length -> true
	sent     atomic.Int64
}

func (b *bytesSession) Geometry() engine.Geometry {
	return engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 1 << 30}
}

func (b *bytesSession) now() time.Duration {
	if b.clock == nil {
		return engine.Now()
	}
	return b.clock.Now()
}

func (b *bytesSession) start(op *engine.Op) {
	n := int64(len(op.Buf))
	raise(&b.atStart, b.inFlight.Load())
	raise(&b.most, b.inFlight.Add(n))
	b.lengths.Store(n, true)
	b.sent.Add(n)
}

func (b *bytesSession) Do(ctx context.Context, op *engine.Op) error {
	b.start(op)
	defer b.inFlight.Add(-int64(len(op.Buf)))
	select {
	case <-time.After(b.delay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *bytesSession) Close(context.Context) error { return nil }

// bytesAsync serves the same ops through queues whose ops complete delay
// after they were submitted.
type bytesAsync struct{ bytesSession }

type bytesQueue struct {
	s       *bytesAsync
	pending []*engine.Op
}

func (b *bytesAsync) NewQueue(int) (engine.Queue, error) { return &bytesQueue{s: b}, nil }

func (q *bytesQueue) Submit(op *engine.Op) error {
	q.s.start(op)
	op.Completed = q.s.now() + q.s.delay
	q.pending = append(q.pending, op)
	return nil
}

func (q *bytesQueue) Reap(ctx context.Context, least int, done []*engine.Op) (int, error) {
	n := 0
	for {
		now := q.s.now()
		for i := 0; i < len(q.pending) && n < len(done); {
			if op := q.pending[i]; op.Completed <= now {
				op.Err = nil
				done[n] = op
				n++
				q.s.inFlight.Add(-int64(len(op.Buf)))
				q.pending = append(q.pending[:i], q.pending[i+1:]...)
				continue
			}
			i++
		}
		if n >= least || ctx.Err() != nil {
			return n, ctx.Err()
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func (q *bytesQueue) Close() error { return nil }

// The bytes in flight, read at every op and at the ticks, stay under the
// backlog and one op more. On the bubble's clock the ticks find the run
// in its stride, whatever the machine's load.
func TestBacklogBoundsTheBytesInFlight(t *testing.T) {
	simulated(t, testBacklogBoundsTheBytesInFlight)
}

func testBacklogBoundsTheBytesInFlight(t *testing.T, clock Clock) {
	const backlog = 100 << 10
	sync := &bytesSession{delay: time.Millisecond, clock: clock}
	async := &bytesAsync{bytesSession{delay: time.Millisecond, clock: clock}}
	for _, c := range []struct {
		s       engine.Session
		b       *bytesSession
		workers int
	}{{sync, sync, 2}, {async, &async.bytesSession, 1}} {
		s, b := c.s, c.b
		var ticked []int64
		w := workloadOf(func(w *spec.Workload) {
			// Unbounded, 16 ops of 32K on average would keep 512K in
			// flight.
			w.BlockSize, w.MinBlockSize, w.MaxBacklog = 64<<10, 1<<10, backlog
			w.Workers, w.QueueDepth, w.Duration = c.workers, 16/c.workers, spec.Duration(1200*time.Millisecond)
		})
		o, err := Run(context.Background(), s, w, Options{Seed: 1, Clock: clock, Subscribers: []metrics.Subscriber{func(t metrics.Tick) { ticked = append(ticked, t.InFlightBytes) }}})
		if err != nil {
			t.Fatal(err)
		}
		// One queue submits each op as it is admitted: none starts with
		// the backlog full. Slots of a synchronous session start their ops
		// a moment after admission, when others admitted meanwhile may
		// have started first.
		if at := b.atStart.Load(); at >= backlog && c.workers == 1 {
			t.Errorf("%T: an op started with %d bytes in flight; the backlog is %d", s, at, backlog)
		}
		// No op is admitted with the backlog full, so the bytes in flight
		// stay under the backlog and one op more.
		if most := b.most.Load(); most >= backlog+64<<10 || most < backlog/2 {
			t.Errorf("%T: at most %d bytes in flight; want up to the backlog (%d), under one op past it", s, most, backlog)
		}
		if ops, errs := totalOps(o); ops == 0 || errs != 0 {
			t.Errorf("%T: %d ops, %d errors", s, ops, errs)
		}
		// A queue is never empty for long; synchronous slots all may be,
		// between ops.
		if len(ticked) == 0 || ticked[0] < 0 || ticked[0] >= backlog+64<<10 || ticked[0] == 0 && c.workers == 1 {
			t.Errorf("%T: bytes in flight at the ticks %v; want them between 0 and the backlog", s, ticked)
		}
	}
}

func TestOpsVaryInLengthWithinTheRange(t *testing.T) {
	s := &bytesAsync{}
	mustRun(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
		w.BlockSize, w.MinBlockSize, w.TotalOps = 8<<10, 1<<10, 2000
	}))
	lengths := 0
	s.lengths.Range(func(k, _ any) bool {
		if n := k.(int64); n < 1<<10 || n > 8<<10 {
			t.Errorf("an op of %d bytes; want 1K..8K", n)
		}
		lengths++
		return true
	})
	if lengths < 1000 {
		t.Errorf("%d distinct lengths in 2000 ops of 1K..8K; want them to vary", lengths)
	}
}

func TestByteRatePacingIsOpenLoop(t *testing.T) {
	// 4 MiB/s of ops of 1K..64K for a second: whatever their lengths, the
	// bytes sent are the bytes due, give or take the op at the end; ops
	// too slow for the rate leave the rest counted as missed.
	simulated(t, func(t *testing.T, clock Clock) {
		for _, c := range []struct {
			name  string
			delay time.Duration
			rate  float64
		}{
			{"on time", 0, 4 << 20},
			{"too slow", 20 * time.Millisecond, 64 << 20}, // 4 ops of ≤64K per 20ms carry ≤12.8M/s
		} {
			s := &bytesAsync{bytesSession{delay: c.delay, clock: clock}}
			o := mustRunOn(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
				w.BlockSize, w.MinBlockSize, w.RateBytes = 64<<10, 1<<10, c.rate
				w.Workers, w.QueueDepth, w.Duration = 1, 4, spec.Duration(time.Second)
			}), clock)
			var bytes int64
			for k := range o.Kinds {
				_, b, _ := o.Collector.Totals(k)
				bytes += b
			}
			ops, _ := totalOps(o)
			mean := float64(s.sent.Load()) / float64(max(ops, 1))
			accounted := float64(bytes) + float64(o.Missed)*mean
			if bytes == 0 || accounted < c.rate-2*64<<10 || accounted > c.rate+2*64<<10 {
				t.Errorf("%s: sent %d bytes and missed %d ops of %.0f bytes in a second paced at %.0f bytes/s",
					c.name, bytes, o.Missed, mean, c.rate)
			}
			if c.delay > 0 && (o.Late == 0 || o.Missed == 0) {
				t.Errorf("%s: %d late, %d missed; want the shortfall counted", c.name, o.Late, o.Missed)
			}
		}
	})
}

func TestObjectsOfTheirOwnSizesNeedATargetThatHoldsThem(t *testing.T) {
	_, err := Run(context.Background(), &fakeSession{}, workloadOf(func(w *spec.Workload) {
		w.TotalOps, w.Objects, w.ObjectSize, w.MinObjectSize = 10, 4, 8192, 4096
	}), Options{})
	if !engine.IsUsage(err) {
		t.Errorf("objects of their own sizes on a session without them: %v; want a usage error", err)
	}
}
