package pace

import (
	"math"
	"testing"
	"time"
)

func TestSteer(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		drawn, other, now time.Duration
		switches          bool
	}{
		{drawn: 5 * ms, other: 1 * ms, now: 5 * ms, switches: false}, // drawn is due: keep it
		{drawn: 9 * ms, other: 4 * ms, now: 5 * ms, switches: true},  // drawn ahead, other behind
		{drawn: 9 * ms, other: 0, now: 5 * ms, switches: true},       // other unpaced: always due
		{drawn: 9 * ms, other: 7 * ms, now: 5 * ms, switches: true},  // both ahead: the sooner
		{drawn: 7 * ms, other: 9 * ms, now: 5 * ms, switches: false},
		{drawn: 0, other: 0, now: 5 * ms, switches: false},
	} {
		if got := Steer(c.drawn, c.other, c.now); got != c.switches {
			t.Errorf("Steer(%v, %v, %v) = %v, want %v", c.drawn, c.other, c.now, got, c.switches)
		}
	}
}

// A Poisson schedule keeps its mean rate with intervals as spread as
// their mean (an exponential's standard deviation is its mean), and is
// the same for the same seed.
func TestPoisson(t *testing.T) {
	const n = 100000
	p := NewPoisson(1000, 1, 7)
	var sum, sumSq float64
	prev := p.Due(0)
	for k := uint64(1); k <= n; k++ {
		due := p.Due(k)
		d := (due - prev).Seconds()
		if d < 0 {
			t.Fatalf("op %d due at %v, before op %d at %v", k, due, k-1, prev)
		}
		sum += d
		sumSq += d * d
		prev = due
	}
	mean := sum / n
	sd := math.Sqrt(sumSq/n - mean*mean)
	if math.Abs(mean-0.001) > 0.00002 || math.Abs(sd/mean-1) > 0.03 {
		t.Errorf("mean interval %.6fs, sd/mean %.3f; want 0.001s and 1", mean, sd/mean)
	}
	if q := NewPoisson(1000, 1, 7); q.Due(12345) != p.Due(12345) {
		t.Error("the same seed gives another schedule")
	}
	if q := NewPoisson(1000, 1, 8); q.Due(12345) == p.Due(12345) {
		t.Error("another seed gives the same schedule")
	}
	if got := Slots(p, p.Due(5000)+1); got != 5001 {
		t.Errorf("%d ops due just after op 5000's time, want 5001", got)
	}
	// On a byte schedule an op of quantum bytes is due where the op-rate
	// schedule of the same seed has it, and bytes within it in between.
	b := NewPoisson(4096*1000, 4096, 7)
	if b.Due(4096*300) != p.Due(300) || b.Due(4096*300+2048) <= p.Due(300) || b.Due(4096*300+2048) >= p.Due(301) {
		t.Errorf("byte schedule: op 300 at %v, half-way %v; op-rate schedule %v, %v", b.Due(4096*300), b.Due(4096*300+2048), p.Due(300), p.Due(301))
	}
	if b.Cost(4096) != 4096 || p.Cost(4096) != 1 {
		t.Error("costs")
	}
}

// The floor waits two seconds, takes a first count, then compares each
// cycle's rate with its minimum, as fio's check_min_rate.
func TestFloor(t *testing.T) {
	f := Floor{Min: 100, Cycle: 500 * time.Millisecond}
	steps := []struct {
		at    time.Duration
		done  uint64
		rate  float64
		below bool
	}{
		{at: time.Second, done: 100},                                 // settling
		{at: Settle, done: 200},                                      // first count
		{at: Settle + 400*time.Millisecond, done: 250},               // within the cycle
		{at: Settle + 500*time.Millisecond, done: 260, rate: 120},    // 60 in 0.5s
		{at: Settle + time.Second, done: 300, rate: 80, below: true}, // 40 in 0.5s
		{at: Settle + 1500*time.Millisecond, done: 400, rate: 200},   // back above
	}
	for _, s := range steps {
		rate, below := f.Check(s.at, s.done)
		if math.Abs(rate-s.rate) > 1e-9 || below != s.below {
			t.Errorf("at %v with %d done: %g, %v; want %g, %v", s.at, s.done, rate, below, s.rate, s.below)
		}
	}
	if next := f.NextCheck(); next != Settle+2*time.Second {
		t.Errorf("next check at %v", next)
	}
	// Nothing done yet: no check, as fio has no count to compare.
	idle := Floor{Min: 100, Cycle: time.Second}
	for _, at := range []time.Duration{Settle, Settle + time.Second, Settle + 2*time.Second} {
		if _, below := idle.Check(at, 0); below {
			t.Errorf("an idle direction is below its floor at %v", at)
		}
	}
}
