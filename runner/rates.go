package runner

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/pace"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// lane is one schedule of a paced run and the units its ops took.
type lane struct {
	pacer pace.Pacer
	slot  atomic.Uint64 // the pacer's units taken
	paced atomic.Uint64 // the ops that took them
}

// due is when the lane's next op is due, from the run's start.
func (l *lane) due() time.Duration { return l.pacer.Due(l.slot.Load()) }

// newPacer returns the schedule of ops per second or bytes per second
// (the other zero), spaced as the workload's rate process says; nil for
// neither.
func newPacer(w *spec.Workload, iops, bytes float64, seed uint64) pace.Pacer {
	poisson := w.RateProcess == "poisson"
	switch {
	case iops > 0 && poisson:
		return pace.NewPoisson(iops, 1, seed)
	case iops > 0:
		return pace.Constant{Rate: iops}
	case bytes > 0 && poisson:
		return pace.NewPoisson(bytes, uint64(w.BlockSize), seed)
	case bytes > 0:
		return pace.Throughput{Rate: bytes}
	}
	return nil
}

// setLanes gives each op kind its lane: the total rate's for all, or
// reads and writes their own.
func (r *run) setLanes(seed uint64) {
	w := r.w
	newLane := func(iops, bytes float64, seed uint64) *lane {
		if p := newPacer(w, iops, bytes, seed); p != nil {
			return &lane{pacer: p}
		}
		return nil
	}
	if total := newLane(w.RateIOPS, w.RateBytes, seed); total != nil {
		for k := range r.lanes {
			r.lanes[k] = total
		}
		r.issued, r.paced = []*lane{total}, true
		r.lag = metrics.NewHistogram()
		return
	}
	// Each direction draws its own intervals, as fio seeds each its own.
	// A rate of a direction the workload does not issue paces nothing.
	if w.Reads() {
		r.lanes[engine.Read] = newLane(w.ReadRate.IOPS, w.ReadRate.Bytes, seed)
		r.issued = append(r.issued, r.lanes[engine.Read])
	}
	if w.Writes() {
		r.lanes[engine.Write] = newLane(w.WriteRate.IOPS, w.WriteRate.Bytes, seed+1)
		r.issued = append(r.issued, r.lanes[engine.Write])
	}
	r.paced = r.lanes[engine.Read] != nil || r.lanes[engine.Write] != nil
	if r.paced {
		r.lag = metrics.NewHistogram()
	}
}

// ahead reports whether no op the run may issue next is due yet: every
// kind it issues is paced and ahead of its schedule.
func (r *run) ahead() bool {
	if !r.paced {
		return false
	}
	now := r.now() - r.t0
	for _, l := range r.issued {
		if l == nil || l.due() <= now {
			return false
		}
	}
	return true
}

// steerer returns what turns the direction a mixed op drew into the one
// to issue under rates per direction, or nil when the run has no such
// choice to make.
func (r *run) steerer() func(engine.OpKind) engine.OpKind {
	read, write := r.lanes[engine.Read], r.lanes[engine.Write]
	if read == write || !r.w.Reads() || !r.w.Writes() {
		return nil // one schedule or none, or one direction
	}
	due := func(l *lane) time.Duration {
		if l == nil {
			return 0 // unpaced: always due
		}
		return l.due()
	}
	return func(drawn engine.OpKind) engine.OpKind {
		other := engine.Write
		if drawn == engine.Write {
			other = engine.Read
		}
		if pace.Steer(due(r.lanes[drawn]), due(r.lanes[other]), r.now()-r.t0) {
			return other
		}
		return drawn
	}
}

// floor is one direction's minimum rate and what it has done.
type floor struct {
	mu    sync.Mutex // guards check
	check pace.Floor
	kind  engine.OpKind
	bytes bool         // the minimum counts bytes, not ops
	done  atomic.Int64 // measured units completed
}

// setFloors sets a floor for each direction with a minimum rate that
// the run issues.
func (r *run) setFloors() {
	cycle := r.w.RateCycle.D()
	if cycle <= 0 {
		cycle = time.Second
	}
	for d, rate := range []spec.DirRate{r.w.ReadRate, r.w.WriteRate} {
		kind := []engine.OpKind{engine.Read, engine.Write}[d]
		issues := kind == engine.Read && r.w.Reads() || kind == engine.Write && r.w.Writes()
		if !rate.HasMin() || !issues {
			continue
		}
		f := &floor{kind: kind, check: pace.Floor{Min: rate.MinIOPS, Cycle: cycle}}
		if rate.MinBytes > 0 {
			f.bytes, f.check.Min = true, rate.MinBytes
		}
		r.floors[d] = f
	}
}

// countDone adds a measured completed op to its direction's floor.
func (r *run) countDone(op *engine.Op) {
	var f *floor
	switch op.Kind {
	case engine.Read:
		f = r.floors[0]
	case engine.Write:
		f = r.floors[1]
	}
	if f == nil {
		return
	}
	if f.bytes {
		f.done.Add(int64(len(op.Buf)))
	} else {
		f.done.Add(1)
	}
}

// checkFloors compares each direction with its minimum at now, and
// stops the run when one fell below it. It returns when to look next
// (max when there is no floor).
func (r *run) checkFloors(now time.Duration) (next time.Duration) {
	next = 1<<63 - 1
	elapsed := now - r.rampEnd
	for _, f := range r.floors {
		if f == nil {
			continue
		}
		f.mu.Lock()
		var rate float64
		var below bool
		if elapsed >= 0 {
			rate, below = f.check.Check(elapsed, uint64(f.done.Load()))
		}
		next = min(next, r.rampEnd+f.check.NextCheck())
		f.mu.Unlock()
		if below {
			unit := "ops"
			if f.bytes {
				unit = "bytes"
			}
			r.belowMin.CompareAndSwap(nil, &result.RateShortfall{
				Kind: f.kind.String(), Unit: unit, Min: f.check.Min, Got: rate, CycleSeconds: f.check.Cycle.Seconds(),
			})
			r.stop(StopMinRate)
		}
	}
	return next
}
