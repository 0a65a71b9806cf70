package runner

import (
	"context"
	"maps"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/spec"
)

// fakeSession is a block target whose behaviour each test sets: a delay per
// op, a failure per op, and whether it serves ops asynchronously.
type fakeSession struct {
	delay func(n int64) time.Duration // how long op n (from 0) takes
	fail  func(n int64) error
	ops   atomic.Int64
	data  map[int64][]byte // written blocks by offset, when remember is set
	mu    sync.Mutex
}

func (f *fakeSession) Geometry() engine.Geometry {
	return engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 1 << 20}
}

func (f *fakeSession) Do(ctx context.Context, op *engine.Op) error {
	n := f.ops.Add(1) - 1
	if f.delay != nil {
		if d := f.delay(n); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	if f.fail != nil {
		if err := f.fail(n); err != nil {
			return err
		}
	}
	if f.data != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
		if op.Kind == engine.Write {
			f.data[op.Offset] = append([]byte(nil), op.Buf...)
		} else if b, ok := f.data[op.Offset]; ok {
			copy(op.Buf, b)
		}
	}
	return nil
}

func (f *fakeSession) Close(context.Context) error { return nil }

// fakeAsync serves ops through a queue that completes them at Submit.
type fakeAsync struct{ fakeSession }

type fakeQueue struct {
	s    *fakeAsync
	done []*engine.Op
}

func (f *fakeAsync) NewQueue(depth int) (engine.Queue, error) { return &fakeQueue{s: f}, nil }

func (q *fakeQueue) Submit(op *engine.Op) error {
	op.Err = q.s.Do(context.Background(), op)
	op.Completed = engine.Now()
	q.done = append(q.done, op)
	return nil
}

func (q *fakeQueue) Reap(ctx context.Context, min int, done []*engine.Op) (int, error) {
	n := copy(done, q.done)
	q.done = append(q.done[:0], q.done[n:]...)
	return n, nil
}

func (q *fakeQueue) Close() error { return nil }

func workloadOf(mut func(*spec.Workload)) *spec.Workload {
	w := &spec.Workload{
		Target: spec.Target{Scheme: "fake"}, Pattern: spec.Random, ReadPercent: 50,
		BlockSize: 4096, Workers: 2, QueueDepth: 2,
	}
	mut(w)
	return w
}

func totalOps(o *Outcome) (ops, errs int64) {
	for k := range o.Kinds {
		n, _, e := o.Collector.Totals(k)
		ops += n
		errs += e
	}
	return ops, errs
}

func mustRun(t *testing.T, ctx context.Context, s engine.Session, w *spec.Workload) *Outcome {
	t.Helper()
	return mustRunOn(t, ctx, s, w, nil)
}

// mustRunOn runs w on s with the run's time read off clock.
func mustRunOn(t *testing.T, ctx context.Context, s engine.Session, w *spec.Workload, clock Clock) *Outcome {
	t.Helper()
	o, err := Run(ctx, s, w, Options{Seed: 1, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// bubbleClock is the time of a synctest bubble since start.
type bubbleClock struct{ start time.Time }

func (c bubbleClock) Now() time.Duration { return time.Since(c.start) }

// simulated runs test in a synctest bubble, with a Clock of the bubble's
// time for its runs: time passes only while every goroutine of the run
// waits (on an op's delay, a pacer's slot, the next tick), so a run's
// timing is exact however loaded the machine is, and a run of seconds
// takes milliseconds. A session in the bubble must take some time per op,
// or no time passes.
func simulated(t *testing.T, test func(t *testing.T, clock Clock)) {
	synctest.Test(t, func(t *testing.T) { test(t, bubbleClock{time.Now()}) })
}

func TestOpCountBoundIsExact(t *testing.T) {
	for _, s := range []engine.Session{&fakeSession{}, &fakeAsync{}} {
		o := mustRun(t, context.Background(), s, workloadOf(func(w *spec.Workload) { w.TotalOps = 1000 }))
		if ops, _ := totalOps(o); ops != 1000 || o.StopReason != StopOps {
			t.Errorf("%T: measured %d ops, stop %q; want 1000 ops, stop %q", s, ops, o.StopReason, StopOps)
		}
	}
}

func TestByteBoundIsExact(t *testing.T) {
	o := mustRun(t, context.Background(), &fakeSession{}, workloadOf(func(w *spec.Workload) { w.TotalBytes = 100 * 4096 }))
	var bytes int64
	for k := range o.Kinds {
		_, b, _ := o.Collector.Totals(k)
		bytes += b
	}
	if bytes != 100*4096 || o.StopReason != StopBytes {
		t.Errorf("moved %d bytes, stop %q; want %d, %q", bytes, o.StopReason, 100*4096, StopBytes)
	}
}

func TestDurationBound(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		// 4 slots of 1ms ops for 300ms: the ops started before the end
		// finish, none starts after it.
		s := &fakeSession{delay: func(int64) time.Duration { return time.Millisecond }}
		o := mustRunOn(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
			w.Duration = spec.Duration(300 * time.Millisecond)
		}), clock)
		if o.StopReason != StopDuration {
			t.Errorf("stop %q; want %q", o.StopReason, StopDuration)
		}
		if o.Elapsed < 300*time.Millisecond || o.Elapsed > 301*time.Millisecond {
			t.Errorf("measured %v for a 300ms run of 1ms ops", o.Elapsed)
		}
		if ops, _ := totalOps(o); ops != 4*300 {
			t.Errorf("%d ops measured; want 4 slots × 300 ops of 1ms", ops)
		}
	})
}

func TestRampIsExcluded(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		// Ops started in the first 200ms take a whole second, the others
		// 1ms; the ramp lasts 1.3s, so every slow op is a ramp op, and
		// none may be in the figures.
		s := &fakeSession{delay: func(int64) time.Duration {
			if clock.Now() < 200*time.Millisecond {
				return time.Second
			}
			return time.Millisecond
		}}
		o := mustRunOn(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
			w.Ramp = spec.Duration(1300 * time.Millisecond)
			w.Duration = spec.Duration(200 * time.Millisecond)
			w.Workers, w.QueueDepth = 1, 1
		}), clock)
		measured, _ := totalOps(o)
		if measured == 0 || measured >= s.ops.Load() {
			t.Errorf("measured %d of %d ops; the ramp's ops must be excluded", measured, s.ops.Load())
		}
		for k := range o.Kinds {
			if h := o.Collector.Histogram(k); h.TotalCount() > 0 && h.Max() >= int64(900*time.Millisecond) {
				t.Errorf("%s: a ramp-up op (1s) is in the figures: max %v", o.Kinds[k], time.Duration(h.Max()))
			}
		}
		if o.Elapsed < 200*time.Millisecond {
			t.Errorf("measured period %v is shorter than the 200ms duration", o.Elapsed)
		}
	})
}

func TestRatePacingIsOpenLoop(t *testing.T) {
	// 1000 ops/s for 1s on one slot; op 100 stalls for 200ms. Closed loop
	// would hide the stall in one sample; open loop charges the ~200 ops
	// scheduled during it with their wait (200ms down to 0), so p90 shows
	// about 100ms.
	simulated(t, func(t *testing.T, clock Clock) {
		s := &fakeSession{delay: func(n int64) time.Duration {
			if n == 100 {
				return 200 * time.Millisecond
			}
			return 0
		}}
		o := mustRunOn(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
			w.RateIOPS = 1000
			w.Duration = spec.Duration(time.Second)
			w.Workers, w.QueueDepth = 1, 1
			w.ReadPercent = 100
		}), clock)
		h := o.Collector.Histogram(int(engine.Read))
		if p := time.Duration(h.ValueAtQuantile(90)); p < 50*time.Millisecond {
			t.Errorf("p90 = %v; a 200ms stall at 1000 ops/s must delay ~20%% of the ops", p)
		}
		// On the bubble's clock no op is lost to a slow machine: every
		// slot due within the second is issued.
		if ops, _ := totalOps(o); ops != 1000 {
			t.Errorf("%d ops in 1s at 1000/s", ops)
		}
		if o.Late < 100 {
			t.Errorf("late ops = %d; the stall should make ~200 late", o.Late)
		}
		// The ops that found the slot free waited for their time, and on
		// the bubble's clock were issued at it; those the stall held up
		// are late by the target's doing, not the pacer's.
		if n := o.Lag.TotalCount(); n < 700 || n > 1000-o.Late || o.Lag.Max() != 0 {
			t.Errorf("pacer lag of %d ops, max %v; want the ~800 ops not held up by the stall, none late", n, time.Duration(o.Lag.Max()))
		}
	})
}

// A paced run measures its whole duration, also after its last op was due:
// 2 ops a second for 1.8 s are due at 0, 0.5, 1 and 1.5 s, and the run
// lasts until 1.8 s, its seconds a full one and a last 0.8.
func TestPacedRunMeasuresItsWholeDuration(t *testing.T) {
	var ticks []metrics.Tick
	w := workloadOf(func(w *spec.Workload) {
		w.RateIOPS = 2
		w.Duration = spec.Duration(1800 * time.Millisecond)
		w.Workers, w.QueueDepth = 1, 1
	})
	simulated(t, func(t *testing.T, clock Clock) {
		o, err := Run(context.Background(), &fakeSession{}, w, Options{Clock: clock, Subscribers: []metrics.Subscriber{func(t metrics.Tick) { ticks = append(ticks, t) }}})
		if err != nil {
			t.Fatal(err)
		}
		if ops, _ := totalOps(o); ops != 4 || o.StopReason != StopDuration {
			t.Errorf("%d ops, stopped by %s; want 4 by its duration", ops, o.StopReason)
		}
		if o.Elapsed < 1800*time.Millisecond {
			t.Errorf("measured %v of a 1.8 s run", o.Elapsed)
		}
		if len(ticks) != 2 || ticks[1].Dur < 0.79 {
			t.Errorf("%d ticks, the last %+v; want a full second and 0.8 s", len(ticks), ticks[len(ticks)-1].Second)
		}
	})
}

func TestMissedSlotsAreCounted(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		s := &fakeSession{delay: func(int64) time.Duration { return 5 * time.Millisecond }}
		o := mustRunOn(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
			w.RateIOPS = 10000
			w.Duration = spec.Duration(300 * time.Millisecond)
			w.Workers, w.QueueDepth = 1, 1
		}), clock)
		if o.Missed < 1000 {
			t.Errorf("missed = %d; a 5ms op cannot keep 10000/s, ~2900 slots must be missed", o.Missed)
		}
		// Every one of the 3000 slots due in 300ms was issued or missed.
		if ops, _ := totalOps(o); ops+o.Missed != 3000 {
			t.Errorf("%d ops issued and %d missed of the 3000 due", ops, o.Missed)
		}
	})
}

func TestCancelStopsAndKeepsTheResult(t *testing.T) {
	for _, s := range []engine.Session{&fakeSession{delay: func(int64) time.Duration { return time.Millisecond }}, &fakeAsync{}} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		begin := time.Now()
		o := mustRun(t, ctx, s, workloadOf(func(w *spec.Workload) { w.Duration = spec.Duration(time.Hour) }))
		if took := time.Since(begin); took > 15*time.Second {
			t.Errorf("%T: cancel took %v to stop the run", s, took)
		}
		if ops, errs := totalOps(o); o.StopReason != StopInterrupted || ops == 0 || errs != 0 {
			t.Errorf("%T: stop %q, %d ops, %d errors; want interrupted with ops and no errors", s, o.StopReason, ops, errs)
		}
	}
}

func TestErrorsAreCountedByKindAndTheRunGoesOn(t *testing.T) {
	s := &fakeSession{fail: func(n int64) error {
		if n%10 == 0 {
			return syscall.EIO
		}
		return nil
	}}
	o := mustRun(t, context.Background(), s, workloadOf(func(w *spec.Workload) { w.TotalOps = 1000 }))
	ops, errs := totalOps(o)
	if errs != 100 || ops != 900 || o.Collector.Errors()["EIO"] != 100 {
		t.Errorf("ops %d errors %d by kind %v; want 900 ok, 100 EIO", ops, errs, o.Collector.Errors())
	}
}

func TestVerifyCatchesWrongData(t *testing.T) {
	// Writes are remembered; reads of unwritten blocks return the buffer
	// as it was, whose header names another block: verification must fail
	// those and pass the rest.
	s := &fakeSession{data: map[int64][]byte{}}
	o := mustRun(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
		w.TotalOps = 2000
		w.Verify = true
		w.Workers, w.QueueDepth = 1, 1
	}))
	ops, _ := totalOps(o)
	if o.Collector.Errors()["verify"] == 0 || ops == 0 {
		t.Errorf("errors %v, %d ok ops; want some verify failures and some passes", o.Collector.Errors(), ops)
	}
}

func TestSeriesCoversTheRun(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		var ticks []metrics.Tick // those a per-second table prints
		var series []metrics.Second
		var mu sync.Mutex
		slow := &fakeSession{delay: func(int64) time.Duration { return 100 * time.Microsecond }}
		o, err := Run(context.Background(), slow, workloadOf(func(w *spec.Workload) {
			w.Duration = spec.Duration(1 * time.Second)
		}), Options{Clock: clock, Interval: 100 * time.Millisecond, Subscribers: []metrics.Subscriber{func(t metrics.Tick) {
			mu.Lock()
			series = append(series, t.Second)
			if !t.Short {
				ticks = append(ticks, t)
			}
			mu.Unlock()
		}}})
		if err != nil {
			t.Fatal(err)
		}
		// On the bubble's clock no ticker starves: ten intervals, and they
		// tile the run.
		if len(series) != 10 {
			t.Fatalf("%d intervals of 100ms in a 1s run", len(series))
		}
		var sum int64
		var dur float64
		for _, s := range series {
			dur += s.Dur
			for _, k := range s.Kinds {
				sum += k.Ops
			}
		}
		if diff := dur - o.Elapsed.Seconds(); diff > 1e-6 || diff < -1e-6 {
			t.Errorf("intervals add up to %gs, the measured period is %v", dur, o.Elapsed)
		}
		if ops, _ := totalOps(o); sum != ops {
			t.Errorf("series adds up to %d ops, totals say %d", sum, ops)
		}
		if len(ticks) < len(series)-1 {
			t.Errorf("progress saw %d ticks for %d intervals", len(ticks), len(series))
		}
	})
}

// SoFar sees the run up to each tick: the totals of the intervals
// so far, over the time measured so far.
func TestTickSoFarIsTheRunUpToTheTick(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		type seen struct {
			seriesOps, soFarOps int64
			t                   float64
			elapsed             time.Duration
		}
		var ticks []seen
		var seriesOps int64 // in the intervals so far
		var lastT float64   // the end of the latest interval
		slow := &fakeSession{delay: func(int64) time.Duration { return 100 * time.Microsecond }}
		o, err := Run(context.Background(), slow, workloadOf(func(w *spec.Workload) {
			w.Duration = spec.Duration(600 * time.Millisecond)
		}), Options{Clock: clock, Interval: 100 * time.Millisecond, Subscribers: []metrics.Subscriber{func(tk metrics.Tick) {
			// Subscribers and SoFar are called from one goroutine: no lock
			// needed.
			for _, k := range tk.Kinds {
				seriesOps += k.Ops
			}
			lastT = tk.T
		}}, SoFar: func(so *Outcome) {
			var s seen
			for _, k := range so.Summaries() {
				s.soFarOps += k.Ops
			}
			s.seriesOps = seriesOps
			s.t, s.elapsed = lastT, so.Elapsed
			ticks = append(ticks, s)
		}})
		if err != nil {
			t.Fatal(err)
		}
		// On the bubble's clock no ticker starves: six intervals.
		if len(ticks) != 6 {
			t.Fatalf("%d ticks in a 600ms run of 100ms intervals", len(ticks))
		}
		final, _ := totalOps(o)
		var prev int64
		for i, s := range ticks {
			if s.soFarOps != s.seriesOps || s.soFarOps < prev || s.soFarOps > final || s.soFarOps == 0 {
				t.Errorf("tick %d: %d ops so far, the series so far has %d, the one before %d, the run %d", i, s.soFarOps, s.seriesOps, prev, final)
			}
			if d := s.elapsed.Seconds() - s.t; d > 1e-6 || d < -1e-6 {
				t.Errorf("tick %d at %gs: SoFar's elapsed is %v", i, s.t, s.elapsed)
			}
			prev = s.soFarOps
		}
		// The final interval gets a tick when it is long enough; that tick
		// has the whole run.
		if last := ticks[len(ticks)-1]; last.t == lastT && last.soFarOps != final {
			t.Errorf("the last tick saw %d ops, the run did %d", last.soFarOps, final)
		}
	})
}

// procBound blocks like a C thread: the runner must give every slot a P.
type procBound struct {
	fakeSession
	seen atomic.Int64
}

func (p *procBound) BlocksProcessor() bool { return true }

func (p *procBound) Do(ctx context.Context, op *engine.Op) error {
	p.seen.Store(int64(runtime.GOMAXPROCS(0)))
	return p.fakeSession.Do(ctx, op)
}

func TestProcessorBoundSessionsGetAProcessorPerSlot(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	s := &procBound{}
	mustRun(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
		w.Workers, w.QueueDepth, w.TotalOps = 3, 4, 100
	}))
	if got, want := s.seen.Load(), int64(runtime.NumCPU()+12); got != want {
		t.Errorf("GOMAXPROCS during the run = %d; want %d (the CPUs plus 12 slots)", got, want)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS after the run = %d; want it restored to %d", after, before)
	}
}

// payloadSession writes and checks its own data format.
type payloadSession struct {
	fakeSession
	filled, checked atomic.Int64
}

func (p *payloadSession) InitBuffer(buf []byte) { buf[1] = 'I' }

func (p *payloadSession) FillWrite(op *engine.Op) {
	p.filled.Add(1)
	if op.Buf[1] != 'I' {
		panic("FillWrite on a buffer InitBuffer did not prepare")
	}
	op.Buf[0] = 'P'
}

func (p *payloadSession) CheckRead(op *engine.Op) error {
	p.checked.Add(1)
	if op.Buf[0] != 'P' {
		return engine.ErrVerify
	}
	return nil
}

func TestSessionPayloadReplacesTheDefaultData(t *testing.T) {
	s := &payloadSession{fakeSession: fakeSession{data: map[int64][]byte{}}}
	o := mustRun(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
		w.TotalOps, w.Verify, w.Workers, w.QueueDepth = 400, true, 1, 1
		w.Pattern = spec.Sequential // block 0.. written before it is read
	}))
	reads, _, _ := o.Collector.Totals(int(engine.Read))
	if s.filled.Load() == 0 || s.checked.Load() == 0 || s.filled.Load()+s.checked.Load() != 400 {
		t.Errorf("filled %d, checked %d of 400 ops", s.filled.Load(), s.checked.Load())
	}
	if reads == 0 {
		t.Errorf("no read passed the session's own check: errors %v", o.Collector.Errors())
	}
}

func TestQueueDepthsAreCounted(t *testing.T) {
	// fakeAsync completes every op at Submit, so the loop's depth is full
	// after the first fill and each Reap collects the whole queue.
	o := mustRun(t, context.Background(), &fakeAsync{}, workloadOf(func(w *spec.Workload) {
		w.QueueDepth, w.TotalOps = 8, 4000
	}))
	q := o.Collector.Queue()
	var depths, submits int64
	for i := range metrics.QueueBuckets {
		depths += q.Depth[i]
		submits += q.Submit[i]
	}
	if depths != 4000 || submits != 4000 || q.Submit[1] != 4000 {
		t.Errorf("async: %d depths and %d submits counted for 4000 ops: %+v", depths, submits, q)
	}
	if q.Depth[3] < 3900 || q.Complete[2] == 0 {
		t.Errorf("async at depth 8: depths %v, completions %v", q.Depth, q.Complete)
	}

	// Two workers of four slots, each op slow enough that all four of a
	// worker's slots are busy: on the bubble's clock they are, however
	// loaded the machine.
	simulated(t, func(t *testing.T, clock Clock) {
		slow := &fakeSession{delay: func(int64) time.Duration { return time.Millisecond }}
		o := mustRunOn(t, context.Background(), slow, workloadOf(func(w *spec.Workload) {
			w.QueueDepth, w.TotalOps = 4, 400
		}), clock)
		q := o.Collector.Queue()
		depths := int64(0)
		for _, n := range q.Depth {
			depths += n
		}
		if depths != 400 || q.Submit[1] != 400 || q.Complete[1] != 400 || q.Depth[2] < 300 {
			t.Errorf("sync at depth 4: %+v", q)
		}
	})

	// A run whose slots wait on the real clock switches context: the
	// process's counters are read across it.
	o = mustRun(t, context.Background(), &fakeSession{delay: func(int64) time.Duration { return time.Millisecond }}, workloadOf(func(w *spec.Workload) {
		w.QueueDepth, w.TotalOps = 4, 40
	}))
	if o.CPU.ContextSwitches <= 0 || o.CPU.WallSeconds <= 0 {
		t.Errorf("cpu %+v", o.CPU)
	}
}

// syncing records how many ops were done each time it is synced.
type syncing struct {
	fakeAsync
	smu  sync.Mutex
	seen []int64
}

func (s *syncing) Sync(context.Context, int) error {
	s.smu.Lock()
	s.seen = append(s.seen, s.ops.Load())
	s.smu.Unlock()
	return nil
}

// syncOnly is a syncing session without its queue.
type syncOnly struct{ s *syncing }

func (o syncOnly) Geometry() engine.Geometry                   { return o.s.Geometry() }
func (o syncOnly) Do(ctx context.Context, op *engine.Op) error { return o.s.Do(ctx, op) }
func (o syncOnly) Close(ctx context.Context) error             { return o.s.Close(ctx) }
func (o syncOnly) Sync(ctx context.Context, file int) error    { return o.s.Sync(ctx, file) }

func TestFsyncEveryNWrites(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(map[bool]string{false: "sync", true: "async"}[async], func(t *testing.T) {
			s := &syncing{}
			var sess engine.Session = syncOnly{s}
			if async {
				sess = s
			}
			w := workloadOf(func(w *spec.Workload) {
				w.ReadPercent, w.Workers, w.QueueDepth, w.TotalOps, w.FsyncEvery = 0, 1, 1, 100, 8
				if async {
					w.QueueDepth = 4
				}
			})
			o := mustRun(t, context.Background(), sess, w)
			syncs, _, errs := o.Collector.Totals(2)
			if o.Kinds[2] != "sync" || int(syncs) != len(s.seen) || errs != 0 {
				t.Fatalf("kinds %v, %d syncs timed, %d made", o.Kinds, syncs, len(s.seen))
			}
			// A sync follows the writes before it, and no write starts
			// until it is done: the k-th sync sees at least k*8 writes, and
			// with one op in flight exactly that many.
			for k, done := range s.seen {
				if want := int64(k+1) * 8; done < want || !async && done != want {
					t.Errorf("sync %d came after %d writes; want %d", k+1, done, want)
				}
			}
			if !async && len(s.seen) != 100/8 || async && (len(s.seen) == 0 || len(s.seen) > 100/8) {
				t.Errorf("%d syncs in 100 writes", len(s.seen))
			}
		})
	}
}

func TestEndFsyncIsTheLastThingMeasured(t *testing.T) {
	s := &syncing{}
	o := mustRun(t, context.Background(), s, workloadOf(func(w *spec.Workload) {
		w.ReadPercent, w.TotalOps, w.EndFsync = 0, 100, true
	}))
	if syncs, _, _ := o.Collector.Totals(2); syncs != 1 || len(s.seen) != 1 || s.seen[0] != 100 {
		t.Errorf("%d syncs timed, made after %v writes; want one, after all 100", syncs, s.seen)
	}
}

func TestFsyncNeedsATargetThatSyncs(t *testing.T) {
	_, err := Run(context.Background(), &fakeSession{}, workloadOf(func(w *spec.Workload) {
		w.TotalOps, w.FsyncEvery = 10, 2
	}), Options{})
	if !engine.IsUsage(err) {
		t.Errorf("fsync on a session that cannot sync: %v; want a usage error", err)
	}
}

// Subscribers get every interval, each in the order given, and a tick's
// histograms hold exactly the ops its counts say.
func TestSubscribersSeeEveryIntervalInOrder(t *testing.T) {
	var calls []string
	var ops, counted int64
	var series []metrics.Second
	first := func(tk metrics.Tick) {
		calls = append(calls, "first")
		series = append(series, tk.Second)
		for kind, k := range tk.Kinds {
			ops += k.Ops
			counted += tk.Histograms[kind].TotalCount()
		}
	}
	second := func(metrics.Tick) { calls = append(calls, "second") }
	slow := &fakeSession{delay: func(int64) time.Duration { return 100 * time.Microsecond }}
	o, err := Run(context.Background(), slow, workloadOf(func(w *spec.Workload) {
		w.Duration = spec.Duration(500 * time.Millisecond)
	}), Options{Interval: 100 * time.Millisecond, Subscribers: []metrics.Subscriber{first, second}})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range calls {
		if want := []string{"first", "second"}[i%2]; c != want {
			t.Fatalf("call %d went to %s; want %s (calls %v)", i, c, want, calls)
		}
	}
	total, _ := totalOps(o)
	var dur float64
	for _, s := range series {
		dur += s.Dur
	}
	if len(calls) != 2*len(series) || ops != total || counted != total || math.Abs(dur-o.Elapsed.Seconds()) > 1e-6 {
		t.Errorf("%d calls for %d intervals of %gs in all; %d ops in the ticks, %d in their histograms, %d in the run of %v",
			len(calls), len(series), dur, ops, counted, total, o.Elapsed)
	}
}

func TestCompletedSeesEveryMeasuredOpOfEachWorker(t *testing.T) {
	simulated(t, func(t *testing.T, clock Clock) {
		s := &fakeSession{delay: func(int64) time.Duration { return time.Millisecond }}
		w := workloadOf(func(w *spec.Workload) {
			w.Ramp = spec.Duration(50 * time.Millisecond)
			w.Duration = spec.Duration(200 * time.Millisecond)
			w.Workers, w.QueueDepth = 3, 2
		})
		var mu sync.Mutex
		perWorker := map[int]int64{}
		var late []Completion
		o, err := Run(context.Background(), s, w, Options{Seed: 1, Clock: clock, Completed: func(c Completion) {
			mu.Lock()
			defer mu.Unlock()
			perWorker[c.Worker]++
			if c.Start < 0 || c.End < c.Start || c.End > 201*time.Millisecond || len(c.Op.Buf) != 4096 {
				late = append(late, c)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		ops, _ := totalOps(o)
		var seen int64
		for _, n := range perWorker {
			seen += n
		}
		if seen != ops || len(perWorker) != 3 {
			t.Errorf("completions %d from workers %v; the run measured %d ops on 3 workers", seen, perWorker, ops)
		}
		if len(late) > 0 {
			t.Errorf("%d completions outside the measured 200ms, such as start %v end %v", len(late), late[0].Start, late[0].End)
		}
	})
}

func TestBoundsPerWorkerGiveEachWorkerItsShare(t *testing.T) {
	for _, s := range []engine.Session{&fakeSession{}, &fakeAsync{}} {
		for _, bound := range []string{StopOps, StopBytes} {
			w := workloadOf(func(w *spec.Workload) {
				w.Workers, w.QueueDepth, w.BoundsPerWorker = 3, 2, true
				if bound == StopOps {
					w.TotalOps = 100
				} else {
					w.TotalBytes = 100 * 4096
				}
			})
			var mu sync.Mutex
			perWorker := map[int]int{}
			o, err := Run(context.Background(), s, w, Options{Seed: 1, Completed: func(c Completion) {
				mu.Lock()
				perWorker[c.Worker]++
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[int]int{0: 34, 1: 33, 2: 33}; !maps.Equal(perWorker, want) || o.StopReason != bound {
				t.Errorf("%T, %s: ops by worker %v, stop %q; want %v, stop %q", s, bound, perWorker, o.StopReason, want, bound)
			}
		}
	}
}

// Bounded per worker, each worker's share of the bytes is in proportion
// to its region (1 MiB and 256 KiB here, from offset_increment), ops of
// varied sizes start while the worker's bytes fall short of its share, and
// only measured ops count, so a ramp may come first.
func TestBoundsPerWorkerShareByRegionAfterARamp(t *testing.T) {
	w := workloadOf(func(w *spec.Workload) {
		w.BoundsPerWorker, w.TotalBytes, w.Ramp = true, 1000*4096, spec.Duration(20*time.Millisecond)
		w.OffsetIncrement = 768 << 10
		w.BlockSize, w.BlockSizes = 16384, "4k/50:16k/50"
	})
	var mu sync.Mutex
	bytes := map[int]int64{}
	o, err := Run(context.Background(), &fakeSession{}, w, Options{Seed: 1, Completed: func(c Completion) {
		mu.Lock()
		bytes[c.Worker] += int64(len(c.Op.Buf))
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	for worker, share := range []int64{800 * 4096, 200 * 4096} {
		if got := bytes[worker]; got < share || got >= share+16384 {
			t.Errorf("worker %d did %d bytes, want its share %d and less than one more op", worker, got, share)
		}
	}
	if o.StopReason != StopBytes {
		t.Errorf("stop %q, want %q", o.StopReason, StopBytes)
	}
}
