package step

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	_ "github.com/cephbench/cephbench/engine/file"
	_ "github.com/cephbench/cephbench/engine/null"
	"github.com/cephbench/cephbench/internal/jsontest"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
)

// A step is what a coordinator ships to another host: every field of it,
// of its workload and of its command's options comes back from JSON as it
// went in.
func TestStepRoundTripsThroughJSON(t *testing.T) {
	jsontest.RoundTrips[Step](t)
}

func TestRunSavesTheResultWithItsTickLogAndPrintsIt(t *testing.T) {
	dir := t.TempDir()
	save := filepath.Join(dir, "r.json")
	st := Step{Name: "null-read", Save: save, Seed: 1, Workload: spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 100, BlockSize: 4096,
		Workers: 1, QueueDepth: 4, Duration: spec.Duration(2 * time.Second),
	}}
	var progress, summary strings.Builder
	res, err := Run(context.Background(), st, Output{Progress: &progress, Summary: &summary})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := result.Load(save)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Ops["read"].Ops != res.Ops["read"].Ops || res.Ops["read"].Ops == 0 {
		t.Errorf("saved %d reads, ran %d", loaded.Ops["read"].Ops, res.Ops["read"].Ops)
	}
	if len(loaded.Series) != 2 {
		t.Errorf("the tick log reads back %d seconds of a 2 s run", len(loaded.Series))
	}
	if _, err := os.Stat(result.TickLogPath(save)); err != nil {
		t.Error(err)
	}
	if !strings.Contains(progress.String(), "== null-read:") || strings.Count(progress.String(), "\n") < 3 {
		t.Errorf("heading and per-second table:\n%s", progress.String())
	}
	if !strings.Contains(summary.String(), "result saved to "+save) {
		t.Errorf("summary:\n%s", summary.String())
	}
}

// Passes bound a workload that gives no size to passes over its target as
// opened, in whole blocks.
func TestPassesBoundTheWorkloadByTheTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 10*4096+5), 0o644); err != nil {
		t.Fatal(err)
	}
	w := spec.Workload{
		Target: spec.Target{Scheme: "file", Location: path}, Pattern: spec.Sequential, ReadPercent: 100,
		BlockSize: 4096, Workers: 1, QueueDepth: 1, Force: true,
	}
	res, err := Run(context.Background(), Step{Name: "passes", Workload: w, Passes: 3}, Output{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Ops["read"].Ops; got != 30 {
		t.Errorf("3 passes over 10 whole blocks made %d reads", got)
	}

	w.BlockSize = 1 << 20
	_, err = Run(context.Background(), Step{Name: "too-small", Workload: w, Passes: 1}, Output{})
	if !engine.IsUsage(err) {
		t.Errorf("a target smaller than a block: %v; want a usage error", err)
	}
}

func TestBadWorkloadIsAUsageErrorBeforeAnyIO(t *testing.T) {
	dir := t.TempDir()
	w := spec.Workload{Target: spec.Target{Scheme: "file", Location: filepath.Join(dir, "f")}, BlockSize: 4096, Workers: 0, QueueDepth: 1, Duration: spec.Duration(time.Second)}
	_, err := Run(context.Background(), Step{Name: "bad", Workload: w}, Output{})
	if !engine.IsUsage(err) {
		t.Fatalf("no usage error: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused step wrote %v", entries)
	}
}

func TestLiveLineIsDrawnAndCleared(t *testing.T) {
	var live strings.Builder
	st := Step{Name: "null", Workload: spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, BlockSize: 4096,
		Workers: 1, QueueDepth: 1, Duration: spec.Duration(1500 * time.Millisecond),
	}}
	if _, err := Run(context.Background(), st, Output{Live: &Live{W: &live, Label: "[1/2] a-plan-step"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(live.String(), "[1/2] a-plan-step null") || !strings.HasSuffix(live.String(), "\r\x1b[K") {
		t.Errorf("live line %q", live.String())
	}
}

// The gate holds the run until it returns, with the target already laid
// out; the tick hook sees every second and the result hook the result,
// as saved.
func TestHooksHoldTheRunAndFollowIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	st := Step{Name: "gated", Save: filepath.Join(dir, "r.json"), Workload: spec.Workload{
		Target: spec.Target{Scheme: "file", Location: path}, Pattern: spec.Random, BlockSize: 4096, FileSize: 1 << 20,
		Workers: 1, QueueDepth: 1, Duration: spec.Duration(2 * time.Second),
	}}
	var opened time.Time
	var ticks int
	var got *result.Result
	hooks := Hooks{
		Gate: func(ctx context.Context) error {
			if fi, err := os.Stat(path); err != nil || fi.Size() != 1<<20 {
				t.Errorf("at the gate the target is %v, %v; want it laid out", fi, err)
			}
			opened = time.Now()
			wait := time.NewTimer(200 * time.Millisecond) // as a coordinator's start time would
			defer wait.Stop()
			select {
			case <-wait.C:
			case <-ctx.Done():
			}
			return nil
		},
		Tick:   func(metrics.Tick) { ticks++ },
		Result: func(r *result.Result) { got = r },
	}
	res, err := Run(context.Background(), st, Output{Hooks: hooks})
	if err != nil {
		t.Fatal(err)
	}
	if res.Start.Before(opened.Add(200 * time.Millisecond)) {
		t.Errorf("the run started %s after the gate was called, before it returned", res.Start.Sub(opened))
	}
	if ticks != 2 || got != res || res.TickLog == "" {
		t.Errorf("%d ticks, result hook got %p; want 2 ticks and the saved result %p (tick log %q)", ticks, got, res, res.TickLog)
	}

	refused := errors.New("no start")
	hooks.Gate = func(context.Context) error { return refused }
	got = nil
	if _, err := Run(context.Background(), st, Output{Hooks: hooks}); !errors.Is(err, refused) || got != nil {
		t.Errorf("a gate that refuses: %v, result %v; want its error and no result", err, got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 { // the first run's result and tick log
		t.Errorf("a step refused at its gate left %v", entries)
	}
}

// failingCluster is a session on a cluster whose ops start failing with
// ETIMEDOUT after a while, and whose state cannot be read after the run,
// as when the network to the cluster is cut mid-run.
type failingCluster struct {
	engine.Session
	ops, okOps atomic.Int64
	snapshots  atomic.Int64
}

func (f *failingCluster) Do(ctx context.Context, op *engine.Op) error {
	if f.ops.Add(1) > f.okOps.Load() {
		return syscall.ETIMEDOUT
	}
	return f.Session.Do(ctx, op)
}

func (f *failingCluster) ClusterSnapshot() (*cluster.Snapshot, error) {
	if f.snapshots.Add(1) > 1 {
		return nil, errors.New("ceph status: ret=-110,\n Connection timed out")
	}
	return &cluster.Snapshot{Health: cluster.Health{Status: "HEALTH_OK"}, OSDs: cluster.OSDCounts{Total: 1, Up: 1, In: 1}}, nil
}

// A result says what failed: the ops by kind and error, the op timeout,
// and the cluster's state that could not be read after the run.
func TestResultNotesSayWhatFailed(t *testing.T) {
	w := spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 100, BlockSize: 4096,
		Workers: 1, QueueDepth: 1, TotalOps: 100, OpTimeout: spec.Duration(3 * time.Second),
	}
	sess, err := engine.Open(context.Background(), &w)
	if err != nil {
		t.Fatal(err)
	}
	f := &failingCluster{Session: sess}
	f.okOps.Store(60)
	save := filepath.Join(t.TempDir(), "r.json")
	res, err := RunOn(context.Background(), f, Step{Name: "cut", Workload: w, Save: save}, Output{}, runner.Options{},
		func() error { return sess.Close(context.Background()) })
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := result.Load(save)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(loaded.Notes, "\n")
	for _, want := range []string{
		"40 ops failed (read 40; by error: ETIMEDOUT 40); an op timed out after 3s",
		"the cluster's state could not be read after the run: ceph status: ret=-110, Connection timed out",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", loaded.Notes, want)
		}
	}
	if strings.Contains(notes, "before the run") || loaded.Cluster == nil || loaded.Cluster.Before == nil || loaded.Cluster.After != nil {
		t.Errorf("notes %q, cluster %+v: want the state before the run and none after", loaded.Notes, loaded.Cluster)
	}
	if res.Ops["read"].Errors != 40 || loaded.Errors["ETIMEDOUT"] != 40 {
		t.Errorf("read errors %d, errors %v", res.Ops["read"].Errors, loaded.Errors)
	}
}
