package cluster

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/cluster/clustertest"
)

var updateSummaries = flag.Bool("update-summaries", false, "rewrite testdata/summary from what Summarize gives now")

// summarySequences are sample sequences whose summaries
// testdata/summary holds as the watch summed them up when it kept every
// sample to the end and sorted each OSD's seconds: the answers of
// testdata/watch in turn (an OSD stopped and started, a deep scrub,
// commands failing), and long synthetic runs with slow OSDs, flapping
// OSDs, health checks and PG states coming and going, and statuses not
// read.
func summarySequences(t *testing.T) map[string][]Sample {
	seqs := map[string][]Sample{}
	s := healthy(t)
	seqs["recorded-healthy"] = s.samples(5)
	s = healthy(t)
	s.answers["status"] = []string{"status-clean.json", "status-clean.json", "status-osd-down.json", "status-osd-down.json", "status-clean.json", "status-deep-scrub.json", "error: timed out", "status-deep-scrub.json", "status-clean.json"}
	s.answers["osd dump"] = []string{"osd-dump-clean.json", "osd-dump-clean.json", "osd-dump-osd-down.json", "osd-dump-osd-down.json", "osd-dump-clean.json"}
	s.answers["osd perf"] = []string{"osd-perf.json", "osd-perf.json", "osd-perf.json", "error: (95) Operation not supported"}
	seqs["recorded-events"] = s.samples(9)
	seqs["synthetic-soak"] = soak(3000, 12, 1)
	seqs["synthetic-short-even"] = soak(10, 4, 2)
	seqs["synthetic-short-odd"] = soak(11, 5, 3)
	return seqs
}

// soak makes n samples a second of a cluster of osds OSDs, as a seeded
// generator has them: queue latency in whole microseconds, commit
// latency in whole milliseconds (as the sampler and osd perf give them),
// osd.1's queue and the last OSD's commit slow; OSDs going down and out
// now and then, health checks raised and cleared, PGs scrubbing and
// recovering, a status now and then not read.
func soak(n, osds int, seed uint64) []Sample {
	r := rand.New(rand.NewPCG(seed, 16))
	up := make([]bool, osds)
	for i := range up {
		up[i] = true
	}
	var out []Sample
	for sec := range n {
		s := Sample{At: float64(sec) + float64(r.IntN(30))/1000, Every: 1, Sent: map[string]int{"mon": 1, "mgr": 2}}
		if r.IntN(50) != 0 {
			s.Health, s.PGStates = "HEALTH_OK", map[string]int{"active+clean": 120}
			if sec%200 > 150 {
				s.PGStates["active+clean+scrubbing+deep"] = 1 + r.IntN(4)
			}
			if sec%333 < 20 {
				s.PGStates["active+recovering+degraded"] = 1 + r.IntN(9)
			}
			if sec%97 < 10 {
				s.Health, s.Checks = "HEALTH_WARN", map[string]string{"SLOW_OPS": fmt.Sprintf("%d slow ops", 1+r.IntN(40))}
			}
		}
		if sec == 0 || r.IntN(40) == 0 {
			flip := r.IntN(osds)
			up[flip] = up[flip] == (sec == 0)
			s.OSDs = []OSDState{}
			for id := range osds {
				s.OSDs = append(s.OSDs, OSDState{ID: id, Up: up[id], In: up[id] || id%2 == 0})
			}
		}
		for id := range osds {
			queue := 0.3 + r.ExpFloat64()*0.5
			commit := float64(r.IntN(6))
			if id == 1 {
				queue *= 40
			}
			if id == osds-1 {
				commit += 30
			}
			if r.IntN(7) != 0 {
				s.OSDQueue = append(s.OSDQueue, OSDQueue{ID: id, Ms: math.Round(queue*1000) / 1000})
			}
			s.OSDPerf = append(s.OSDPerf, OSDLatency{ID: id, Commit: commit, Apply: commit})
		}
		out = append(out, s)
	}
	return out
}

// The summary a watch adds up sample by sample is the one it gave when
// it kept them all: the same events, slow OSDs with the same figures,
// the same lines.
func TestASummaryAddedUpAsSamplesComeIsTheSame(t *testing.T) {
	for name, samples := range summarySequences(t) {
		d := Summarize(samples)
		got, err := json.MarshalIndent(struct {
			During *During
			Lines  []string
		}{d, d.Lines()}, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "summary", name+".json")
		if *updateSummaries {
			if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got)+"\n" != string(want) {
			t.Errorf("%s: summary\n%s\nwant\n%s", name, got, want)
		}
		if name == "synthetic-soak" && (len(d.SlowOSDs) != 2 || d.AtRest() || strings.Count(string(want), `"what"`) < 100) {
			t.Errorf("%s: want a run with 2 slow OSDs and many events, not %d slow OSDs and %d events", name, len(d.SlowOSDs), len(d.Events))
		}
	}
}

// daySample is the sample of second sec of a day on a cluster of osds
// OSDs at rest under load: every OSD's commit latency, the queue latency
// of maxTellsPerSample of them in turn, as the watch takes them.
func daySample(r *rand.Rand, sec, osds int) Sample {
	s := Sample{At: float64(sec), Every: 1, Health: "HEALTH_OK", PGStates: map[string]int{"active+clean": 4096},
		Sent: map[string]int{"mon": 1, "mgr": 2, "osd": maxTellsPerSample}}
	for id := range osds {
		commit := float64(1 + r.IntN(8))
		s.OSDPerf = append(s.OSDPerf, OSDLatency{ID: id, Commit: commit, Apply: commit})
	}
	for i := range maxTellsPerSample {
		ms := 0.3 + r.ExpFloat64()*0.5
		s.OSDQueue = append(s.OSDQueue, OSDQueue{ID: (sec*maxTellsPerSample + i) % osds, Ms: math.Round(ms*1000) / 1000})
	}
	return s
}

// heapInUse is the bytes the heap holds once collected.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// What a watch keeps over a day on a cluster of 100 OSDs stays a few
// kilobytes per OSD: it grows with the distinct latencies seen (a
// histogram's buckets), which level off, not with the samples, of which
// a tenth of the day would take tens of megabytes. Its figures are in
// the test's log (go test -v).
func TestADaysSummaryStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("a day of samples takes a few seconds")
	}
	const osds, day = 100, 86400
	r := rand.New(rand.NewPCG(7, 16))
	base := heapInUse()
	kept := make([]Sample, 0, day/10)
	for sec := 1; sec <= day/10; sec++ {
		kept = append(kept, daySample(r, sec, osds))
	}
	keptBytes := heapInUse() - base
	runtime.KeepAlive(kept)
	kept = nil

	base = heapInUse()
	s := NewSummary()
	retained := map[int]uint64{}
	for sec := 1; sec <= day; sec++ {
		s.Add(daySample(r, sec, osds))
		if sec == day/8 || sec == day/4 || sec == day/2 || sec == day {
			retained[sec] = heapInUse() - base
			t.Logf("after %5d samples the summary of %d OSDs retains %7d B, %5d B per OSD", sec, osds, retained[sec], retained[sec]/osds)
		}
	}
	d := s.During()
	whole := retained[day]
	t.Logf("the first %d samples, kept, took %d B, %d B per OSD", day/10, keptBytes, keptBytes/osds)
	// From half the day to its end the samples double; the summary
	// takes in the few latencies not seen before.
	if whole/osds > 32<<10 || whole > keptBytes/10 || float64(whole) > 1.75*float64(retained[day/2]) {
		t.Errorf("the summary retains %v B over the day; want under 32 KiB per OSD, under a tenth of what the first tenth of the samples took (%d B), and less than 1.75 times what it held at half the day",
			retained, keptBytes)
	}
	if d.Samples != day || !d.AtRest() || len(d.SlowOSDs) != 0 {
		t.Errorf("a day at rest: %d samples, events %v, slow OSDs %v", d.Samples, d.Events, d.SlowOSDs)
	}
}

// A watch keeps no sample: from its 500th sample of 100 OSDs to its
// 3,000th, what it holds grows by much less than the samples would take
// (about 4 KB each).
func TestAWatchKeepsNoSample(t *testing.T) {
	if testing.Short() {
		t.Skip("3,000 samples take a few seconds")
	}
	const osds, first, last = 100, 500, 3000
	var dump []map[string]int
	for id := range osds {
		dump = append(dump, map[string]int{"osd": id, "up": 1, "in": 1})
	}
	dumpJSON, _ := json.Marshal(map[string]any{"epoch": 7, "osds": dump})
	mon := clustertest.New().
		Script("status", clustertest.Reply(`{"health":{"status":"HEALTH_OK"},"osdmap":{"epoch":7},"pgmap":{"pgs_by_state":[{"state_name":"active+clean","count":4096}]}}`)).
		Script("osd dump", clustertest.Reply(string(dumpJSON))).
		Script("osd pool stats", clustertest.Reply(`[]`)).
		Script("pg ls-by-pool", clustertest.Reply(`[]`)).
		Script("osd perf", func(asked int) ([]byte, error) {
			var infos []string
			for id := range osds {
				ms := 1 + (id*7+asked)%9
				infos = append(infos, fmt.Sprintf(`{"id":%d,"perf_stats":{"commit_latency_ms":%d,"apply_latency_ms":%d}}`, id, ms, ms))
			}
			return []byte(`{"osdstats":{"osd_perf_infos":[` + strings.Join(infos, ",") + `]}}`), nil
		})
	var taken int
	heap := map[int]uint64{}
	done := make(chan struct{})
	// The sink runs on the watch's goroutine: the heap is read while
	// the watch waits.
	w := StartWatch(mon, []string{"cbwatch"}, time.Millisecond, func(Sample) {
		if taken++; taken == first || taken == last {
			heap[taken] = heapInUse()
		}
		if taken == last {
			close(done)
		}
	})
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		t.Fatalf("the watch took fewer than %d samples in 5 minutes", last)
	}
	d := w.Stop()
	grew := int64(heap[last]) - int64(heap[first])
	t.Logf("from sample %d to %d of %d OSDs the watch's heap grew by %d B", first, last, osds, grew)
	if grew > 1<<20 || d.Samples < last || d.CommandsPerSecond["mgr"] == 0 {
		t.Errorf("the heap grew by %d B over %d samples (kept, they take about 10 MB); summary of %d samples", grew, last-first, d.Samples)
	}
}
