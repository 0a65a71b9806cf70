package result

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Runs that begin at once with one name each get a name of their own, and
// none takes the place of a result, or of a tick log, already there.
func TestBeginNeverTakesAnotherResultsPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	others := map[string]string{"run.json": "someone's result", "run-2.hlog": "a tick log left alone"}
	for name, content := range others {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const runs = 12
	paths := make([]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			p, err := Begin(path, &Result{Name: "run", Start: time.Now()})
			if err != nil {
				t.Error(err)
				return
			}
			tickInto(p.Tick, 2)
			if paths[i], err = p.Finish(&Result{Schema: Schema, Name: "run"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	slices.Sort(paths)
	if len(slices.Compact(slices.Clone(paths))) != runs {
		t.Fatalf("%d runs saved to %v", runs, paths)
	}
	for name, content := range others {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != content {
			t.Errorf("%s was overwritten: %q", name, b)
		}
	}
	for _, p := range paths {
		if p == path || strings.HasSuffix(p, "run-2.json") {
			t.Errorf("a run took %s, whose name was taken", p)
		}
		if r, err := Load(p); err != nil || len(r.Series) != 2 {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// A run killed before it saved leaves its provisional result, which Load
// rebuilds from the seconds its tick log holds: the totals are theirs,
// and the latency their histograms added.
func TestAnUnfinishedResultIsRebuiltFromItsTickLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "killed.json")
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p, err := Begin(path, &Result{Name: "killed", Start: start, Notes: []string{"a note of the step"}})
	if err != nil {
		t.Fatal(err)
	}
	series := tickInto(p.Tick, 3)
	// No Finish: the process is gone.
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var reads, writeBytes, writeErrors, maxNs int64
	for _, s := range series {
		reads += s.Kinds["read"].Ops
		writeBytes += s.Kinds["write"].Bytes
		writeErrors += s.Kinds["write"].Errors
		maxNs = max(maxNs, s.Kinds["write"].MaxNs)
	}
	w := r.Ops["write"]
	if !r.Unfinished || !r.Interrupted || r.StopReason != StopInterrupted || r.Name != "killed" {
		t.Errorf("unfinished %v, interrupted %v, stop %q, name %q", r.Unfinished, r.Interrupted, r.StopReason, r.Name)
	}
	if r.Ops["read"].Ops != reads || w.Bytes != writeBytes || w.Errors != writeErrors || r.Errors["write"] != writeErrors || w.Latency.MaxNs != maxNs {
		t.Errorf("rebuilt %+v; the seconds hold %d reads, %d bytes written, %d write errors, max %dns", r.Ops, reads, writeBytes, writeErrors, maxNs)
	}
	if r.ElapsedSeconds != series[2].T || !r.End.After(start) || r.Histograms["write"] == "" || w.IOPS.Samples != 2 {
		t.Errorf("elapsed %g (want %g), end %v, histogram %d bytes, %d whole seconds in the rates", r.ElapsedSeconds, series[2].T, r.End, len(r.Histograms["write"]), w.IOPS.Samples)
	}
	if len(r.Notes) != 2 || !strings.Contains(r.Notes[1], "killed before it saved") {
		t.Errorf("notes %q", r.Notes)
	}
}
