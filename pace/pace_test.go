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

func TestThroughputDueFollowsTheBytesSentBefore(t *testing.T) {
	// Ops of 1K, 64K and 3K at 1 MiB/s: each is due when the bytes before
	// it are, whatever its own length.
	p := Throughput{Rate: 1 << 20}
	var sent uint64
	for i, c := range []struct {
		len  int64
		want time.Duration
	}{
		{1 << 10, 0},
		{64 << 10, 976563 * time.Nanosecond},  // after 1K
		{3 << 10, 63476563 * time.Nanosecond}, // after 65K
		{1, 66406250 * time.Nanosecond},       // after 68K
	} {
		if got := p.Due(sent); got != c.want {
			t.Errorf("op %d (after %d bytes): due %v; want %v", i, sent, got, c.want)
		}
		sent += p.Cost(c.len)
	}
	for _, c := range []struct {
		rate float64
		sent uint64
		want time.Duration
	}{
		{1 << 20, 1 << 20, time.Second},
		{5 << 20, 1 << 20, 200 * time.Millisecond},
		{3, 1, 333333333},
	} {
		if got := (Throughput{c.rate}).Due(c.sent); got != c.want {
			t.Errorf("Throughput{%g}.Due(%d) = %v; want %v", c.rate, c.sent, got, c.want)
		}
	}
}

func TestCostCountsOpsOrBytes(t *testing.T) {
	cases := []struct {
		p     Pacer
		bytes int64
		want  uint64
	}{
		{Constant{100}, 4096, 1},
		{Constant{100}, 0, 1},
		{Throughput{100}, 4096, 4096},
		{Throughput{100}, 0, 0},
	}
	for _, c := range cases {
		if got := c.p.Cost(c.bytes); got != c.want {
			t.Errorf("%T.Cost(%d) = %d; want %d", c.p, c.bytes, got, c.want)
		}
	}
}

func TestSlots(t *testing.T) {
	cases := []struct {
		p       Pacer
		elapsed time.Duration
		want    uint64
	}{
		{Constant{1000}, 0, 0},
		{Constant{1000}, time.Nanosecond, 1}, // op 0 is due at once
		{Constant{1000}, time.Second, 1000},
		{Constant{1000}, time.Second + 1, 1001},
		{Constant{10}, 250 * time.Millisecond, 3},
		{Throughput{1 << 20}, time.Second, 1 << 20},
		{Throughput{4 << 20}, 500 * time.Millisecond, 2 << 20},
	}
	for _, c := range cases {
		if got := Slots(c.p, c.elapsed); got != c.want {
			t.Errorf("Slots(%+v, %v) = %d; want %d", c.p, c.elapsed, got, c.want)
		}
	}
}

func TestMissedCountsOpsNeverIssued(t *testing.T) {
	cases := []struct {
		name      string
		p         Pacer
		elapsed   time.Duration
		sent, ops uint64
		fallback  float64
		want      int64
	}{
		{"op rate, on schedule", Constant{1000}, time.Second, 1000, 1000, 1, 0},
		{"op rate, short", Constant{1000}, time.Second, 700, 700, 1, 300},
		{"op rate, ahead", Constant{1000}, time.Second, 1001, 1001, 1, 0},
		// 1M due, 512K sent in 16 ops of 32K: 16 more of the mean length.
		{"bytes, short", Throughput{1 << 20}, time.Second, 512 << 10, 16, 1, 16},
		// A part of an op still counts as one.
		{"bytes, a part short", Throughput{1 << 20}, time.Second, 1<<20 - 1, 32, 1, 1},
		{"bytes, none sent", Throughput{1 << 20}, time.Second, 0, 0, 64 << 10, 16},
		{"bytes, on schedule", Throughput{1 << 20}, time.Second, 1 << 20, 10, 1, 0},
	}
	for _, c := range cases {
		if got := Missed(c.p, c.elapsed, c.sent, c.ops, c.fallback); got != c.want {
			t.Errorf("%s: Missed = %d; want %d", c.name, got, c.want)
		}
	}
}
