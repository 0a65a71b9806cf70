// Package pace schedules operations for rate-limited, open-loop runs. A
// pacer is a pure function of the schedule: it never sleeps, so it is
// tested with tables and cannot drift.
package pace

import (
	"math"
	"time"
)

// Pacer says when an operation is due, relative to the start of the run.
// A schedule counts units: an op costs Cost units, and the op that follows
// n units of ops is due at Due(n). Ops cost one unit each on an op-rate
// schedule and their length in bytes on a byte-rate one, so the ops of a
// run may differ in cost.
type Pacer interface {
	// Due is when the op that follows n units is due.
	Due(n uint64) time.Duration
	// Cost is how many units an op of the given length takes.
	Cost(bytes int64) uint64
}

// Constant schedules Rate operations per second, evenly spaced.
type Constant struct {
	Rate float64 // operations per second; must be positive
}

var _ Pacer = Constant{}

// Due returns n/Rate seconds: op number n is due then.
func (c Constant) Due(n uint64) time.Duration { return at(n, c.Rate) }

// Cost is one unit per op, whatever its length.
func (Constant) Cost(int64) uint64 { return 1 }

// Throughput schedules bytes at Rate bytes per second: an op is due when
// the bytes of the ops before it are, so ops of any length keep the byte
// rate (rados load-gen's --target-throughput).
type Throughput struct {
	Rate float64 // bytes per second; must be positive
}

var _ Pacer = Throughput{}

// Due returns sent/Rate seconds: the op that follows sent bytes is due then.
func (t Throughput) Due(sent uint64) time.Duration { return at(sent, t.Rate) }

// Cost is an op's length in bytes.
func (Throughput) Cost(bytes int64) uint64 { return uint64(max(bytes, 0)) }

// at is when unit n is due at rate units per second.
func at(n uint64, rate float64) time.Duration {
	return time.Duration(math.Round(float64(n) / rate * float64(time.Second)))
}

// Slots returns how many units a pacer has due before elapsed, which is
// what an open-loop run should have issued by then.
func Slots(p Pacer, elapsed time.Duration) uint64 {
	// Binary search over a monotonic schedule: no assumption on its shape.
	lo, hi := uint64(0), uint64(1)
	for p.Due(hi) < elapsed {
		lo, hi = hi, hi*2
		if hi > 1<<62 {
			return hi
		}
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if p.Due(mid) < elapsed {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// Missed returns how many ops were due before elapsed but never issued,
// when ops ops costing sent units were: the units short, in ops of the
// mean cost issued, or of fallback units when none was. An op-rate
// schedule's ops all cost one unit, so its count is exact.
func Missed(p Pacer, elapsed time.Duration, sent, ops uint64, fallback float64) int64 {
	due := Slots(p, elapsed)
	if due <= sent {
		return 0
	}
	mean := fallback
	if ops > 0 {
		mean = float64(sent) / float64(ops)
	}
	if mean <= 0 {
		mean = 1
	}
	return int64(math.Ceil(float64(due-sent) / mean))
}
