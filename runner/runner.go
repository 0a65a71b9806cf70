// Package runner drives a workload against an engine session: workers ×
// queue depth, the time, byte and op-count bounds, ramp-up, open-loop
// pacing (in ops or bytes per second), the byte backlog and cancellation.
// It measures into metrics and returns an Outcome.
package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/failpoint"
	"github.com/cephbench/cephbench/internal/sleep"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/pace"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/steady"
	"github.com/cephbench/cephbench/workload"
)

// Why a run stopped: the result's reasons.
const (
	StopDuration    = result.StopDuration
	StopOps         = result.StopOps
	StopBytes       = result.StopBytes
	StopExhausted   = result.StopExhausted
	StopInterrupted = result.StopInterrupted
	StopMinRate     = result.StopMinRate
	StopSteady      = result.StopSteady
	StopError       = result.StopError
	StopTerminated  = result.StopTerminated
)

// Options tune a run without changing what it measures.
type Options struct {
	// Subscribers receive every interval of the series as it closes,
	// with the contract of metrics.Subscriber: from one goroutine, in
	// order.
	Subscribers []metrics.Subscriber
	// SoFar, if set, is called after the subscribers with the run's
	// outcome up to each tick: every figure over the time measured so far
	// (the queue counts, which workers hand over at their end, stay
	// zero). The outcome shares the run's collector, so it is valid only
	// during the call; Outcome.Result copies what it needs.
	SoFar func(*Outcome)
	// Seed makes the random offsets reproducible.
	Seed uint64
	// Interval is the series' interval; zero means one second.
	Interval time.Duration
	// Objects is the object set an op-mix workload starts from and leaves
	// for the next run on the same session; nil means the objects the
	// session found (Geometry.ObjectCount).
	Objects *workload.Objects
	// Completed, if set, sees every measured op that succeeded, as it
	// completes: the per-op record fio's log files are made from. It is
	// called from the goroutine that ran the op, so concurrently for
	// different workers and slots; it must not keep c.Op's buffer.
	Completed func(c Completion)
	// Stop, if set, ends the run when it is closed, as its duration
	// would: no op starts after it, those in flight complete and are
	// measured, and the run's reason is StopTerminated.
	Stop <-chan struct{}
	// Clock is the time the run reads; nil is engine.Now, the time every
	// engine stamps its ops with. The run waits on the time package's
	// timers, so another Clock is of use only where those follow it: in a
	// testing/synctest bubble, whose fake time lets a test time a run
	// exactly and take no time itself.
	Clock Clock
}

// Clock tells the time on engine.Now's base: a duration since an epoch of
// its own, never going back. Sessions of a run on a Clock stamp their ops
// (Op.Issued, Op.Completed, Op.FirstByte) with it. Now is called from
// every worker at once.
type Clock interface {
	Now() time.Duration
}

// Completion is one measured op that succeeded, for Options.Completed.
type Completion struct {
	// Worker is the worker that ran it, from 0: a fio job's clone.
	Worker int
	Op     *engine.Op
	// Start and End are when the op started (as its latency counts) and
	// completed, since the measured period began (the end of the ramp).
	Start, End time.Duration
}

// Outcome is everything a run measured.
type Outcome struct {
	Start, End time.Time     // wall clock, for labels
	Elapsed    time.Duration // the measured period, ramp excluded
	StopReason string
	Kinds      []string // op kind names, indexing Collector's kinds
	Collector  *metrics.Collector
	CPU        metrics.CPU
	// Late counts paced ops issued more than a millisecond after their
	// scheduled time; Missed counts scheduled ops never issued before the
	// run stopped (on a byte-rate schedule, the bytes short in ops of the
	// mean length issued). Both are zero for unpaced runs.
	Late, Missed int64
	// Abandoned counts ops still in flight when an interrupted run gave up
	// waiting for them; they are in no figure.
	Abandoned int64
	// Lag, for a paced run, is how late (nanoseconds) the pacer issued
	// the measured ops that had a slot free before they were due; nil for
	// an unpaced run.
	Lag *hdr.Histogram
	// MeanInFlight is how many ops were in flight on average over the
	// measured period (the series' intervals' means, weighted by their
	// lengths).
	MeanInFlight float64
	// BelowMinRate is the direction that fell below its minimum rate,
	// which failed the run; nil when none did.
	BelowMinRate *result.RateShortfall
	// FirstError is the class of the first op that failed, "" if none.
	FirstError string
	// Steady is what the workload's steady-state criterion found; nil
	// without one.
	Steady *steady.State
}

// Summaries returns the summary of each op kind the run did, by name.
func (o *Outcome) Summaries() map[string]metrics.KindSummary {
	out := map[string]metrics.KindSummary{}
	for k, name := range o.Kinds {
		if ops, _, errs := o.Collector.Totals(k); ops+errs > 0 {
			out[name] = o.Collector.Summary(k, o.Elapsed)
		}
	}
	return out
}

// Result builds the result of the run of w called name, on host: its
// figures and encoded histograms, without a series (the tick log holds
// it).
func (o *Outcome) Result(name string, w *spec.Workload, host result.Host) (*result.Result, error) {
	r := &result.Result{
		Schema: result.Schema, Version: result.Version, Name: name, Spec: *w, Host: host,
		Start: o.Start.UTC(), End: o.End.UTC(), ElapsedSeconds: o.Elapsed.Seconds(),
		StopReason: o.StopReason, Interrupted: o.StopReason == StopInterrupted,
		Ops: o.Summaries(), Errors: o.Collector.Errors(),
		CPU: o.CPU, Queue: o.Collector.Queue(), Late: o.Late, Missed: o.Missed, Abandoned: o.Abandoned,
		MeanInFlight: o.MeanInFlight, Slots: w.Workers * w.QueueDepth,
		FirstError: o.FirstError, SteadyState: o.Steady,
		BelowMinRate: o.BelowMinRate,
		Histograms:   map[string]string{}, HistogramSettings: new(metrics.StandardHistogram()),
	}
	r.Spec.BufferMemory = w.Buffers() // what it used, also when the workload left it to the default
	for k, kind := range o.Kinds {
		if _, did := r.Ops[kind]; !did {
			continue
		}
		enc, err := o.Collector.Histogram(k).EncodeV2()
		if err != nil {
			return nil, fmt.Errorf("encoding the %s histogram: %w", kind, err)
		}
		r.Histograms[kind] = string(enc)
	}
	lag, err := result.NewPacerLag(o.Lag)
	if err != nil {
		return nil, err
	}
	r.PacerLag = lag
	return r, nil
}

// lateThreshold is how far behind schedule a paced op may start before it
// counts as late.
const lateThreshold = time.Millisecond

// run is the state shared by a run's goroutines.
type run struct {
	w       *spec.Workload
	sess    engine.Session
	payload engine.Payload // nil: cephbench's own data (package workload)
	ctx     context.Context
	verify  bool
	t0      time.Duration // engine.Now at start
	rampEnd time.Duration
	end     time.Duration // rampEnd + duration, or max
	// lanes is each op kind's schedule, nil for an unpaced kind: one lane
	// for every kind under a total rate, one per direction under rates
	// per direction. issued holds the lanes of the kinds the run issues,
	// nil for an unpaced one.
	lanes  [engine.NumOpKinds]*lane
	issued []*lane
	paced  bool
	// floors check the minimum rates of reads and writes, when set.
	floors   [2]*floor
	belowMin atomic.Pointer[result.RateShortfall]

	// stop sets reason before stopped, once, so that whoever sees
	// stopped sees why.
	stopOnce sync.Once
	stopped  atomic.Bool
	reason   atomic.Value // string
	// Bounded counters; touched only when the matching bound is set, so an
	// unbounded run shares no cache line between cores.
	measuredOps   atomic.Int64
	measuredBytes atomic.Int64
	late          atomic.Int64
	// lag is how late the pacer issued ops that had a slot free before
	// they were due (nanoseconds), guarded by lagMu.
	lagMu      sync.Mutex
	lag        *hdr.Histogram
	backlog    atomic.Int64 // bytes in flight, when MaxBacklog bounds them
	stoppedAt  atomic.Int64 // engine.Now when stop was first called
	firstError atomic.Pointer[string]
	// judge, for a workload with a steady-state criterion, takes each
	// second from the ticking goroutine.
	judge *steady.Judge

	// index is each op kind's place in the collector, or -1 for a kind
	// the run does not do; firstByte that of the kind's time to first
	// byte, or -1. derived names the first-byte kinds, which are not
	// more ops.
	index, firstByte [engine.NumOpKinds]int
	derived          []string
	// errorNamer, in a run of the session's own kinds, names errors in
	// its words; nil otherwise.
	errorNamer engine.ErrorNamer
	// fills: the workload writes, so buffers carry the write pattern.
	fills bool

	workers []*worker
	opts    Options
	// syncer and syncKind (the "sync" kind's index, or -1) are set when
	// the workload syncs.
	syncer   engine.Syncer
	syncKind int
	// soFar makes the outcome so far, the measured time given.
	soFar func(elapsed time.Duration) *Outcome
	// flightAt and flightSum are where the ticker last closed the queue
	// occupancy (meanInFlight): nanoseconds past the ramp's end, and the
	// integral of the ops in flight up to then.
	flightAt, flightSum int64
}

type worker struct {
	id int // its index in the run's workers
	// opsLeft and bytesLeft are its share of the bounds still to do,
	// with Workload.BoundsPerWorker.
	opsLeft, bytesLeft atomic.Int64

	// mu guards gen's Next when shared: the slots of a synchronous
	// session's worker are goroutines of their own; an asynchronous
	// worker is one goroutine.
	mu       sync.Mutex
	shared   bool
	gen      workload.Source
	rec      *metrics.Recorder
	started  atomic.Int64
	finished atomic.Int64
	writes   atomic.Int64 // writes completed, for FsyncEvery
	thought  atomic.Int64 // ops completed, for ThinkEvery
	_        [64]byte     // keep workers' counters on separate cache lines
	// The integral of its ops in flight: one per slot of a synchronous
	// session, or its queue's.
	slots []slotFlight
	queue queueFlight
}

// now is the run's time. A nil Clock is tested for rather than defaulted,
// so the real clock costs its hot loop no call through an interface.
func (r *run) now() time.Duration {
	if r.opts.Clock == nil {
		return engine.Now()
	}
	return r.opts.Clock.Now()
}

func (r *run) stop(reason string) {
	r.stopOnce.Do(func() {
		r.stoppedAt.Store(int64(r.now()))
		r.reason.Store(reason)
		r.stopped.Store(true)
	})
}

// refusing says whether the run admits no more ops: it stopped, and not
// because the workload ran out of ops, for then the ops made before that
// (the last objects under an object limit) are still the workload's.
func (r *run) refusing() bool {
	return r.stopped.Load() && r.reason.Load() != StopExhausted
}

// Run executes w on sess until a bound is reached or ctx is canceled, and
// returns what it measured. Cancellation is not an error: the Outcome then
// says StopInterrupted and holds everything measured until then. An error
// is returned only when the run could not start.
func Run(ctx context.Context, sess engine.Session, w *spec.Workload, opts Options) (*Outcome, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	geo := sess.Geometry()
	if err := workload.CheckRegions(w, geo); err != nil {
		return nil, engine.Usagef("%v", err)
	}
	mixed := w.Mix != ""
	r := &run{w: w, sess: sess, ctx: ctx, verify: w.Verify && (w.Reads() || mixed) || w.VerifyBacklog > 0, fills: w.Writes() || mixed, syncKind: -1, opts: opts}
	kinds, shares, err := r.setKinds(geo)
	if err != nil {
		return nil, err
	}
	if kinds, err = r.addSync(kinds); err != nil {
		return nil, err
	}
	col := metrics.NewCollector(kinds)
	if w.BlockSizes != "" || w.MinBlockSize > 0 {
		col.CountOpSizes()
	}
	interval := opts.Interval
	if interval <= 0 {
		interval = time.Second
	}

	r.payload, _ = sess.(engine.Payload)
	r.setLanes(opts.Seed)
	r.setFloors()
	r.judge = judgeFor(w)
	if err := r.newWorkers(col, geo, shares); err != nil {
		return nil, err
	}
	async, isAsync := sess.(engine.AsyncSession)
	for _, wk := range r.workers {
		wk.shared = !isAsync && w.QueueDepth > 1
	}
	var queues []engine.Queue
	if isAsync {
		if queues, err = openQueues(async, w.Workers, w.QueueDepth); err != nil {
			return nil, err
		}
	}

	spare := r.stagingSpare(queues)
	slots := w.QueueDepth + spare // per worker
	buffers, err := newBufferArena(w.Workers*slots, int(w.BlockSize), max(geo.Alignment, int(w.BufferAlign)), w.BufferMemory, int(w.HugepageSize), r.fills)
	if err != nil {
		for _, q := range queues {
			q.Close()
		}
		return nil, err
	}
	// Buffers are ready before the clock starts: filling a deep queue of
	// large blocks takes a while and is not part of the first second.
	bufs := make([][]byte, w.Workers*slots)
	for i := range bufs {
		bufs[i] = r.newBuffer(buffers.buffer(i))
	}

	defer widenProcessors(sess, isAsync, w.Workers*w.QueueDepth)()

	out := &Outcome{Kinds: kinds, Collector: col, Start: time.Now()}
	usage0 := metrics.ReadUsage()
	r.soFar = func(elapsed time.Duration) *Outcome {
		return &Outcome{
			Start: out.Start, End: time.Now(), Elapsed: elapsed, Kinds: kinds, Collector: col,
			CPU: metrics.ReadUsage().Since(usage0, r.now()-r.t0), MeanInFlight: r.meanSoFar(),
		}
	}
	r.t0 = r.now()
	r.rampEnd = r.t0 + w.Ramp.D()
	r.end = 1<<63 - 1
	if w.Duration > 0 {
		r.end = r.rampEnd + w.Duration.D()
	}
	if spare > 0 {
		for _, q := range queues {
			q.(engine.StagingQueue).Stage(r.end)
		}
	}

	done := r.start(queues, bufs, slots)
	next := r.tickUntil(done, col, interval, r.rampEnd+interval)
	if w.EndFsync && ctx.Err() == nil {
		// Every worker has ended: the sync is the last thing measured.
		for file := range geo.Files {
			r.sync(r.workers[0], file)
		}
	}
	if w.VerifyWrites {
		if done, err = r.verifyPass(geo, async, bufs, slots, spare, done, col, interval, next); err != nil {
			return nil, errors.Join(err, buffers.release())
		}
	}
	r.conclude(out, col, done, buffers, interval, usage0)
	return out, nil
}

// widenProcessors lets each of slots blocking sync calls of a session
// that blocks its processor (a cgo call) hold a P while the machine's own
// share stays free for the ticker, signals and the collector; it returns
// what undoes that.
func widenProcessors(sess engine.Session, async bool, slots int) (restore func()) {
	if pb, ok := sess.(engine.ProcessorBound); !ok || !pb.BlocksProcessor() || async {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(runtime.NumCPU() + slots)
	return func() { runtime.GOMAXPROCS(prev) }
}

// addSync adds the "sync" kind to kinds when the workload syncs what it
// writes (fsync, end_fsync); a session that cannot sync is a usage error.
func (r *run) addSync(kinds []string) ([]string, error) {
	if r.w.FsyncEvery == 0 && !r.w.EndFsync {
		return kinds, nil
	}
	syncer, ok := r.sess.(engine.Syncer)
	if !ok {
		return nil, engine.Usagef("%s:// targets cannot sync what was written, which fsync and end_fsync need", r.w.Target.Scheme)
	}
	r.syncer, r.syncKind = syncer, len(kinds)
	return append(kinds, "sync"), nil
}

// judgeFor is the steady-state judge of w's criterion, nil without one.
func judgeFor(w *spec.Workload) *steady.Judge {
	if w.SteadyState == nil {
		return nil
	}
	return steady.New(*w.SteadyState)
}

// verifyPass reads back what a write-only run wrote, once its writes
// (done) have ended, as fio's verify phase does, and returns when the
// reads end (or at once, returning done, when the writes were
// interrupted): each worker's generator, made again as it was, replays as
// reads as many ops as the worker started, checked as Verify checks reads
// (with a verify backlog, the worker reads back only what it has not yet).
// The reads run unpaced and past the run's bounds, their series going on
// from the interval ending at next; the run keeps the writes' stop
// reason unless the reads are interrupted.
func (r *run) verifyPass(geo engine.Geometry, async engine.AsyncSession, bufs [][]byte, slots, spare int,
	done <-chan struct{}, col *metrics.Collector, interval, next time.Duration) (<-chan struct{}, error) {
	reason, _ := r.reason.Load().(string)
	if r.ctx.Err() != nil || reason == StopInterrupted {
		return done, nil
	}
	<-done
	var queues []engine.Queue
	if async != nil {
		var err error
		if queues, err = openQueues(async, len(r.workers), r.w.QueueDepth); err != nil {
			return nil, err
		}
	}
	writes, shared := r.w, &workload.Shared{}
	for i, wk := range r.workers {
		if backlog, ok := wk.gen.(*workload.Backlog); ok {
			wk.gen = backlog.Rest()
			continue
		}
		wk.gen = workload.Reread(workload.New(writes, geo, i, shared, r.opts.Seed), wk.started.Load())
	}
	reads := *writes
	reads.ReadPercent, reads.Duration, reads.TotalBytes, reads.TotalOps, reads.RateIOPS, reads.RateBytes = 100, 0, 0, 0, 0, 0
	reads.ReadRate, reads.WriteRate = spec.DirRate{}, spec.DirRate{}
	r.w, r.verify, r.end = &reads, true, 1<<63-1
	r.lanes, r.issued, r.paced, r.floors = [engine.NumOpKinds]*lane{}, nil, false, [2]*floor{}
	r.stopOnce = sync.Once{}
	r.stopped.Store(false)
	for _, q := range queues {
		if spare > 0 {
			q.(engine.StagingQueue).Stage(r.end)
		}
	}
	done = r.start(queues, bufs, slots)
	r.tickUntil(done, col, interval, next)
	if r.ctx.Err() == nil {
		r.reason.Store(reason)
	}
	return done, nil
}

// conclude completes out once the loops have ended or been given up on:
// the ops abandoned, the final interval, the times, CPU, stop reason and
// pacing counts.
func (r *run) conclude(out *Outcome, col *metrics.Collector, done <-chan struct{}, buffers *bufferArena, interval time.Duration, usage0 metrics.Usage) {
	for _, wk := range r.workers {
		out.Abandoned += r.issuedInFlight(wk)
	}
	select {
	case <-done:
		_ = buffers.release() // unmapping our own mapping fails only on a bug
	default:
		// A loop stuck in its engine past the drain grace may still write
		// into its buffer; the mapping stays for the life of the process.
	}
	now := r.now()
	measured := max(now-r.rampEnd, 0)
	last := col.Tick(measured)
	last.Short = last.Dur < interval.Seconds()/2
	r.emit(last)
	out.MeanInFlight = r.meanSoFar()
	out.End = time.Now()
	out.Elapsed = measured
	out.CPU = metrics.ReadUsage().Since(usage0, now-r.t0)
	if reason, ok := r.reason.Load().(string); ok {
		out.StopReason = reason
	}
	if r.w.BoundsPerWorker && (out.StopReason == "" || out.StopReason == StopExhausted) {
		// Every worker stopped at its share, or a worker's ops ran out.
		switch {
		case r.w.TotalBytes > 0 && allDone(r.workers, func(wk *worker) int64 { return wk.bytesLeft.Load() }):
			out.StopReason = StopBytes
		case r.w.TotalOps > 0 && allDone(r.workers, func(wk *worker) int64 { return wk.opsLeft.Load() }):
			out.StopReason = StopOps
		}
	}
	if r.paced {
		out.Late = r.late.Load()
		out.Missed = r.missed(now)
		r.lagMu.Lock()
		out.Lag = r.lag.Clone()
		r.lagMu.Unlock()
	}
	out.BelowMinRate = r.belowMin.Load()
	if first := r.firstError.Load(); first != nil {
		out.FirstError = *first
	}
	if r.judge != nil {
		out.Steady = r.judge.State()
	}
}

// newWorkers makes the run's workers, each with its recorder and op
// generator: the op mix's when the workload has one, else the workload's
// own over the target's geometry.
func (r *run) newWorkers(col *metrics.Collector, geo engine.Geometry, shares []workload.Share) error {
	w, opts := r.w, r.opts
	sizes, err := objectSizes(r.sess, w)
	if err != nil {
		return err
	}
	shared := &workload.Shared{ObjectSizes: sizes, Steer: r.steerer()}
	var mix *workload.Mix
	if w.Mix != "" {
		objs := opts.Objects
		if objs == nil {
			objs = workload.NewObjects(geo.ObjectCount)
		}
		mix = workload.NewMix(shares, w, objs)
	}
	shareBytes, shareOps := workload.Shares(w, geo)
	for i := 0; i < w.Workers; i++ {
		wk := &worker{id: i, rec: col.NewRecorder()}
		wk.opsLeft.Store(shareOps[i])
		wk.bytesLeft.Store(shareBytes[i])
		if mix != nil {
			wk.gen = mix.Worker(i, opts.Seed)
		} else {
			wk.gen = workload.New(w, geo, i, shared, opts.Seed)
		}
		if w.VerifyBacklog > 0 {
			wk.gen = workload.NewBacklog(wk.gen, w.VerifyBacklog, w.BacklogBatch())
		}
		r.workers = append(r.workers, wk)
	}
	return nil
}

// allDone says whether every worker has no share left: left is 0 or
// below once the worker's ops reached it.
func allDone(workers []*worker, left func(*worker) int64) bool {
	for _, wk := range workers {
		if left(wk) > 0 {
			return false
		}
	}
	return true
}

// openQueues opens one queue of depth per worker, or none.
func openQueues(async engine.AsyncSession, workers, depth int) ([]engine.Queue, error) {
	var queues []engine.Queue
	for range workers {
		q, err := async.NewQueue(depth)
		if err != nil {
			for _, q := range queues {
				q.Close()
			}
			return nil, fmt.Errorf("opening a queue of depth %d: %w", depth, err)
		}
		queues = append(queues, q)
	}
	return queues, nil
}

// stagingSpare is how many ops beyond the depth each queue may stage: the
// least any queue takes, or 0. Staging starts ops later than the runner
// admits them, which only an unpaced run without a ramp or backlog can
// allow: a pacer's schedule, the ramp's boundary and the backlog are
// decided at admission.
func (r *run) stagingSpare(queues []engine.Queue) int {
	w := r.w
	spare := 0
	if !r.paced && w.Ramp == 0 && w.MaxBacklog == 0 && len(queues) > 0 {
		spare = 1 << 30
		for _, q := range queues {
			sq, ok := q.(engine.StagingQueue)
			if !ok {
				spare = 0
				break
			}
			spare = min(spare, sq.Spare())
		}
	}
	return spare
}

// start starts the workers' loops on their buffers, slots per worker (on
// their queues when the session is asynchronous), and returns a channel
// closed when every loop has ended.
func (r *run) start(queues []engine.Queue, bufs [][]byte, slots int) <-chan struct{} {
	var wg sync.WaitGroup
	for i, wk := range r.workers {
		mine := bufs[i*slots : (i+1)*slots]
		if queues != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer wk.queue.publish() // what the loop did since it last waited
				r.asyncLoop(wk, queues[i], mine)
			}()
			continue
		}
		if wk.slots == nil {
			wk.slots = make([]slotFlight, slots)
		}
		for j, buf := range mine {
			wg.Add(1)
			go func() { defer wg.Done(); r.syncLoop(wk, buf, &wk.slots[j]) }()
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// objectSizes returns the sizes of the set of objects of their own sizes
// that w addresses, which sess must hold; nil if w addresses none.
func objectSizes(sess engine.Session, w *spec.Workload) ([]int64, error) {
	if w.MinObjectSize == 0 {
		return nil, nil
	}
	set, ok := sess.(engine.ObjectSet)
	if !ok || len(set.ObjectSizes()) == 0 {
		return nil, engine.Usagef("%s:// targets hold no set of objects of their own sizes, which a minimum object size needs", w.Target.Scheme)
	}
	return set.ObjectSizes(), nil
}

// missed counts the paced ops due before the run stopped (or now) that
// were never issued; ops due while it drained were not missed.
func (r *run) missed(now time.Duration) int64 {
	stopAt := min(now, r.end)
	if at := time.Duration(r.stoppedAt.Load()); r.stopped.Load() {
		stopAt = min(stopAt, at)
	}
	shortest := r.w.MinBlockSize
	if shortest == 0 {
		shortest = r.w.BlockSize
	}
	var missed int64
	for _, l := range r.issued {
		if l == nil {
			continue // an unpaced direction misses nothing
		}
		mean := float64(l.pacer.Cost(int64(shortest+r.w.BlockSize) / 2)) // if no op was issued
		missed += pace.Missed(l.pacer, stopAt-r.t0, l.slot.Load(), l.paced.Load(), mean)
	}
	return missed
}

// setKinds returns the collector's kind names for the run and sets
// r.index and r.firstByte. A read/write workload's kinds are read and
// write, whatever the target, so that results compare across targets; a
// mix's are the session's, named as it names them (and so are its
// errors), each followed by its time to first byte if it has one, and the
// mix's shares are resolved to them.
func (r *run) setKinds(geo engine.Geometry) ([]string, []workload.Share, error) {
	for k := range r.index {
		r.index[k], r.firstByte[k] = -1, -1
	}
	if r.w.Mix == "" {
		r.index[engine.Read], r.index[engine.Write] = 0, 1
		return []string{engine.Read.String(), engine.Write.String()}, nil, nil
	}
	if geo.Layout != engine.Objects {
		return nil, nil, engine.Usagef("an op mix works on objects: %s:// targets have none", r.w.Target.Scheme)
	}
	r.errorNamer, _ = r.sess.(engine.ErrorNamer)
	var names, served []string
	byName := map[string]engine.OpKind{}
	for _, k := range engine.KindsOf(r.sess) {
		byName[k.Name] = k.Kind
		served = append(served, k.Name)
		r.index[k.Kind] = len(names)
		names = append(names, k.Name)
		if k.FirstByte != "" {
			r.firstByte[k.Kind] = len(names)
			names = append(names, k.FirstByte)
			r.derived = append(r.derived, k.FirstByte)
		}
	}
	mix, err := r.w.Mix.Shares()
	if err != nil {
		return nil, nil, err // Validate said it was fine
	}
	shares := make([]workload.Share, len(mix))
	for i, s := range mix {
		kind, ok := byName[s.Kind]
		if !ok {
			return nil, nil, engine.Usagef("%s:// targets do no %s ops (they do %s)", r.w.Target.Scheme, s.Kind, strings.Join(served, ", "))
		}
		shares[i] = workload.Share{Kind: kind, Percent: s.Percent}
	}
	return names, shares, nil
}

// tickUntil closes one series interval per Interval after the ramp, the
// first ending at next, until done, and stops the run on its deadline or
// on cancellation. It returns the end of the next interval to close.
func (r *run) tickUntil(done <-chan struct{}, col *metrics.Collector, interval, next time.Duration) time.Duration {
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	nextFloor := r.checkFloors(r.now())
	stopped := r.opts.Stop
	for {
		now := r.now()
		wait := next - now
		if now < r.rampEnd {
			wait = r.rampEnd - now
		}
		if bound := min(r.end, nextFloor); bound-now < wait {
			wait = max(bound-now, 0)
		}
		timer.Reset(wait)
		select {
		case <-done:
			if !r.pacedToItsEnd() {
				return next
			}
			// A paced run's schedule is its measured period: the
			// moments after its last op was due are measured too.
			done = nil
			continue
		case <-r.ctx.Done():
			r.stop(StopInterrupted)
			if done != nil {
				r.drain(done)
			}
			return next
		case <-stopped:
			// Ended from outside: as at the run's end, the ops in
			// flight complete, and the run with them.
			r.stop(StopTerminated)
			stopped = nil
			if done == nil {
				return next
			}
			continue
		case <-timer.C:
		}
		now = r.now()
		if now >= nextFloor {
			nextFloor = r.checkFloors(now)
		}
		if now >= r.end || r.belowMin.Load() != nil {
			r.stop(StopDuration) // a floor that failed stopped it first
			if done == nil {
				return next
			}
			select {
			case <-done:
			case <-r.ctx.Done():
				r.drain(done)
			}
			return next
		}
		if now < next {
			continue
		}
		t := col.Tick(next - r.rampEnd)
		r.emit(t)
		if r.judge != nil && r.judgeSecond(t) {
			r.stop(StopSteady)
		}
		next += interval
	}
}

// judgeSecond gives the steady-state judge one interval's ops and bytes,
// every kind's but syncs and first bytes, and reports whether the
// criterion holds.
func (r *run) judgeSecond(t metrics.Tick) bool {
	var ops, bytes int64
	for name, k := range t.Kinds {
		if name != "sync" && !slices.Contains(t.Derived, name) {
			ops += k.Ops
			bytes += k.Bytes
		}
	}
	return r.judge.Add(ops, bytes, t.Dur, t.T+r.w.Ramp.D().Seconds())
}

// pacedToItsEnd reports whether the workers ended because a paced run's
// next op was due after its duration: the run then lasts until then.
func (r *run) pacedToItsEnd() bool {
	reason, _ := r.reason.Load().(string)
	return r.paced && r.w.Duration > 0 && reason == StopDuration && r.now() < r.end
}

// emit adds the op counts to a closed interval and hands it to the
// subscribers, then the outcome so far to SoFar.
func (r *run) emit(t metrics.Tick) {
	for _, wk := range r.workers {
		t.Finished += wk.finished.Load()
		t.InFlight += r.issuedInFlight(wk)
	}
	t.InFlightBytes = r.backlog.Load()
	t.MeanInFlight = r.meanInFlight(r.now())
	t.Derived = r.derived
	t.Started = t.Finished + t.InFlight
	for _, sub := range r.opts.Subscribers {
		sub(t)
	}
	if r.opts.SoFar != nil {
		r.opts.SoFar(r.soFar(time.Duration(t.T * float64(time.Second))))
	}
}

// issuedInFlight counts a worker's ops in flight in its engine. Ops a
// staging queue holds beyond the depth have not started: it starts one
// as soon as one in flight completes, so never more than the depth are.
func (r *run) issuedInFlight(wk *worker) int64 {
	finished := wk.finished.Load()
	return min(wk.started.Load()-finished, int64(r.w.QueueDepth))
}

// drainGrace is how long an interrupted run waits for ops in flight (a
// dead OSD can hold one forever) before it reports without them.
const drainGrace = 10 * time.Second

// drain waits for the workers to finish, at most drainGrace.
func (r *run) drain(done <-chan struct{}) {
	t := time.NewTimer(drainGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// admit decides whether op, already made, may start now, applying the
// bounds, the pacer and the backlog. It returns the op's start time for
// latency (its scheduled time when paced) and whether it falls in the
// measured period. An admitted op is in the backlog until unqueue.
//
// now is the run's clock when the op is ready, or 0 to read it: a loop
// passes the reading that stamped its previous op's completion, taken
// just before, so that an op costs the clock one read, not two.
func (r *run) admit(wk *worker, timer *time.Timer, op *engine.Op, now time.Duration) (start time.Duration, measured, ok bool) {
	if r.refusing() {
		return 0, false, false
	}
	if now == 0 {
		now = r.now()
	}
	if now >= r.end {
		r.stop(StopDuration)
		return 0, false, false
	}
	start = now
	if l := r.lanes[op.Kind]; l != nil {
		if start, ok = r.schedule(timer, l, op, now); !ok {
			return 0, false, false
		}
	}
	n := int64(len(op.Buf))
	measured = start >= r.rampEnd
	// As in fio, an op starts while the bytes before it fall short of the
	// bound, so with sizes that vary the last one may pass it.
	switch {
	case !measured || op.Kind == engine.Read && r.w.VerifyBacklog > 0:
		// Reads back of a write-only workload are not what it bounds.
	case r.w.BoundsPerWorker:
		// The worker's own share: when it is done the others go on.
		if r.w.TotalOps > 0 && wk.opsLeft.Add(-1) < 0 || r.w.TotalBytes > 0 && wk.bytesLeft.Add(-n)+n <= 0 {
			return 0, false, false
		}
	case r.w.TotalOps > 0 && r.measuredOps.Add(1) > r.w.TotalOps:
		r.stop(StopOps)
		return 0, false, false
	case r.w.TotalBytes > 0 && r.measuredBytes.Add(n)-n >= int64(r.w.TotalBytes):
		r.stop(StopBytes)
		return 0, false, false
	}
	if r.w.MaxBacklog > 0 && !r.reserve(timer, n) {
		return 0, false, false
	}
	if measured {
		failpoint.Hit(failpoint.Measure)
	} else {
		failpoint.Hit(failpoint.Ramp)
	}
	return start, measured, true
}

// schedule takes op's place in the pacer's schedule and waits until it is
// due, then returns its due time; a late op is counted. It refuses the op,
// giving its place back, when the op is due after the run's end or the
// run is interrupted meanwhile.
func (r *run) schedule(timer *time.Timer, l *lane, op *engine.Op, now time.Duration) (due time.Duration, ok bool) {
	cost := l.pacer.Cost(int64(len(op.Buf)))
	due = r.t0 + l.pacer.Due(l.slot.Add(cost)-cost)
	if due >= r.end {
		l.slot.Add(-cost)
		r.stop(StopDuration)
		return 0, false
	}
	if wait := due - now; wait > 0 {
		if !r.sleepUntil(timer, due) {
			l.slot.Add(-cost)
			r.stop(StopInterrupted)
			return 0, false
		}
		if due >= r.rampEnd {
			r.recordLag(r.now() - due)
		}
	} else if -wait > lateThreshold {
		r.late.Add(1)
	}
	l.paced.Add(1)
	return due, true
}

// sleepUntil waits until the run's clock reaches t, to within
// microseconds on the real clock (internal/sleep), and reports false if
// the run was interrupted meanwhile. A test's Clock is followed by the
// time package's timers only, so on it the wait is a timer's.
func (r *run) sleepUntil(timer *time.Timer, t time.Duration) bool {
	if r.opts.Clock == nil {
		return sleep.Until(r.ctx, timer, engine.Now, t)
	}
	timer.Reset(t - r.now())
	select {
	case <-timer.C:
		return true
	case <-r.ctx.Done():
		timer.Stop()
		return false
	}
}

// recordLag counts how late the pacer issued an op that waited for its
// due time: the generator's own lateness, which latency from the
// intended start would otherwise hide.
func (r *run) recordLag(lag time.Duration) {
	r.lagMu.Lock()
	_ = r.lag.RecordValue(max(int64(lag), 0))
	r.lagMu.Unlock()
}

// backlogPoll is how often an op waiting for the backlog to fall looks
// again: the ops holding it complete in other goroutines.
const backlogPoll = 50 * time.Microsecond

// backlogFull says whether MaxBacklog bytes or more are in flight.
func (r *run) backlogFull() bool {
	return r.w.MaxBacklog > 0 && r.backlog.Load() >= int64(r.w.MaxBacklog)
}

// reserve adds n bytes to the backlog once fewer than MaxBacklog are in
// flight, waiting for that; it returns false if the run stops or ends
// meanwhile.
func (r *run) reserve(timer *time.Timer, n int64) bool {
	for {
		if cur := r.backlog.Load(); cur < int64(r.w.MaxBacklog) {
			if r.backlog.CompareAndSwap(cur, cur+n) {
				return true
			}
			continue
		}
		if r.refusing() {
			return false
		}
		if r.now() >= r.end {
			r.stop(StopDuration)
			return false
		}
		timer.Reset(backlogPoll)
		select {
		case <-timer.C:
		case <-r.ctx.Done():
			r.stop(StopInterrupted)
			return false
		}
	}
}

// unqueue takes a completed or failed op out of the backlog.
func (r *run) unqueue(op *engine.Op) {
	if r.w.MaxBacklog > 0 {
		r.backlog.Add(-int64(len(op.Buf)))
	}
}

// next makes the worker's next op, or stops the run when the workload has
// none left. Its data waits for fill, once the op is admitted.
func (r *run) next(wk *worker, op *engine.Op) bool {
	op.FirstByte, op.Completed = 0, 0
	if !wk.shared {
		return r.made(wk.gen.Next(op))
	}
	wk.mu.Lock()
	ok := wk.gen.Next(op)
	wk.mu.Unlock()
	return r.made(ok)
}

// made stops the run when a worker's workload made no op, and says
// whether it made one.
func (r *run) made(ok bool) bool {
	if !ok {
		r.stop(StopExhausted)
	}
	return ok
}

// fill writes an admitted write's data.
func (r *run) fill(op *engine.Op) {
	switch {
	case op.Kind != engine.Write:
	case r.payload != nil:
		r.payload.FillWrite(op)
	default:
		workload.Stamp(op)
	}
}

// finish hands a completed op back to its generator and records it.
func (r *run) finish(wk *worker, op *engine.Op, start time.Duration, measured bool, err error) {
	wk.gen.Done(op, err)
	wk.finished.Add(1)
	if err != nil && op.Kind == engine.Read && r.fills {
		// A failed read may have left part of an object in the buffer,
		// which a write would then send.
		r.newBuffer(op.Buf)
	}
	if !measured {
		return
	}
	if err == nil && r.verify && op.Kind == engine.Read {
		if r.payload != nil {
			err = r.payload.CheckRead(op)
		} else {
			err = workload.Check(op)
		}
	}
	if err != nil {
		if r.ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return // cut short by the interrupt, not a failure of the target
		}
		class := r.errorClass(err)
		wk.rec.RecordError(r.index[op.Kind], class)
		r.failed(op.Kind.String(), class, errors.Is(err, engine.ErrVerify))
		return
	}
	end := op.Completed
	if end == 0 {
		end = r.now()
	}
	wk.rec.Record(r.index[op.Kind], end-start, int64(len(op.Buf)), end)
	if r.opts.Completed != nil {
		r.opts.Completed(Completion{Worker: wk.id, Op: op, Start: start - r.rampEnd, End: end - r.rampEnd})
	}
	r.countDone(op)
	if fb := r.firstByte[op.Kind]; fb >= 0 && op.FirstByte >= start {
		wk.rec.Record(fb, op.FirstByte-start, 0, op.FirstByte)
	}
}

// errorClass names a failed op's error for the result's counts.
func (r *run) errorClass(err error) string {
	if r.errorNamer != nil {
		if class := r.errorNamer.ErrorClass(err); class != "" {
			return class
		}
	}
	return engine.ErrorKind(err)
}

// syncLoop is one in-flight slot of a worker on a synchronous session.
func (r *run) syncLoop(wk *worker, buf []byte, flight *slotFlight) {
	op := &engine.Op{Buf: buf}
	timer := newStoppedTimer()
	// The slot's own counts, handed to the recorder once at the end: no
	// lock per op.
	var queue metrics.QueueCounts
	defer wk.rec.AddQueue(&queue)
	var completed time.Duration // the reading that stamped the last op's completion
	for {
		if !r.next(wk, op) {
			return
		}
		start, measured, ok := r.admit(wk, timer, op, completed)
		completed = 0
		if !ok {
			wk.gen.Done(op, engine.ErrNotIssued)
			return
		}
		r.fill(op)
		started := wk.started.Add(1)
		var depth int64
		if measured {
			// The worker's other slots share these counters; reading
			// finished costs no more than the Add that just took their
			// cache line.
			depth = started - wk.finished.Load()
		}
		begin := r.sinceRamp(start)
		flight.begin(begin)
		err := r.do(op)
		if op.Completed == 0 {
			op.Completed = r.now() // the time finish would read
			completed = op.Completed
		}
		flight.end(begin, r.sinceRamp(op.Issued), r.sinceRamp(op.Completed))
		r.unqueue(op)
		if measured {
			// One Do is one submission and one completion, as fio counts
			// a synchronous engine's.
			queue.AddDepth(int(depth))
			queue.AddSubmit(1)
			queue.AddComplete(1)
		}
		r.finish(wk, op, start, measured, err)
		if err == nil && op.Kind == engine.Write && r.w.FsyncEvery > 0 && wk.writes.Add(1)%int64(r.w.FsyncEvery) == 0 {
			r.sync(wk, op.File)
			completed = 0
		}
		if r.thinksAfter(wk) {
			r.think(timer)
			completed = 0
		}
	}
}

// thinksAfter counts an op of wk's completed and reports whether wk
// pauses now, after ThinkEvery of them.
func (r *run) thinksAfter(wk *worker) bool {
	return r.w.ThinkTime > 0 && wk.thought.Add(1)%max(r.w.ThinkEvery, 1) == 0
}

// think pauses a worker for ThinkTime, ThinkSpin of it busy, waking at
// the run's end or interruption.
func (r *run) think(timer *time.Timer) {
	start := r.now()
	for spin := r.w.ThinkSpin.D(); r.now()-start < spin; {
	}
	if until := min(start+r.w.ThinkTime.D(), r.end); until > r.now() {
		r.sleepUntil(timer, until)
	}
}

// sync makes file durable through the session and times it as a sync op
// of wk's, measured when it starts after the ramp.
func (r *run) sync(wk *worker, file int) {
	start := r.now()
	err := r.syncer.Sync(r.ctx, file)
	end := r.now()
	switch {
	case start < r.rampEnd:
	case err == nil:
		wk.rec.Record(r.syncKind, end-start, 0, end)
	case r.ctx.Err() != nil && errors.Is(err, context.Canceled):
		// cut short by the interrupt, not a failure of the target
	default:
		wk.rec.RecordError(r.syncKind, engine.ErrorKind(err))
		r.failed("sync", engine.ErrorKind(err), false)
	}
}

// failed notes an op of kind that failed with an error of class (a
// verification's when verify): the run's first error, and the end of the
// run if the workload stops on it.
func (r *run) failed(kind, class string, verify bool) {
	r.firstError.CompareAndSwap(nil, &class)
	if r.w.StopOnError != "" && r.w.StopsOnError(kind, verify) {
		r.stop(StopError)
	}
}

func (r *run) do(op *engine.Op) error {
	if err := failpoint.Op(failpoint.OpPoint); err != nil {
		return err
	}
	if r.w.OpTimeout <= 0 {
		return r.sess.Do(r.ctx, op)
	}
	ctx, cancel := context.WithTimeoutCause(r.ctx, r.w.OpTimeout.D(), engine.ErrTimeout)
	defer cancel()
	err := r.sess.Do(ctx, op)
	if err != nil && ctx.Err() != nil && r.ctx.Err() == nil {
		return engine.ErrTimeout
	}
	return err
}

// slot is an async op and what the runner must remember about it.
type slot struct {
	op       engine.Op
	start    time.Duration
	measured bool
	depth    int // the worker's ops in flight when it started, itself included
}

// asyncLoop keeps QueueDepth ops in flight on one queue.
func (r *run) asyncLoop(wk *worker, q engine.Queue, bufs [][]byte) {
	defer q.Close()
	depth := len(bufs) // the queue's depth and the ops it may stage
	free := make([]*slot, 0, depth)
	for i := range depth {
		s := &slot{op: engine.Op{Buf: bufs[i]}}
		s.op.Tag = s
		free = append(free, s)
	}
	done := make([]*engine.Op, depth)
	timer := newStoppedTimer()
	inFlight, stopping := 0, false
	// The loop's own counts, handed to the recorder once at the end. An op
	// is counted when it comes back, so one that was staged and never
	// started counts nowhere.
	var queue metrics.QueueCounts
	defer wk.rec.AddQueue(&queue)
	measuring := false // a measured op was submitted: reaps count from then on
	// With FsyncEvery, the write that completes the count sets syncFile:
	// nothing more is submitted until the ops in flight are done and the
	// file is synced, as fio orders a sync after the writes before it.
	var writes int64
	syncFile := -1
	thinking := false // ThinkEvery ops completed: drain, then think
	// reaped is the reading that stamped the op just reaped, which the
	// op submitted next in its slot starts from.
	var reaped time.Duration
	// submit fills the free slots, unless pacing says wait or a bound
	// says stop.
	submit := func() {
		for !stopping && syncFile < 0 && !thinking && len(free) > 0 {
			if inFlight > 0 && (r.backlogFull() || r.ahead()) {
				return // reap what completed before the next op may start
			}
			s := free[len(free)-1]
			if !r.next(wk, &s.op) {
				stopping = true
				return
			}
			start, measured, ok := r.admit(wk, timer, &s.op, reaped)
			reaped = 0
			if !ok {
				wk.gen.Done(&s.op, engine.ErrNotIssued)
				stopping = true
				return
			}
			r.fill(&s.op)
			s.start, s.measured = start, measured
			wk.started.Add(1)
			err := failpoint.Op(failpoint.OpPoint)
			if err == nil {
				err = q.Submit(&s.op)
			}
			if err != nil {
				r.unqueue(&s.op)
				r.finish(wk, &s.op, start, measured, err)
				continue
			}
			free = free[:len(free)-1]
			inFlight++
			wk.queue.begin(r.sinceRamp(start))
			// Ops staged beyond the depth start only as others complete,
			// so never more than the depth are in flight in the engine.
			s.depth = min(inFlight, r.w.QueueDepth)
			measuring = measuring || measured
		}
	}
	for {
		if syncFile >= 0 && inFlight == 0 {
			r.sync(wk, syncFile)
			syncFile = -1
		}
		if thinking && inFlight == 0 {
			r.think(timer)
			thinking, reaped = false, 0
		}
		submit()
		if inFlight == 0 {
			if stopping {
				return
			}
			continue
		}
		min := 1
		if r.paced && !stopping {
			min = 0
		}
		wk.queue.publish()
		n, err := q.Reap(r.ctx, min, done)
		if err != nil && n == 0 {
			if r.ctx.Err() == nil {
				// A queue that cannot reap cannot make progress; end the
				// run rather than spin.
				r.stop(StopInterrupted)
			}
			// Ops still in flight finish in q.Close.
			return
		}
		issued := 0
		for _, op := range done[:n] {
			s := op.Tag.(*slot)
			free = append(free, s)
			inFlight--
			r.unqueue(op)
			reaped = r.landed(wk, s)
			if errors.Is(op.Err, engine.ErrNotIssued) {
				wk.gen.Done(op, op.Err)
				wk.started.Add(-1) // it never started
				continue
			}
			issued++
			if s.measured {
				queue.AddDepth(s.depth)
				queue.AddSubmit(1) // Submit takes one op per call
			}
			start := s.start
			if r.lanes[op.Kind] == nil && op.Issued != 0 {
				start = op.Issued
			}
			r.finish(wk, op, start, s.measured, op.Err)
			if op.Err == nil && op.Kind == engine.Write && r.w.FsyncEvery > 0 {
				if writes++; writes%int64(r.w.FsyncEvery) == 0 {
					syncFile = op.File
				}
			}
			if r.thinksAfter(wk) {
				thinking = true
			}
			// Each slot goes back in flight as soon as it is checked,
			// not after the whole batch: the queue stays deeper.
			submit()
		}
		if measuring {
			queue.AddComplete(issued)
		}
		if n == 0 && min == 0 {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

func newStoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// newBuffer prepares b for writes, if the workload writes (the session's
// payload or the default pattern), and returns it.
func (r *run) newBuffer(b []byte) []byte {
	if !r.fills {
		return b // reads fill it; the kernel zeroes it until then
	}
	if r.payload != nil {
		r.payload.InitBuffer(b)
	} else {
		workload.Fill(b)
	}
	return b
}
