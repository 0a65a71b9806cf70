//go:build ceph

package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/result"
)

// loadGenPool makes a pool for one test holding one object that is not a
// benchmark's; it skips without a cluster.
func loadGenPool(t *testing.T) string {
	t.Helper()
	pool := cephPool(t)
	precious := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(precious, []byte(preciousData), 0o644); err != nil {
		t.Fatal(err)
	}
	tool(t, "rados", "-p", pool, "put", "precious-object", precious)
	return pool
}

const preciousData = "not a benchmark's"

// checkOnlyPrecious fails the test unless the pool holds just the object
// loadGenPool planted, intact.
func checkOnlyPrecious(t *testing.T, pool string) {
	t.Helper()
	if got := poolObjects(t, pool); !slices.Equal(got, []string{"precious-object"}) {
		t.Errorf("the pool holds %v; want only the object that was there before", got)
		return
	}
	if got := tool(t, "rados", "-p", pool, "get", "precious-object", "-"); got != preciousData {
		t.Errorf("the planted object now reads %q", got)
	}
}

func TestLoadGenBadInputIsOneLineAndExit2(t *testing.T) {
	pool := loadGenPool(t)
	results := filepath.Join(t.TempDir(), "results")
	cases := map[string][]string{
		"no objects":           {"--num-objects", "0"},
		"objects max < min":    {"--min-object-size", "1M", "--max-object-size", "4K"},
		"bad size":             {"--max-object-size", "4q"},
		"empty ops":            {"--min-op-len", "0"},
		"ops max < min":        {"--min-op-len", "64K", "--max-op-len", "4K"},
		"no ops in flight":     {"--max-ops", "0"},
		"no backlog":           {"--max-backlog", "0"},
		"percent over 100":     {"--read-percent", "101"},
		"old spelling, bad":    {"--percent", "-5"},
		"negative throughput":  {"--target-throughput", "-1M"},
		"zero run length":      {"--run-length", "0"},
		"words for seconds":    {"--run-length", "ten"},
		"bad alignment":        {"--offset-align", "x"},
		"unknown flag":         {"--no-such-flag"},
		"stray argument":       {"60"},
		"more than fits":       {"--num-objects", "5000", "--min-object-size", "100M", "--max-object-size", "100M"},
		"over the OSDs' limit": {"--num-objects", "1", "--min-object-size", "1K", "--max-object-size", "5G"},
		"no such pool":         {"-p", "no-such-pool"},
		"no pool given at all": {"-p", ""},
	}
	for name, args := range cases {
		full := append([]string{"rados", "-p", pool, "load-gen", "--run-length", "1", "--results", results}, args...)
		code, stdout, stderr := cephbench(t, context.Background(), full...)
		wantUsageError(t, name, code, stdout, stderr)
	}
	checkOnlyPrecious(t, pool)
	if _, err := os.Stat(results); !os.IsNotExist(err) {
		t.Errorf("bad input saved results: %v", err)
	}
}

var loadGenSecond = regexp.MustCompile(`^ {4}\d: throughput=[0-9.e+-]+MB/sec pending data=\d+$`)

func TestLoadGenRunsRemovesItsObjectsAndSavesItsResult(t *testing.T) {
	pool := loadGenPool(t)
	results := filepath.Join(t.TempDir(), "results")
	stdout := watchFor("load-gen will run")
	var stderr bytes.Buffer

	// While the load runs, look at its objects as a user would: rados ls,
	// stat and get.
	type seen struct {
		names []string
		stat  string
		data  []byte
		err   error
	}
	during := make(chan seen, 1)
	go func() {
		<-stdout.seen
		var s seen
		defer func() { during <- s }()
		ls, err := exec.Command("rados", "-p", pool, "ls").Output()
		if s.err = err; err != nil {
			return
		}
		for _, n := range strings.Fields(string(ls)) {
			if strings.HasPrefix(n, "cephbench_loadgen_") {
				s.names = append(s.names, n)
			}
		}
		if len(s.names) == 0 {
			return
		}
		stat, err := exec.Command("rados", "-p", pool, "stat", s.names[0]).Output()
		if s.stat, s.err = string(stat), err; err != nil {
			return
		}
		s.data, s.err = exec.Command("rados", "-p", pool, "get", s.names[0], "-").Output()
	}()

	code := Main(context.Background(), Env{Stdout: stdout, Stderr: &stderr}, []string{
		"rados", "-p", pool, "load-gen", "--num-objects", "10", "--min-objects-size", "64K", "--max-objects-size", "256K",
		"--min-ops", "--min-op-len", "4K", "--max-op-len", "64K", "--max-ops", "4", "--percent", "50",
		"--target-throughput", "4M", "--run-length", "3", "--results", results,
	})
	out := stdout.String()
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	// The field report's spellings work; the flag rados does not have is
	// named as ignored.
	if !strings.Contains(stderr.String(), "no --min-ops option") {
		t.Errorf("stderr %q does not say --min-ops is ignored", stderr.String())
	}

	var seconds, order []string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case loadGenSecond.MatchString(line):
			seconds = append(seconds, line)
		case strings.HasPrefix(line, "run length"), strings.HasPrefix(line, "preparing"),
			strings.HasPrefix(line, "load-gen will run"), strings.HasPrefix(line, "waiting"), strings.HasPrefix(line, "cleaning"):
			order = append(order, line)
		}
	}
	want := []string{"run length 3 seconds", "preparing 10 objects", "load-gen will run 3 seconds",
		"waiting for all operations to complete", "cleaning up objects"}
	if !slices.Equal(order, want) || len(seconds) != 3 {
		t.Errorf("rados load-gen's lines: %q and %d per-second lines; want %q and 3:\n%s", order, len(seconds), want, out)
	}

	s := <-during
	if len(s.names) != 10 || s.err != nil {
		t.Fatalf("during the run the pool held load-gen objects %v (%v); want 10", s.names, s.err)
	}
	// rados stat: "POOL/NAME mtime ..., size N".
	stat := strings.Fields(s.stat)
	size, _ := strconv.Atoi(stat[len(stat)-1])
	zeros := bytes.Count(s.data, []byte{0})
	if size < 64<<10 || size > 256<<10 || len(s.data) != size || zeros > len(s.data)/20 {
		t.Errorf("%s: %q, %d bytes read, %d of them zero; want 64K..256K of real data", s.names[0], s.stat, len(s.data), zeros)
	}
	checkOnlyPrecious(t, pool)

	files, _ := filepath.Glob(filepath.Join(results, "*-rados-load-gen.json"))
	if len(files) != 1 {
		t.Fatalf("result files %v; want one", files)
	}
	r, err := result.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	reads, writes := r.Ops["read"], r.Ops["write"]
	if reads.Ops == 0 || writes.Ops == 0 || reads.Errors+writes.Errors != 0 || r.Spec.ReadPercent != 50 || r.Interrupted {
		t.Errorf("result: %d reads, %d writes, %d errors, read percent %d, interrupted %v",
			reads.Ops, writes.Ops, reads.Errors+writes.Errors, r.Spec.ReadPercent, r.Interrupted)
	}
	if len(reads.Latency.Percentiles) == 0 || r.Histograms["write"] == "" || len(r.Series) < 3 {
		t.Errorf("result lacks percentiles, histograms or the per-second series: %+v", r)
	}
	if !strings.Contains(out, "result saved to "+files[0]) || !strings.Contains(out, "p99") {
		t.Errorf("the summary lacks the percentiles or where the result is:\n%s", out)
	}
}

func TestLoadGenInterruptedRemovesItsObjects(t *testing.T) {
	for _, c := range []struct {
		name, after string
		wait        time.Duration
	}{
		{"while running", "load-gen will run", time.Second},
		{"while preparing", "preparing", 50 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			pool := loadGenPool(t)
			results := filepath.Join(t.TempDir(), "results")
			stdout := watchFor(c.after)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-stdout.seen
				time.Sleep(c.wait)
				cancel()
			}()
			start := time.Now()
			code := Main(ctx, Env{Stdout: stdout, Stderr: &bytes.Buffer{}}, []string{
				"rados", "-p", pool, "load-gen", "--num-objects", "40", "--min-object-size", "256K", "--max-object-size", "1M",
				"--max-ops", "2", "--run-length", "60", "--results", results,
			})
			if code != ExitInterrupted {
				t.Fatalf("exit %d; want %d\n%s", code, ExitInterrupted, stdout.String())
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("took %v to stop", took)
			}
			if !strings.Contains(stdout.String(), "cleaning up objects") {
				t.Errorf("no cleanup line:\n%s", stdout.String())
			}
			checkOnlyPrecious(t, pool)
			if c.after != "load-gen will run" {
				return
			}
			files, _ := filepath.Glob(filepath.Join(results, "*-rados-load-gen.json"))
			if len(files) != 1 {
				t.Fatalf("result files %v; want the interrupted run's", files)
			}
			if r, err := result.Load(files[0]); err != nil || !r.Interrupted || r.Ops["read"].Ops == 0 {
				t.Errorf("saved result: %v; want an interrupted run with its reads", err)
			}
		})
	}
}
