package aggregate

import (
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/metrics"
)

// second is one host's second of reads: ops reads, each of latency ns.
func second(t float64, ops, ns int64) metrics.Tick {
	h := metrics.NewHistogram()
	h.RecordValues(ns, ops)
	return metrics.Tick{
		Second:     metrics.Second{T: t, Dur: 1, Kinds: map[string]metrics.KindSecond{"read": metrics.NewKindSecond(ops, ops*4096, 0, ns, h)}},
		Histograms: map[string]*hdr.Histogram{"read": h},
	}
}

// Seconds pass on in order once every host has sent them, whatever order
// the hosts' seconds come in; a lost host is no longer waited for, and
// the rates before and after its loss are windows of their own.
func TestSeriesAdderWaitsForEveryHostThenGoesOnWithoutALostOne(t *testing.T) {
	var got []metrics.Second
	var p99s []int64
	a := NewSeriesAdder([]string{"host a", "host b", "host c"}, nil, func(tk metrics.Tick) {
		got = append(got, tk.Second)
		p99s = append(p99s, tk.Histograms["read"].ValueAtQuantile(99))
	})
	a.Add(0, second(1, 100, 1_000))
	a.Add(0, second(2, 100, 1_000))
	a.Add(1, second(1, 200, 2_000))
	if len(got) != 0 {
		t.Fatalf("second 1 passed on before host c sent it: %+v", got)
	}
	a.Add(2, second(1, 300, 3_000_000))
	if len(got) != 1 || got[0].Kinds["read"].Ops != 600 {
		t.Fatalf("after every host's first second: %+v; want one second of 600 reads", got)
	}
	// The third host's 300 slow reads are half the second: its p99 is theirs.
	if p99s[0] < 2_990_000 {
		t.Errorf("merged p99 %d ns; want that of the slow host's reads (3 ms)", p99s[0])
	}
	a.Lose(2) // c sent its first second only
	if len(got) != 1 {
		t.Fatalf("second 2 passed on without host b's: %+v", got)
	}
	a.Add(1, second(2, 200, 2_000))
	a.Add(0, second(3, 100, 1_000))
	a.Add(1, second(3, 200, 2_000))
	a.Close()
	var ops int64
	for _, s := range got {
		ops += s.Kinds["read"].Ops
	}
	if len(got) != 3 || ops != 600+300+300 {
		t.Fatalf("%d seconds of %d reads; want 3 of 1200", len(got), ops)
	}
	w := a.Windows()
	if len(w) != 2 || w[0].Hosts != 3 || w[1].Hosts != 2 || w[1].Note != "after host c was lost" {
		t.Fatalf("windows %+v; want one of 3 hosts and one of 2 after c", w)
	}
	if w[0].Ops["read"].IOPS.Mean != 600 || w[1].Ops["read"].IOPS.Mean != 300 || w[1].FromSeconds != 1 || w[1].ToSeconds != 3 {
		t.Errorf("window rates %+v and %+v; want 600 IOPS before, 300 from 1 s to 3 s", w[0], w[1])
	}
}
