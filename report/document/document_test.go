package document

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

func made(step, target string, repeat int, iops, p99 float64) *result.Result {
	return &result.Result{
		Schema: result.Schema, Name: step, Spec: spec.Workload{BlockSize: 4096},
		Host: result.Host{Hostname: "client1", Kernel: "6.1", CPUs: 8},
		Plan: &result.PlanStep{Step: step, Target: target, Repeat: repeat, Of: 3},
		Ops: map[string]metrics.KindSummary{"write": {
			IOPS: metrics.Stats{Mean: iops, Min: iops / 2, Max: iops * 2}, BandwidthBps: metrics.Stats{Mean: iops * 4096},
			Latency: metrics.Latency{MeanNs: 1e6, Percentiles: metrics.Percentiles{{P: 99, Ns: int64(p99)}}},
		}},
		CPU: metrics.CPU{Percent: 50},
	}
}

func sample() *aggregate.Set {
	s := &aggregate.Set{Sources: []aggregate.Source{{Path: "results/x", Manifest: &result.Manifest{
		Plan: "ssd", Status: "failed", Started: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
		Steps: []result.ManifestStep{{ID: "randwrite @rbd #1", Status: result.StepDone}, {ID: "read @rbd #1", Status: result.StepFailed, Error: "pool gone"}},
	}}}}
	for i, iops := range []float64{1000, 1200, 1400} {
		s.Results = append(s.Results, made("randwrite", "rbd", i+1, iops, 2e6))
	}
	for i, iops := range []float64{300, 400, 500} {
		r := made("randwrite", "cephfs", i+1, iops, 8e6)
		r.Disks = []result.DiskUsage{{Name: "vda", Util: 90}}
		s.Results = append(s.Results, r)
	}
	s.Results[0].Cluster = &cluster.Pair{Before: &cluster.Snapshot{Health: cluster.Health{Status: "HEALTH_WARN", Checks: map[string]string{"POOL_NO_REDUNDANCY": "1 pool(s) have no replicas"}},
		OSDs: cluster.OSDCounts{Total: 3, Up: 3, In: 3}, Pools: []cluster.Pool{{Name: "rbd", Type: "replicated", Size: 1, MinSize: 1, PGNum: 32}}},
		During: &cluster.During{Samples: 10, IntervalSeconds: 1, Events: []cluster.Event{{What: "deep scrub", At: 2, Until: 6, PGs: 3}}}}
	s.Results[1].Cluster = &cluster.Pair{During: &cluster.During{Samples: 10, IntervalSeconds: 1}}
	s.Results[5].Interrupted, s.Results[5].ElapsedSeconds = true, 4.5
	s.Results[5].Notes = []string{"the filesystem refused O_DIRECT"}
	return s
}

func TestTextHasTheAggregatedRowsSideBySideAndContext(t *testing.T) {
	var b bytes.Buffer
	if err := New(sample(), "title").Text(&b, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		// mean 1200 of 1000, 1200, 1400 (stddev 200); MiB/s 1200*4096/2^20.
		"randwrite   rbd     write  4K  3  1200  1000  1400     200    4.7",
		"randwrite*  cephfs  write  4K  3   400   300   500     100    1.6", "*: a repeat was interrupted",
		// A repeat's row: its own rate and its seconds' min and max.
		"#2", "1200   600  2400",
		"Side by side:", "rbd IOPS", "cephfs IOPS",
		"HEALTH_WARN (POOL_NO_REDUNDANCY: 1 pool(s) have no replicas)", "OSDs 3 up, 3 in, of 3", "pool rbd: replicated size 1/1, 32 PGs",
		"results/x: plan ssd, failed, started 2026-11-30 10:00:00 UTC",
		"client1: kernel 6.1, 8 CPUs", "randwrite @cephfs #3: the filesystem refused O_DIRECT",
		"read @rbd #1: failed (pool gone)", "randwrite @cephfs #3: interrupted after 4.5s",
		"Cluster during the runs", "randwrite @rbd #1: cluster NOT AT REST during the run: deep scrub on 3 PGs from 2 s to 6 s",
		"randwrite @rbd #2: cluster at rest during the run (10 samples, every 1s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "client1:") != 1 {
		t.Errorf("the host is listed more than once:\n%s", out)
	}
}

func TestMarkdownCSVAndJSONCarryTheSameFigures(t *testing.T) {
	d := New(sample(), "a | title")
	var md bytes.Buffer
	if err := d.Markdown(&md, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(md.String(), "\n")
	if lines[0] != `# a \| title` || !strings.HasPrefix(lines[2], "| STEP | TARGET | OP |") || lines[3] != "|"+strings.Repeat(" --- |", len(measurementHeader)) {
		t.Errorf("markdown heading and table header:\n%s", md.String())
	}
	if !strings.Contains(md.String(), "| randwrite | rbd | write | 4K | 3 | 1200 | 1000 | 1400 | 200 |") {
		t.Errorf("markdown lacks the rbd row:\n%s", md.String())
	}

	var c bytes.Buffer
	if err := d.CSV(&c); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// A header, then per measurement its row and one per repeat.
	if len(rows) != 1+2*(1+3) || strings.Join(rows[0][:7], ",") != "step,job,target,kind,block_size,repeat,n" {
		t.Fatalf("%d CSV rows, header %v", len(rows), rows[0])
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	all, second := rows[1], rows[3]
	if all[col["repeat"]] != "all" || all[col["iops"]] != "1200" || all[col["iops_stddev"]] != "200" || all[col["lat_p99_ns"]] != "2000000" {
		t.Errorf("aggregate row %v", all)
	}
	if second[col["repeat"]] != "2" || second[col["iops"]] != "1200" || second[col["iops_max"]] != "2400" || rows[5][col["disk_util_percent"]] != "90" {
		t.Errorf("repeat rows %v / %v", second, rows[5])
	}

	var j bytes.Buffer
	if err := d.JSON(&j); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Schema       string `json:"schema"`
		Measurements []struct {
			Target string         `json:"target"`
			IOPS   aggregate.Stat `json:"iops"`
		} `json:"measurements"`
		SideBySide struct{ Targets []string } `json:"side_by_side"`
	}
	if err := json.Unmarshal(j.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Schema != DocumentSchema || len(back.Measurements) != 2 || back.Measurements[1].IOPS.Mean != 400 ||
		strconv.Itoa(len(back.Measurements[1].IOPS.Values)) != "3" || strings.Join(back.SideBySide.Targets, ",") != "rbd,cephfs" {
		t.Errorf("JSON: %+v", back)
	}
}

func TestSideBySideOnlyWhenAStepRanOnSeveralTargets(t *testing.T) {
	s := &aggregate.Set{Results: []*result.Result{made("a", "x", 1, 1, 1), made("b", "y", 1, 1, 1)}}
	if sb := SideBySideOf(s.Groups()); sb != nil {
		t.Errorf("side by side of steps on one target each: %+v", sb)
	}
	if New(s, "").Aggregates() {
		t.Errorf("one result per step and target aggregates nothing")
	}
	s.Results = append(s.Results, made("a", "z", 1, 2, 1))
	sb := SideBySideOf(s.Groups())
	if sb == nil || strings.Join(sb.Targets, ",") != "x,z" || len(sb.Rows) != 1 || sb.Rows[0].Cells[1].IOPS.Mean != 2 {
		t.Errorf("side by side: %+v", sb)
	}
	if !New(s, "").Aggregates() || !New(sample(), "").Aggregates() {
		t.Errorf("targets side by side or repeats do not count as aggregating")
	}
}
