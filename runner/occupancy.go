package runner

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cephbench/cephbench/engine"
)

// Queue occupancy is the time integral of the ops in flight. Each op adds
// its end and takes away its start (both in nanoseconds past the ramp's
// end, and no earlier), so the integral from the ramp's end to t is that
// sum plus t for each op still in flight: kept per loop, it costs no
// clock read of its own, and reading it once per interval gives the
// interval's exact mean. An op's end or start lands in the sum a moment
// after its timestamp; the interval it straddles then lends the next that
// moment, and the run's total stays exact.

// slotFlight is a synchronous slot's integral. Its one writer is the
// slot's goroutine, which has at most one op in flight, so one word
// holds the sum and whether an op is in flight (the low bit); the ticker
// reads it at any time. It fills a cache line, so that slots do not share
// one.
type slotFlight struct {
	v atomic.Int64 // 2×sum, plus 1 while an op is in flight
	_ [56]byte
}

// begin notes an op that started at start (relative to the ramp's end).
func (f *slotFlight) begin(start int64) { f.v.Store(f.v.Load() - 2*start + 1) }

// end notes that the op in flight, which started at start, ended at end;
// issued, if later, is when the engine actually started it.
func (f *slotFlight) end(start, issued, end int64) {
	f.v.Store(f.v.Load() + 2*(end+start-max(start, issued)) - 1)
}

// at is the integral up to t.
func (f *slotFlight) at(t int64) int64 {
	v := f.v.Load()
	if v&1 != 0 {
		return (v-1)/2 + t
	}
	return v / 2
}

// queueFlight is an async queue's integral. Its loop keeps sum and
// inFlight on its own and publishes them (publish) before it waits for
// completions, so the ticker, reading between two publications, sees the
// queue as it was at the first: the next publication settles the
// difference. Its fields are the loop's alone but for the published pair.
type queueFlight struct {
	sum, inFlight int64
	mu            sync.Mutex
	pubSum, pubIn int64
}

// begin notes an op that started at start.
func (f *queueFlight) begin(start int64) { f.sum -= start; f.inFlight++ }

// end notes an op that ended at end, having started at start; issued,
// if later, is when the engine actually started it (a staged op), from
// which it was in flight.
func (f *queueFlight) end(start, issued, end int64) {
	f.sum += end + start - max(start, issued)
	f.inFlight--
}

// publish makes the loop's figures the ticker's.
func (f *queueFlight) publish() {
	f.mu.Lock()
	f.pubSum, f.pubIn = f.sum, f.inFlight
	f.mu.Unlock()
}

// at is the integral up to t, as last published.
func (f *queueFlight) at(t int64) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pubSum + f.pubIn*t
}

// sinceRamp is t in nanoseconds past the ramp's end, and 0 before it: the
// time an op spent in flight during the ramp is not measured.
func (r *run) sinceRamp(t time.Duration) int64 { return int64(max(t-r.rampEnd, 0)) }

// flightArea is the integral of every loop's ops in flight from the
// ramp's end to t (nanoseconds past it): op-nanoseconds.
func (r *run) flightArea(t int64) int64 {
	var area int64
	for _, wk := range r.workers {
		for i := range wk.slots {
			area += wk.slots[i].at(t)
		}
		area += wk.queue.at(t)
	}
	return area
}

// meanInFlight closes an interval of the occupancy at now, returning the
// mean number of ops in flight since the last one closed (or the ramp
// ended). It is called from the ticking goroutine only.
func (r *run) meanInFlight(now time.Duration) float64 {
	t := r.sinceRamp(now)
	area := r.flightArea(t)
	dt := t - r.flightAt
	if dt <= 0 {
		return 0
	}
	mean := float64(area-r.flightSum) / float64(dt)
	r.flightAt, r.flightSum = t, area
	return mean
}

// landed notes in wk's queue occupancy that s's op came back, stamping
// its completion as finish would (an op staged and never started ends
// where it began); it returns the clock's reading when it took one.
func (r *run) landed(wk *worker, s *slot) (read time.Duration) {
	begin := r.sinceRamp(s.start)
	if errors.Is(s.op.Err, engine.ErrNotIssued) {
		wk.queue.end(begin, 0, begin)
		return 0
	}
	if s.op.Completed == 0 {
		s.op.Completed = r.now()
		read = s.op.Completed
	}
	wk.queue.end(begin, r.sinceRamp(s.op.Issued), r.sinceRamp(s.op.Completed))
	return read
}

// meanSoFar is the mean number of ops in flight from the ramp's end to
// the interval the ticker closed last.
func (r *run) meanSoFar() float64 {
	if r.flightAt <= 0 {
		return 0
	}
	return float64(r.flightSum) / float64(r.flightAt)
}
