package metrics_test

import (
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
