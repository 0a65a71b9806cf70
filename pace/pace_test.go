package pace

import (
	"testing"
	"time"
)

func TestConstantDue(t *testing.T) {
	cases := []struct {
		rate float64
		n    uint64
		want time.Duration
	}{
		{1000, 0, 0},
		{1000, 1, time.Millisecond},
		{1000, 1500, 1500 * time.Millisecond},
		{3, 1, 333333333},
		{0.5, 2, 4 * time.Second},
	}
	for _, c := range cases {
		if got := (Constant{c.rate}).Due(c.n); got != c.want {
			t.Errorf("Constant{%g}.Due(%d) = %v; want %v", c.rate, c.n, got, c.want)
		}
	}
}

func TestSlots(t *testing.T) {
	cases := []struct {
		rate    float64
		elapsed time.Duration
		want    uint64
	}{
		{1000, 0, 0},
		{1000, time.Nanosecond, 1}, // op 0 is due at once
		{1000, time.Second, 1000},
		{1000, time.Second + 1, 1001},
		{10, 250 * time.Millisecond, 3},
	}
	for _, c := range cases {
		if got := Slots(Constant{c.rate}, c.elapsed); got != c.want {
			t.Errorf("Slots(rate %g, %v) = %d; want %d", c.rate, c.elapsed, got, c.want)
		}
	}
}
