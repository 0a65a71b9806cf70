// Package mergetest checks a result merged from several hosts' results
// the way a user would: its counts are the hosts' added, its percentiles
// those of the hosts' histograms added, never an average.
package mergetest

import (
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
)

// AddsUp fails t unless m's ops of kind are its hosts' sum, and not none,
// and its p50, p99 and p99.9 those of its hosts' histograms of kind
// added; it returns the sum.
func AddsUp(t testing.TB, m *result.Result, kind string) int64 {
	t.Helper()
	var sum int64
	added := metrics.NewHistogram()
	for _, h := range m.Hosts {
		sum += h.Ops[kind].Ops
		hh, err := hdr.Decode([]byte(h.Histograms[kind]))
		if err != nil {
			t.Fatalf("a host's %s histogram: %v", kind, err)
		}
		added.Merge(hh)
	}
	if got := m.Ops[kind].Ops; got != sum || sum == 0 {
		t.Errorf("merged %d %s ops; the hosts made %d", got, kind, sum)
	}
	for _, q := range []float64{50, 99, 99.9} {
		if got, want := m.Ops[kind].Latency.Percentiles.At(q), added.ValueAtQuantile(q); got != want {
			t.Errorf("merged p%g %d ns; the hosts' histograms added give %d", q, got, want)
		}
	}
	return sum
}
