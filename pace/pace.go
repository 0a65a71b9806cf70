// Package pace schedules operations for rate-limited, open-loop runs. A
// pacer is a pure function of the schedule: it never sleeps, so it is
// tested with tables and cannot drift.
package pace

import (
	"math"
	"time"
)

// Pacer says when operation number n (counting from 0) is due, relative to
// the start of the run.
type Pacer interface {
	Due(n uint64) time.Duration
}

// Constant schedules Rate operations per second, evenly spaced.
type Constant struct {
	Rate float64 // operations per second; must be positive
}

var _ Pacer = Constant{}

// Due returns n/Rate seconds.
func (c Constant) Due(n uint64) time.Duration {
	return time.Duration(math.Round(float64(n) / c.Rate * float64(time.Second)))
}

// Slots returns how many operations a pacer has due before elapsed, which
// is what an open-loop run should have issued by then.
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
