package step

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	_ "github.com/cephbench/cephbench/engine/file"
	_ "github.com/cephbench/cephbench/engine/null"
	"github.com/cephbench/cephbench/internal/jsontest"
	"github.com/cephbench/cephbench/result"
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
