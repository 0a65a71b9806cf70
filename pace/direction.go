package pace

import (
	"math"
	"sync"
	"time"
)

// Steer chooses the direction of a mixed run's next op when reads and
// writes keep schedules of their own, as fio's rate_ddir does: the drawn
// direction if its next op is due by now, else the other one if that is
// due, else whichever is due first. A direction without a schedule is
// always due (due 0). It reports whether to take the other direction.
func Steer(drawnDue, otherDue, now time.Duration) bool {
	switch {
	case drawnDue <= now:
		return false
	case otherDue <= now:
		return true
	}
	return otherDue < drawnDue
}

// Poisson schedules units at Rate per second on average, with
// exponential intervals between ops (a Poisson process), as fio's
// rate_process=poisson: op k of Quantum units (1 on an op-rate schedule,
// the block size on a byte-rate one) is due at the sum of k draws of mean
// Quantum/Rate seconds, and the units within an op are spread over its
// interval. Draws are a pure function of Seed and k, so the schedule is
// the same for every caller; Due is safe for concurrent use.
type Poisson struct {
	rate    float64
	quantum uint64
	seed    uint64

	mu sync.Mutex
	// marks[i] is when op i*markEvery is due: the sums are kept only at
	// marks, so memory grows by one number per markEvery ops.
	marks []time.Duration
}

// markEvery is how many ops lie between two kept sums.
const markEvery = 128

// NewPoisson returns a Poisson schedule of rate units per second (rate
// positive), each op quantum units (at least 1), drawn from seed.
func NewPoisson(rate float64, quantum uint64, seed uint64) *Poisson {
	return &Poisson{rate: rate, quantum: max(quantum, 1), seed: seed, marks: []time.Duration{0}}
}

var _ Pacer = (*Poisson)(nil)

// Due returns when the op that follows n units is due.
func (p *Poisson) Due(n uint64) time.Duration {
	k, within := n/p.quantum, n%p.quantum
	start := p.opDue(k)
	if within == 0 {
		return start
	}
	interval := p.draw(k)
	return start + time.Duration(float64(interval)*float64(within)/float64(p.quantum))
}

// Cost is one unit per op on an op-rate schedule, its length otherwise.
func (p *Poisson) Cost(bytes int64) uint64 {
	if p.quantum == 1 {
		return 1
	}
	return uint64(max(bytes, 0))
}

// opDue is when op k is due: the sum of the k draws before it.
func (p *Poisson) opDue(k uint64) time.Duration {
	m := k / markEvery
	p.mu.Lock()
	for uint64(len(p.marks)) <= m {
		last := uint64(len(p.marks) - 1)
		t := p.marks[last]
		for i := last * markEvery; i < (last+1)*markEvery; i++ {
			t += p.draw(i)
		}
		p.marks = append(p.marks, t)
	}
	t := p.marks[m]
	p.mu.Unlock()
	for i := m * markEvery; i < k; i++ {
		t += p.draw(i)
	}
	return t
}

// draw is the interval after op k: exponential, of mean quantum/rate s.
func (p *Poisson) draw(k uint64) time.Duration {
	u := float64(mix64(p.seed^(k*0x9e3779b97f4a7c15))>>11) / (1 << 53) // [0, 1)
	mean := float64(p.quantum) / p.rate * float64(time.Second)
	return time.Duration(-math.Log1p(-u) * mean)
}

// mix64 is splitmix64's finaliser: a well-spread hash of x.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Settle is how long a run goes before its minimum rates are checked,
// as fio allows a job two seconds to settle.
const Settle = 2 * time.Second

// Floor checks one direction's minimum rate as fio's check_min_rate
// does: from Settle on, once per Cycle, the units done since the last
// check over the time since, against Min units per second. It is not
// safe for concurrent use.
type Floor struct {
	Min   float64       // units per second; must be positive
	Cycle time.Duration // how often to check; must be positive

	started bool // a first count is taken
	lastAt  time.Duration
	last    uint64
}

// Check looks at the units done by elapsed (time since the measured
// start) and returns the rate over the last cycle and whether it fell
// below Min; it says nothing (0, false) before a check is due. A
// direction that has done nothing yet is not checked, as fio does not.
func (f *Floor) Check(elapsed time.Duration, done uint64) (rate float64, below bool) {
	if elapsed < Settle {
		return 0, false
	}
	if !f.started || f.last == 0 {
		f.started, f.lastAt, f.last = true, elapsed, done
		return 0, false
	}
	spent := elapsed - f.lastAt
	if spent < f.Cycle {
		return 0, false
	}
	rate = float64(done-f.last) / spent.Seconds()
	f.lastAt, f.last = elapsed, done
	return rate, rate < f.Min
}

// NextCheck is the earliest elapsed time at which Check may say more.
func (f *Floor) NextCheck() time.Duration {
	if !f.started {
		return Settle
	}
	return f.lastAt + f.Cycle
}
