package frontend

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	_ "github.com/cephbench/cephbench/engine/dirobj"
	"github.com/cephbench/cephbench/internal/peer/loadgen"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

func benchJob(w spec.Workload, save string) Job {
	return Job{Command: "bench", Steps: []step.Step{{Name: "shared", Workload: w, Save: save, Front: step.Front{Command: "bench"}}}}
}

// Hosts that run one job at once each get their part of its rate and of
// its target; the job itself is left as it was.
func TestForHostSharesTheRateAndTheTarget(t *testing.T) {
	w := spec.Workload{Target: spec.Target{Scheme: "dirobj", Location: "/data?x=1"}, RateIOPS: 900, BlockSize: 4096, Workers: 1, QueueDepth: 1}
	j := benchJob(w, "")
	j.Steps[0].Front.LoadGen = &loadgen.Config{Throughput: 3 << 20}
	got, err := ForHost(j, "h2", 3)
	if err != nil {
		t.Fatal(err)
	}
	gw := got.Steps[0].Workload
	if gw.RateIOPS != 300 || gw.Target.Location != "/data/h2?x=1" || got.Steps[0].Front.LoadGen.Throughput != 1<<20 {
		t.Errorf("host h2 of 3: rate %g, target %s, load-gen throughput %d", gw.RateIOPS, gw.Target.Location, got.Steps[0].Front.LoadGen.Throughput)
	}
	if j.Steps[0].Workload.RateIOPS != 900 || j.Steps[0].Workload.Target.Location != "/data?x=1" || j.Steps[0].Front.LoadGen.Throughput != 3<<20 {
		t.Errorf("ForHost changed the job it was given: %+v", j.Steps[0])
	}

	w.Target = spec.Target{Scheme: "file", Location: "/data"}
	got, _ = ForHost(benchJob(w, ""), "h1", 2)
	if p := got.Steps[0].Workload.FilePrefix; p != "h1" {
		t.Errorf("a file target's host names its files %q; want h1", p)
	}
	w.Target = spec.Target{Scheme: "null"}
	if got, err = ForHost(benchJob(w, ""), "h1", 2); err != nil || got.Steps[0].Workload.Target != w.Target {
		t.Errorf("null:// is every host's own: %v, %v", got.Steps[0].Workload.Target, err)
	}
	for _, bad := range []string{"", "../up", "a b", "-x"} {
		if _, err := ForHost(j, bad, 2); !engine.IsUsage(err) {
			t.Errorf("host label %q: %v; want a usage error", bad, err)
		}
	}
}

// Two hosts writing one directory at once each write and remove only
// their own objects and files, and the directory holds nothing of theirs
// afterwards.
func TestHostsSharingADirectoryKeepApart(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "theirs.dat")
	if err := os.WriteFile(foreign, []byte("not ours"), 0o644); err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	for _, target := range []spec.Target{{Scheme: "dirobj", Location: dir}, {Scheme: "file", Location: dir}} {
		w := spec.Workload{
			Target: target, Pattern: spec.Random, BlockSize: 4096, ObjectSize: 64 << 10, FileSize: 1 << 20,
			Objects: 16, Workers: 2, QueueDepth: 2, Duration: spec.Duration(500 * time.Millisecond),
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, host := range []string{"h1", "h2"} {
			j, err := ForHost(benchJob(w, filepath.Join(results, target.Scheme+"-"+host+".json")), host, 2)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { errs[i] = Run(context.Background(), j, IO{}) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s host %d: %v", target.Scheme, i+1, err)
			}
		}
		for _, host := range []string{"h1", "h2"} {
			res, err := result.Load(filepath.Join(results, target.Scheme+"-"+host+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Ops["write"].Ops == 0 || res.Ops["write"].Errors != 0 {
				t.Errorf("%s on %s: %d writes, %d errors", host, target.Scheme, res.Ops["write"].Ops, res.Ops["write"].Errors)
			}
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != "theirs.dat" {
			t.Errorf("after both hosts' %s runs the directory holds %v; want only theirs.dat", target.Scheme, entries)
		}
	}
}

// Hosts sharing one target each get their region of it from its engine
// and their part of the rate; a target no engine can share is refused.
func TestInRegionRefusesATargetHostsCannotShare(t *testing.T) {
	w := spec.Workload{Target: spec.Target{Scheme: "dirobj", Location: "/data"}, RateIOPS: 900, BlockSize: 4096, Workers: 1, QueueDepth: 1}
	if _, err := InRegion(benchJob(w, ""), 0, 3); !engine.IsUsage(err) || !strings.Contains(err.Error(), "dirobj") {
		t.Errorf("a directory shared in regions: %v; want a usage error naming its engine", err)
	}
	w.Target = spec.Target{}
	got, err := InRegion(benchJob(w, ""), 1, 3)
	if err != nil || got.Steps[0].Workload.RateIOPS != 300 {
		t.Errorf("host 2 of 3: %v, rate %g; want a third of 900", err, got.Steps[0].Workload.RateIOPS)
	}
	if _, err := InRegion(benchJob(w, ""), 3, 3); !engine.IsUsage(err) {
		t.Errorf("host 4 of 3: %v", err)
	}
}
