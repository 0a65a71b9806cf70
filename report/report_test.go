package report

import (
	"strings"
	"testing"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

func TestLatencyUnits(t *testing.T) {
	for ns, want := range map[float64]string{0: "-", 850: "850ns", 412300: "412.3µs", 3.21e6: "3.21ms", 1.024e9: "1.024s"} {
		if got := Latency(ns); got != want {
			t.Errorf("Latency(%g) = %q; want %q", ns, got, want)
		}
	}
}

func TestProgressTableHasRadosBenchColumns(t *testing.T) {
	var b strings.Builder
	p := NewProgress(&b)
	sec := metrics.Second{T: 1, Dur: 1, Kinds: map[string]metrics.KindSecond{
		"write": {Ops: 100, Bytes: 100 << 20, MeanNs: 8e6, Percentiles: metrics.Percentiles{{P: 99, Ns: 2e7}}},
	}}
	p.Tick(metrics.Tick{Second: sec, Started: 108, Finished: 100, InFlight: 8})
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "sec Cur ops   started  finished  avg MB/s  cur MB/s") {
		t.Fatalf("table:\n%s", b.String())
	}
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != "1 8 108 100 100 100 100 0.008 0.02" {
		t.Errorf("row %q", lines[1])
	}
}

// A get's time to first byte is the get again: the table and the live
// line count each get once, at its own latency.
func TestPerSecondViewsLeaveDerivedKindsOut(t *testing.T) {
	sec := metrics.Second{T: 1, Dur: 1, Kinds: map[string]metrics.KindSecond{
		"get":      {Ops: 50, Bytes: 50 << 20, MeanNs: 4e6, Percentiles: metrics.Percentiles{{P: 99, Ns: 1e7}}},
		"get-ttfb": {Ops: 50, MeanNs: 1e6, Percentiles: metrics.Percentiles{{P: 99, Ns: 3e7}}},
	}}
	tick := metrics.Tick{Second: sec, Started: 54, Finished: 50, InFlight: 4, Derived: []string{"get-ttfb"}}
	var b strings.Builder
	NewProgress(&b).Tick(tick)
	row := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")[1]
	if f := strings.Fields(row); strings.Join(f, " ") != "1 4 54 50 50 50 50.0 0.004 0.01" {
		t.Errorf("row %q; want 50 ops a second at 4ms, p99 10ms", row)
	}
	b.Reset()
	NewLive(&b, "[1/1] s3", 0).Tick(tick)
	if !strings.Contains(b.String(), "now 50.0 MiB/s 50.0 IOPS p99 10.00ms") {
		t.Errorf("live line %q; want the gets alone", b.String())
	}
}

func TestSummaryAndTable(t *testing.T) {
	r := &result.Result{
		Name: "file-randread-4K", ElapsedSeconds: 10, StopReason: result.StopInterrupted, Interrupted: true,
		Spec: spec.Workload{BlockSize: 4096, Workers: 1, QueueDepth: 16},
		Ops: map[string]metrics.KindSummary{"read": {
			Ops: 1000, IOPS: metrics.Stats{Mean: 100}, BandwidthBps: metrics.Stats{Mean: 409600},
			Latency: metrics.Latency{MeanNs: 5e5, MaxNs: 9e6, Percentiles: metrics.Percentiles{{P: 50, Ns: 4e5}, {P: 99, Ns: 2e6}, {P: 99.9, Ns: 8e6}}},
		}},
		Errors: map[string]int64{"EIO": 2},
	}
	var b strings.Builder
	Summary(&b, r)
	for _, want := range []string{"INTERRUPTED", "1000 ops", "100 IOPS", "p50 400.0µs", "p99 2.00ms", "p99.9 8.00ms", "EIO=2"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	Table(&b, []*result.Result{r})
	if !strings.Contains(b.String(), "file-randread-4K*") || !strings.Contains(b.String(), "2.00ms") {
		t.Errorf("table:\n%s", b.String())
	}
	// A run below its minimum rate failed, and says which and by how much.
	r.StopReason, r.Interrupted = result.StopMinRate, false
	r.BelowMinRate = &result.RateShortfall{Kind: "read", Unit: "ops", Min: 500, Got: 120.4, CycleSeconds: 1}
	b.Reset()
	Summary(&b, r)
	if want := "FAILED: reads fell below their minimum rate of 500 ops/s: 120 ops/s over 1s"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
}

// A run watched on a cluster says in its summary whether the cluster was
// at rest, and what unsettled it; a run not watched says nothing of it.
func TestSummaryHasTheClusterLine(t *testing.T) {
	r := &result.Result{Name: "rados-bench-write", StopReason: result.StopDuration}
	var b strings.Builder
	Summary(&b, r)
	if strings.Contains(b.String(), "cluster") {
		t.Errorf("a run not watched:\n%s", b.String())
	}
	r.Cluster = &cluster.Pair{During: &cluster.During{Samples: 20, IntervalSeconds: 1}}
	b.Reset()
	Summary(&b, r)
	if !strings.Contains(b.String(), "\n  cluster at rest during the run (20 samples, every 1s)\n") {
		t.Errorf("summary:\n%s", b.String())
	}
	r.Cluster.During.Events = []cluster.Event{{What: "deep scrub", At: 7, Until: 11, PGs: 2}, {What: "osd.2 down", At: 40}}
	b.Reset()
	ClusterLines(&b, r, "")
	if b.String() != "cluster NOT AT REST during the run: deep scrub on 2 PGs from 7 s to 11 s; osd.2 down at 40 s\n" {
		t.Errorf("lines %q", b.String())
	}
}

// A paced run's summary gives its pacer's lag, and says that the client
// could not keep the schedule when the lag's p99 passes result.LagLimit.
func TestSummaryHasThePacersLag(t *testing.T) {
	lagOf := func(each int64) *result.PacerLag {
		h := metrics.NewHistogram()
		for range 100 {
			_ = h.RecordValue(each)
		}
		l, err := result.NewPacerLag(h)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	r := &result.Result{Name: "paced", ElapsedSeconds: 1, StopReason: result.StopDuration,
		Ops: map[string]metrics.KindSummary{"read": {Ops: 100}}}
	var b strings.Builder
	Summary(&b, r)
	if strings.Contains(b.String(), "pacer") {
		t.Errorf("an unpaced run's summary speaks of a pacer:\n%s", b.String())
	}
	r.PacerLag = lagOf(3000)
	b.Reset()
	Summary(&b, r)
	if want := "pacer: 100 ops waited for their time, issued late by p50 3.0µs p99 3.0µs max 3.0µs\n"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
	r.PacerLag = lagOf(2_000_000)
	b.Reset()
	Summary(&b, r)
	if want := "over 100.0µs at p99, the client could not keep the schedule"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
}
