package aggregate

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/result/netresult"
	"github.com/cephbench/cephbench/spec"
)

// made builds a result of one op kind with a known rate and latencies
// (nanoseconds), placed in a plan.
func made(t *testing.T, step, target string, repeat int, iops float64, lats ...int64) *result.Result {
	t.Helper()
	h := metrics.NewHistogram()
	for _, l := range lats {
		if err := h.RecordValue(l); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.EncodeV2()
	if err != nil {
		t.Fatal(err)
	}
	return &result.Result{
		Schema: result.Schema, Name: step, Spec: spec.Workload{Target: spec.Target{Scheme: "null"}, BlockSize: 4096},
		Plan: &result.PlanStep{Step: step, Target: target, Repeat: repeat, Of: 3},
		Ops: map[string]metrics.KindSummary{"read": {
			Ops: int64(len(lats)), IOPS: metrics.Stats{Mean: iops}, BandwidthBps: metrics.Stats{Mean: iops * 4096},
			Latency: metrics.LatencyOf(h),
		}},
		CPU:        metrics.CPU{Percent: iops / 100},
		Histograms: map[string]string{"read": string(enc)},
		Disks:      []result.DiskUsage{{Name: "sda", Util: iops / 10}, {Name: "sdb", Util: 1}},
	}
}

func TestGroupsAggregateRepeatsExactly(t *testing.T) {
	s := &Set{Results: []*result.Result{
		made(t, "rr", "a", 1, 100, 1000, 2000, 3000, 4000),
		made(t, "rr", "b", 1, 50, 10000),
		made(t, "rr", "a", 2, 200, 5000, 6000, 7000, 8000),
		made(t, "rr", "a", 3, 600, 9000, 10000, 11000, 12000),
	}}
	groups := s.Groups()
	if len(groups) != 2 || groups[0].Target != "a" || groups[1].Target != "b" {
		t.Fatalf("groups %+v; want a then b", groups)
	}
	a := groups[0]
	if a.IOPS.N() != 3 || a.IOPS.Mean != 300 || a.IOPS.Min != 100 || a.IOPS.Max != 600 {
		t.Errorf("IOPS %+v; want mean 300 of 100, 200, 600", a.IOPS)
	}
	// Sample standard deviation: sqrt(((-200)^2 + (-100)^2 + 300^2) / 2).
	if want := math.Sqrt((40000 + 10000 + 90000) / 2.0); math.Abs(a.IOPS.Stddev-want) > 1e-9 {
		t.Errorf("IOPS stddev %v; want %v", a.IOPS.Stddev, want)
	}
	if a.BandwidthBps.Mean != 300*4096 || a.CPUPercent.Mean != 3 || a.DiskUtil.Mean != 30 {
		t.Errorf("bandwidth %v, cpu %v, util %v; want 300x4096, 3, 30 (the busiest disk)", a.BandwidthBps.Mean, a.CPUPercent.Mean, a.DiskUtil.Mean)
	}
	// The merged histogram holds all 12 latencies: its median is the 6th
	// (6000 ns) and its maximum the largest, within HDR's precision.
	if p50 := a.Merged.Percentiles.At(50); p50 < 5990 || p50 > 6010 {
		t.Errorf("merged p50 %d; want 6000", p50)
	}
	if a.Merged.MaxNs < 11990 || a.Merged.MaxNs > 12010 || a.Merged.MinNs < 995 || a.Merged.MinNs > 1005 {
		t.Errorf("merged min %d max %d; want 1000 and 12000", a.Merged.MinNs, a.Merged.MaxNs)
	}
	if h := a.Histogram(); h == nil || h.TotalCount() != 12 {
		t.Errorf("merged histogram %v; want 12 values", h)
	}
	if groups[1].IOPS.N() != 1 || groups[1].IOPS.Stddev != 0 {
		t.Errorf("one repeat: %+v", groups[1].IOPS)
	}
}

func TestLoadFolderInManifestOrderAndLooseFiles(t *testing.T) {
	dir := t.TempDir()
	first, second := made(t, "z-first", "a", 1, 10, 1000), made(t, "a-second", "a", 1, 20, 1000)
	// Named so that name order is the reverse of the plan's.
	if err := second.Save(filepath.Join(dir, "1.json")); err != nil {
		t.Fatal(err)
	}
	if err := first.Save(filepath.Join(dir, "2.json")); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil || s.Results[0].Name != "a-second" {
		t.Fatalf("without a manifest: %v, first %s; want name order", err, s.Results[0].Name)
	}
	m := &result.Manifest{Schema: result.ManifestSchema, Plan: "p", Steps: []result.ManifestStep{
		{ID: "z-first", Status: result.StepDone, Results: []string{"2.json"}},
		{ID: "a-second", Status: result.StepDone, Results: []string{"1.json"}},
	}}
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	s, err = Load(dir)
	if err != nil || s.Results[0].Name != "z-first" || s.Sources[0].Manifest == nil {
		t.Fatalf("with a manifest: %v, first %v; want the manifest's order", err, s.Results)
	}

	// A loose result without a plan is its own step, repeats counted in
	// the order given.
	loose := made(t, "x", "", 0, 5, 1000)
	loose.Plan = nil
	f := filepath.Join(t.TempDir(), "x.json")
	if err := loose.Save(f); err != nil {
		t.Fatal(err)
	}
	s, err = Load(f, f)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Results[1].Plan; p.Step != "x" || p.Target != "null://" || p.Repeat != 2 {
		t.Errorf("a loose result's placing: %+v", p)
	}
	for _, bad := range []string{filepath.Join(dir, "missing.json"), t.TempDir()} {
		if _, err := Load(bad); err == nil {
			t.Errorf("Load(%s) succeeded", bad)
		}
	}
	notResult := filepath.Join(t.TempDir(), "n.json")
	os.WriteFile(notResult, []byte(`{"schema":"something/else"}`), 0o644)
	if _, err := Load(notResult); err == nil {
		t.Errorf("a JSON file of another schema loaded")
	}
}

func TestNetResultsLoadAsBandwidthAndRoundTrips(t *testing.T) {
	h := metrics.NewHistogram()
	h.RecordValue(50_000)
	enc, _ := h.EncodeV2()
	n := netresult.Result{
		Schema: netresult.Schema, Name: "net-forward", Server: "10.0.0.1:5201",
		Params: netresult.Params{Streams: 2, Duration: spec.Duration(2 * time.Second)},
		Start:  time.Unix(100, 0), End: time.Unix(102, 0),
		Up:     &netresult.Throughput{Streams: 2, Receiver: netresult.Count{Bytes: 2e9, BitsPerSec: 8e9}, PerSecond: metrics.Stats{Mean: 8e9, Min: 7.2e9, Max: 8.8e9, Samples: 2}},
		Series: []netresult.Interval{{Start: 0, End: 1, Up: &netresult.IntervalSum{Bytes: 9e8}}, {Start: 1, End: 2, Up: &netresult.IntervalSum{Bytes: 1.1e9}}},
		RTT:    &netresult.RTT{Latency: metrics.LatencyOf(h), Histogram: string(enc)},
	}
	path, err := n.SaveNew(filepath.Join(t.TempDir(), "net.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	g := s.Groups()
	if len(g) != 1 || g[0].Kind != "up" || g[0].Target != "net://10.0.0.1:5201" {
		t.Fatalf("groups %+v", g)
	}
	if g[0].BandwidthBps.Mean != 1e9 || g[0].Merged.MaxNs < 49_000 || len(s.Results[0].Series) != 2 || s.Results[0].Series[1].Kinds["up"].Bytes != 1.1e9 {
		t.Errorf("bandwidth %v B/s, rtt max %d, series %+v", g[0].BandwidthBps.Mean, g[0].Merged.MaxNs, s.Results[0].Series)
	}

	// In a plan, it keeps its place.
	n.Plan = &result.PlanStep{Step: "net", Target: "peer", Repeat: 2, Of: 3}
	if path, err = n.SaveNew(path); err != nil {
		t.Fatal(err)
	}
	if s, err = Load(path); err != nil {
		t.Fatal(err)
	}
	if g := s.Groups(); g[0].Step != "net" || g[0].Target != "peer" || s.Results[0].Plan.Repeat != 2 {
		t.Errorf("a plan's net result: %+v", s.Results[0].Plan)
	}
}

func TestAFolderSkipsOtherCephbenchFiles(t *testing.T) {
	dir := t.TempDir()
	if err := made(t, "a", "x", 1, 10, 1000).Save(filepath.Join(dir, "a.json")); err != nil {
		t.Fatal(err)
	}
	// A report saved beside the results is not one of them.
	if err := os.WriteFile(filepath.Join(dir, "report.json"), []byte(`{"schema": "cephbench.report/v1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil || len(s.Results) != 1 {
		t.Fatalf("Load: %v, %d results; want the one result", err, len(s.Results))
	}
	if _, err := Load(filepath.Join(dir, "report.json")); err == nil {
		t.Errorf("a report named as a result loaded")
	}
}
