package metrics_test

import (
	"reflect"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/metrics"
)

func hostTick(ops int64, latencies ...int64) metrics.Tick {
	h := metrics.NewHistogram()
	for _, l := range latencies {
		h.RecordValue(l)
	}
	return metrics.Tick{
		Second:     metrics.Second{T: 1, Dur: 1, Kinds: map[string]metrics.KindSecond{"read": metrics.NewKindSecond(ops, ops*4096, 1, latencies[0], h)}},
		Histograms: map[string]*hdr.Histogram{"read": h},
		Started:    ops, Finished: ops, InFlight: 2,
	}
}

// The merged second's counts are the hosts' added and its p99 that of
// every op of every host, which averaging the hosts' p99s does not give.
func TestAddedTicksAddCountsAndHistograms(t *testing.T) {
	fast := make([]int64, 99)
	for i := range fast {
		fast[i] = 100_000 // 100 µs
	}
	a := hostTick(99, fast...)
	b := hostTick(1, 50_000_000) // one 50 ms op
	m := metrics.AddTicks([]metrics.Tick{a, b})
	r := m.Kinds["read"]
	if r.Ops != 100 || r.Bytes != 100*4096 || r.Errors != 2 || m.Finished != 100 || m.InFlight != 4 {
		t.Errorf("merged %d ops, %d bytes, %d errors, %d finished, %d in flight", r.Ops, r.Bytes, r.Errors, m.Finished, m.InFlight)
	}
	all := metrics.NewHistogram()
	all.Merge(a.Histograms["read"])
	all.Merge(b.Histograms["read"])
	if got, want := m.Histograms["read"].ValueAtQuantile(99), all.ValueAtQuantile(99); got != want {
		t.Errorf("merged p99 %d; the added histograms give %d", got, want)
	}
	if avg := (a.Kinds["read"].Percentiles.At(99) + b.Kinds["read"].Percentiles.At(99)) / 2; avg == r.Percentiles.At(99) {
		t.Errorf("the merged p99 %d is the hosts' average: the test shows nothing", avg)
	}
	if m.Histograms["read"] == a.Histograms["read"] || a.Histograms["read"].TotalCount() != 99 {
		t.Error("the merge changed or aliased a host's histogram")
	}
}

// A sum reused for the next second carries nothing of the last one over:
// it equals a fresh sum of its own ticks.
func TestATickSumResetForTheNextSecondStartsEmpty(t *testing.T) {
	var s metrics.TickSum
	s.Add(hostTick(3, 50_000_000, 60_000_000, 70_000_000))
	s.Add(hostTick(1, 1_000))
	first := s.Sum().Histograms["read"]
	s.Reset()
	next := []metrics.Tick{hostTick(2, 2_000, 3_000), hostTick(1, 4_000)}
	for _, tk := range next {
		s.Add(tk)
	}
	got, want := s.Sum(), metrics.AddTicks(next)
	if s.Ticks() != 2 || !reflect.DeepEqual(got.Kinds["read"], want.Kinds["read"]) || got.Finished != want.Finished || got.InFlight != want.InFlight {
		t.Errorf("the reused sum has %d ticks, %+v; a fresh one %+v", s.Ticks(), got.Kinds["read"], want.Kinds["read"])
	}
	if got.Histograms["read"] != first || got.Histograms["read"].Max() != want.Histograms["read"].Max() {
		t.Errorf("the reused sum's histogram: reused %v, max %d; want %d", got.Histograms["read"] == first, got.Histograms["read"].Max(), want.Histograms["read"].Max())
	}
}
