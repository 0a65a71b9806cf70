package multihost

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/mergetest"
	"github.com/cephbench/cephbench/report/htmlreport"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// "watched" is the null engine on a make-believe cluster that a step's
// watch samples (mergetest.Watched).
func init() {
	engine.Register("watched", engine.Func(func(ctx context.Context, w *spec.Workload) (engine.Session, error) {
		null := *w
		null.Target = spec.Target{Scheme: "null"}
		sess, err := engine.Open(ctx, &null)
		if err != nil {
			return nil, err
		}
		return mergetest.Watched{Session: sess}, nil
	}), engine.Description{Syntax: "watched://", Layout: engine.Blocks})
}

// The first host's watch of the cluster reaches the merged result: what
// the cluster did, and each of its samples in the merged tick log, as a
// run on one host has them, so that the HTML report of the merged result
// draws the cluster beside the client.
func TestTheMergedResultKeepsTheWatchingHostsClusterSamples(t *testing.T) {
	hosts := startAgents(t, 3, nil)
	w := nullWorkload(2 * time.Second)
	w.Target = spec.Target{Scheme: "watched"}
	j := benchJob(w)
	j.Steps[0].Watch = step.Watch{Interval: spec.Duration(250 * time.Millisecond)}
	dir := t.TempDir()
	j.Steps[0].Save = filepath.Join(dir, "many.json")
	out, err := Run(context.Background(), j, hostsOf(hosts), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Saved[0] == "" {
		t.Fatal("the merged result was not saved")
	}
	m, err := result.Load(out.Saved[0])
	if err != nil {
		t.Fatal(err)
	}
	if m.Cluster == nil || m.Cluster.During == nil || m.Cluster.During.Samples < 6 {
		t.Fatalf("the merged result's cluster: %+v; want what a 2 s watch every 250 ms saw", m.Cluster)
	}
	watched := 0
	for _, h := range m.Hosts {
		if h.Cluster != nil && h.Cluster.During != nil {
			watched++
		}
	}
	samples, err := result.ClusterSamples(result.TickLogPath(out.Saved[0]))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != m.Cluster.During.Samples || watched != 1 {
		t.Fatalf("%d samples in the merged tick log, %d hosts watched; want the watching host's %d, one host", len(samples), watched, m.Cluster.During.Samples)
	}
	for _, s := range samples {
		if s.Client == nil || s.Client.WriteOps != mergetest.WatchedWriteOps {
			t.Errorf("sample at %gs: client %+v; want %d writes a second", s.At, s.Client, mergetest.WatchedWriteOps)
		}
	}
	if len(m.Series) != 2 {
		t.Errorf("%d merged seconds; want 2 beside the samples", len(m.Series))
	}
	set, err := aggregate.Load(out.Saved[0])
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := htmlreport.Write(&page, set, "many"); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"cluster-ops", "cluster-mibs", "cluster-pgs", "osd-commit"} {
		if !strings.Contains(page.String(), `data-chart="`+kind+`"`) {
			t.Errorf("the merged result's page has no %s chart", kind)
		}
	}
}
