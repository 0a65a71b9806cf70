package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
)

// TestMergeFileRunsOfTwoHosts runs one file step twice at once, each in a
// directory of its own as two hosts would, and merges the two results.
func TestMergeFileRunsOfTwoHosts(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	hosts := []string{"host1", "host2"}
	var wg sync.WaitGroup
	for _, h := range hosts {
		if err := os.Mkdir(filepath.Join(dir, h), 0o755); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			code, _, stderr := cephbenchIn(t, ctx, dir, nil, "bench", "--target", h, "--rw", "randrw", "--size", "4M",
				"--duration", "2s", "-q", "-o", h+"/randrw.json")
			if code != 0 {
				t.Errorf("%s: exit %d: %s", h, code, stderr)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	code, stdout, stderr := cephbenchIn(t, ctx, dir, nil, "merge", "host1/randrw.json", "host2/randrw.json", "-o", "all/randrw.json")
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "merged from 2 hosts' results: host1/randrw.json, host2/randrw.json") || !strings.Contains(stdout, "result saved to all/randrw.json") {
		t.Errorf("merge printed:\n%s", stdout)
	}
	merged, err := result.Load(filepath.Join(dir, "all", "randrw.json"))
	if err != nil {
		t.Fatal(err)
	}
	var hostResults []*result.Result
	for _, h := range hosts {
		r, err := result.Load(filepath.Join(dir, h, "randrw.json"))
		if err != nil {
			t.Fatal(err)
		}
		hostResults = append(hostResults, r)
	}
	for _, kind := range []string{"read", "write"} {
		sum := metrics.NewHistogram()
		var ops int64
		for _, r := range hostResults {
			ops += r.Ops[kind].Ops
			h, err := hdr.Decode([]byte(r.Histograms[kind]))
			if err != nil {
				t.Fatal(err)
			}
			sum.Merge(h)
		}
		got := merged.Ops[kind]
		if got.Ops != ops || ops == 0 {
			t.Errorf("%s: merged %d ops; want the hosts' %d", kind, got.Ops, ops)
		}
		for _, p := range []float64{50, 99, 99.9} {
			if got.Latency.Percentiles.At(p) != sum.ValueAtPercentile(p) {
				t.Errorf("%s: merged p%g %d; the hosts' histograms added give %d", kind, p, got.Latency.Percentiles.At(p), sum.ValueAtPercentile(p))
			}
		}
	}
	if len(merged.Series) < 2 || len(merged.Hosts) != 2 || merged.TickLog != "randrw.hlog" {
		t.Errorf("merged result: %d seconds, %d hosts, tick log %q", len(merged.Series), len(merged.Hosts), merged.TickLog)
	}

	// Bad input: one line, exit 2, nothing saved.
	data, err := os.ReadFile(filepath.Join(dir, "host2", "randrw.json"))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(string(data), `"block_size": "4K"`, `"block_size": "8K"`, 1)
	if other == string(data) {
		t.Fatal("no block size in the result to change")
	}
	if err := os.WriteFile(filepath.Join(dir, "host2", "bigger.json"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"one result":      {"merge", "host1/randrw.json", "-o", "bad/one.json"},
		"no output":       {"merge", "host1/randrw.json", "host2/randrw.json"},
		"a missing file":  {"merge", "host1/randrw.json", "host3/randrw.json", "-o", "bad/missing.json"},
		"not a result":    {"merge", "host1/randrw.json", "host1/randrw.hlog", "-o", "bad/hlog.json"},
		"different steps": {"merge", "host1/randrw.json", "host2/bigger.json", "-o", "bad/bigger.json"},
	} {
		code, stdout, stderr := cephbenchIn(t, ctx, dir, nil, args...)
		wantUsageError(t, name, code, stdout, stderr)
		if name == "different steps" && !strings.Contains(stderr, "host1/randrw.json and host2/bigger.json are not the same step: their spec.block_size differ (4K and 8K)") {
			t.Errorf("different steps: %s", stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad")); !os.IsNotExist(err) {
		t.Errorf("bad input left %s behind (%v)", filepath.Join(dir, "bad"), err)
	}
}
