package result

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/cluster"
)

// clusterSamples are a watch's samples of an OSD going down and back.
func clusterSamples() []cluster.Sample {
	up := []cluster.OSDState{{ID: 0, Up: true, In: true}, {ID: 1, Up: true, In: true}}
	down := []cluster.OSDState{{ID: 0, Up: true, In: true}, {ID: 1, Up: false, In: true}}
	clean := map[string]int{"active+clean": 32}
	return []cluster.Sample{
		{At: 0.01, Every: 1, Health: "HEALTH_OK", PGStates: clean, Epoch: 20, OSDs: up, Sent: map[string]int{"mon": 2, "mgr": 2},
			Client: &cluster.ClientIO{WriteOps: 25, WriteBytes: 100 << 20}, OSDPerf: []cluster.OSDLatency{{ID: 0, Commit: 3, Apply: 3}}},
		{At: 1.01, Every: 1, Health: "HEALTH_WARN", Checks: map[string]string{"OSD_DOWN": "1 osds down"},
			PGStates: map[string]int{"active+undersized+degraded": 16, "active+clean": 16}, Epoch: 21, OSDs: down, Sent: map[string]int{"mon": 2, "mgr": 2}},
		{At: 2.01, Every: 1, Health: "HEALTH_OK", PGStates: clean, Epoch: 22, OSDs: up, Sent: map[string]int{"mon": 2, "mgr": 2},
			Problems: []string{"ceph osd perf: timed out"}},
	}
}

// Samples written to a tick log while its seconds are come back in order,
// and leave the series as it was: an HdrHistogram reader skips them.
func TestClusterSamplesGoBetweenTheSeconds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.hlog")
	l, err := createTickLog(path, time.Now(), os.O_EXCL)
	if err != nil {
		t.Fatal(err)
	}
	samples := clusterSamples()
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, s := range samples {
			l.Cluster(s)
		}
	})
	want := tickInto(l.Tick, 5)
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ClusterSamples(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, samples) {
		t.Errorf("samples read back:\n%+v\nwant\n%+v", got, samples)
	}
	series, err := ReadTickLog(path)
	if err != nil || len(series) != len(want) {
		t.Fatalf("the series: %d seconds, %v; want %d", len(series), err, len(want))
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdr.NewHistogramLogReader(f)
	n := 0
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("an HdrHistogram reader fails on the log: %v", err)
		}
		if h == nil {
			break
		}
		n++
	}
	if n == 0 {
		t.Error("an HdrHistogram reader read no histogram")
	}
}

// A run killed before it saved has what the cluster did rebuilt from
// the samples its tick log holds; a sample cut short is left out.
func TestAKilledRunKeepsWhatTheClusterDid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "killed.json")
	p, err := Begin(path, &Result{Name: "killed", Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range clusterSamples() {
		p.Cluster(s)
		tickInto(p.Tick, i+1)
	}
	f, err := os.OpenFile(TickLogPath(path), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`#cluster {"t":3.01,"every_s":1,"health":"HEALTH_ERR","osds":[{"id":0,"up":false`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// No Finish: the process is gone.
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Cluster == nil || r.Cluster.During == nil {
		t.Fatalf("a killed run's result has no cluster.during: %+v", r.Cluster)
	}
	d := r.Cluster.During
	got := strings.Join(d.Lines(), "\n")
	want := "cluster NOT AT REST during the run: osd.1 down at 1 s; health check OSD_DOWN raised at 1 s (1 osds down); degraded on 16 PGs at 1 s; " +
		"osd.1 up at 2 s; health check OSD_DOWN cleared at 2 s\nthe cluster watch could not read: ceph osd perf: timed out"
	if d.Samples != 3 || got != want {
		t.Errorf("%d samples, lines:\n%s\nwant 3 samples,\n%s", d.Samples, got, want)
	}
	if d.CommandsPerSecond["mon"] != 2 {
		t.Errorf("commands per second %v", d.CommandsPerSecond)
	}
}
