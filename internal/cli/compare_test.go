package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report/comparison"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// bubbleClock is the time of a synctest bubble since start.
type bubbleClock struct{ start time.Time }

func (c bubbleClock) Now() time.Duration { return time.Since(c.start) }

// pacedRepeats runs a randread step called name on null:// for ops ops,
// once at each rate (ops/s), as bench --rate does, saving each result
// with its tick log into dir. The runs are on a synctest bubble's clock:
// each does its ops exactly on schedule however loaded the machine is,
// so that the IOPS compared are the rates asked for.
func pacedRepeats(t *testing.T, dir, name string, ops int64, rates ...float64) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		for i, rate := range rates {
			st := step.Step{Name: name, Seed: uint64(i + 1), Save: filepath.Join(dir, fmt.Sprintf("%s-%d.json", name, i+1)), Workload: spec.Workload{
				Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 100,
				BlockSize: 4096, Workers: 1, QueueDepth: 1, TotalOps: ops, RateIOPS: rate,
			}}
			sess, err := engine.Open(ctx, &st.Workload)
			if err != nil {
				t.Fatal(err)
			}
			opts := runner.Options{Clock: bubbleClock{time.Now()}}
			if _, err := step.RunOn(ctx, sess, st, step.Output{}, opts, func() error { return sess.Close(ctx) }); err != nil {
				t.Fatalf("%s at %g ops/s: %v", name, rate, err)
			}
		}
	})
}

// compareRow returns the text table's row of metric label.
func compareRow(t *testing.T, stdout, label string) []string {
	t.Helper()
	for _, line := range strings.Split(stdout, "\n") {
		if i := strings.Index(line, " "+label+" "); i >= 0 {
			return strings.Fields(line[i:])
		}
	}
	t.Fatalf("no %s row in:\n%s", label, stdout)
	return nil
}

// TestCompareRealRuns compares three runs paced at about 1000 ops/s with
// three at about 500: IOPS half as high, significantly. The runs are on
// a simulated clock: on the wall clock, a loaded machine's paced run
// falls behind its schedule unevenly, and the verdict would be the
// machine's.
func TestCompareRealRuns(t *testing.T) {
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before"), filepath.Join(dir, "after")
	pacedRepeats(t, before, "paced", 1000, 990, 1000, 1010)
	pacedRepeats(t, after, "paced", 500, 495, 500, 505)
	pacedRepeats(t, before, "retired", 10, 1000)
	ctx := context.Background()

	code, stdout, stderr := cephbench(t, ctx, "compare", before, after, "--fail-if", "iops < -5%")
	if code != ExitFailure {
		t.Fatalf("exit %d, want 1:\n%s%s", code, stdout, stderr)
	}
	if want := "cephbench: --fail-if held: iops < -5% (1 measurement)\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	for _, want := range []string{"A: " + before + " (4 results, started ", "B: " + after + " (3 results, started ",
		"only in A: retired on null:// (read)", "FAILED iops < -5%: paced on null:// (read): IOPS -"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, stdout)
		}
	}
	// On the simulated clock, each run's IOPS is the rate it was paced
	// at: 1000 against 500 on average.
	if row := compareRow(t, stdout, "IOPS"); strings.Join(row, " ") != "IOPS 1000 500 -50.0% worse t-test n=3/3 p<0.0001" {
		t.Errorf("IOPS row %q: want 1000 against 500, -50.0%%, worse by t-test n=3/3", row)
	}

	code, plain, stderr := cephbench(t, ctx, "compare", before, after)
	if code != ExitOK || stderr != "" || !strings.Contains(plain, " worse ") || strings.Contains(plain, "FAILED") {
		t.Errorf("without --fail-if: exit %d, stderr %q, output:\n%s", code, stderr, plain)
	}

	// Reversed, the change is +100% and the same condition holds for nothing.
	code, stdout, _ = cephbench(t, ctx, "compare", after, before, "--fail-if", "p99.9 > 1000%,iops < -5%")
	if row := compareRow(t, stdout, "IOPS"); code != ExitOK || row[4] != "better" {
		t.Errorf("after vs before: exit %d, IOPS row %q; want exit 0, better", code, row)
	}

	code, stdout, _ = cephbench(t, ctx, "compare", before, after, "--format", "json", "--fail-if", "iops<-5%", "--fail-if", "bw < -5%")
	var got struct {
		Schema       string `json:"schema"`
		Measurements []aggregate.Matched
		OnlyA        []aggregate.Key     `json:"only_a"`
		Failures     []aggregate.Failure `json:"failures"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("exit %d: not JSON: %v\n%s", code, err, stdout)
	}
	if code != ExitFailure || got.Schema != comparison.Schema || len(got.Measurements) != 1 || len(got.OnlyA) != 1 || len(got.Failures) != 2 {
		t.Fatalf("JSON: exit %d, %+v", code, got)
	}
	iops := got.Measurements[0].Changes[0]
	if iops.Metric != "iops" || iops.Verdict != aggregate.Worse || iops.TTest == nil || iops.TTest.P >= 0.05 ||
		iops.A.N() != 3 || iops.B.N() != 3 || iops.Percent > -40 || iops.Percent < -60 {
		t.Errorf("JSON IOPS change %+v", iops)
	}

	code, stdout, _ = cephbench(t, ctx, "compare", before, after, "--format", "markdown")
	for _, want := range []string{"| Step | Target | Op | Metric | A | B | Change | Verdict | How |\n| :-- | :-- | :-- | :-- | --: | --: | --: | :-- | :-- |\n| paced | null:// | read | IOPS |", "| **worse** |", "- only in A: retired on null:// (read)"} {
		if code != ExitOK || !strings.Contains(stdout, want) {
			t.Errorf("markdown: exit %d, lacks %q:\n%s", code, want, stdout)
		}
	}
}

// saveRepeats saves results of a randread step on null:// with the given
// per-repeat IOPS into dir.
func saveRepeats(t *testing.T, dir, name string, iops ...float64) {
	t.Helper()
	for i, v := range iops {
		r := &result.Result{
			Schema: result.Schema, Name: name, Start: time.Date(2025, 3, 1, 12, 0, i, 0, time.UTC),
			Spec: spec.Workload{Name: name, Target: spec.Target{Scheme: "null"}, BlockSize: 4096},
			Ops: map[string]metrics.KindSummary{"read": {
				IOPS: metrics.Stats{Mean: v}, BandwidthBps: metrics.Stats{Mean: v * 4096},
				Latency: metrics.Latency{MeanNs: 1e9 / v},
			}},
		}
		if err := r.Save(filepath.Join(dir, fmt.Sprintf("%s-%d.json", name, i))); err != nil {
			t.Fatal(err)
		}
	}
}

// A 3% drop within a spread of 10% is noise: it fails a condition only
// with --ignore-noise.
func TestCompareNoiseDoesNotFail(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	saveRepeats(t, a, "randread", 1000, 1100, 900)
	saveRepeats(t, b, "randread", 970, 1070, 870)
	ctx := context.Background()
	code, stdout, stderr := cephbench(t, ctx, "compare", a, b, "--fail-if", "iops < -2%")
	if !strings.HasPrefix(stdout, "A: "+a+" (3 results, started 2025-03-01 12:00:00 UTC)\nB: "+b+" (3 results, started 2025-03-01 12:00:00 UTC)\n") {
		t.Errorf("header:\n%s", stdout)
	}
	if row := compareRow(t, stdout, "IOPS"); code != ExitOK || stderr != "" || strings.Join(row, " ") != "IOPS 1000 970 -3.0% within noise t-test n=3/3 p=0.73" {
		t.Errorf("exit %d, stderr %q, IOPS row %q", code, stderr, row)
	}
	code, stdout, stderr = cephbench(t, ctx, "compare", a, b, "--fail-if", "iops < -2%", "--ignore-noise")
	if code != ExitFailure || !strings.Contains(stdout, "FAILED iops < -2%: randread on null:// (read): IOPS -3.0%, within noise") || stderr == "" {
		t.Errorf("--ignore-noise: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
	// One repeat a side, without per-second figures: nothing can be said.
	code, stdout, _ = cephbench(t, ctx, "compare", filepath.Join(a, "randread-0.json"), filepath.Join(b, "randread-0.json"))
	if row := compareRow(t, stdout, "lat mean"); code != ExitOK || !strings.Contains(strings.Join(row, " "), "noise unknown n=1/1, one repeat") {
		t.Errorf("one repeat: exit %d, latency row %q", code, row)
	}
}

func TestCompareBadInput(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	saveRepeats(t, a, "randread", 1000)
	saveRepeats(t, b, "seqread", 1000)
	saveRepeats(t, b, "randread", 1000)
	other := filepath.Join(dir, "other")
	saveRepeats(t, other, "write", 1000)
	text := filepath.Join(dir, "notes.txt")
	notResult := filepath.Join(dir, "config.json")
	for path, content := range map[string]string{text: "hello\n", notResult: `{"schema": "something/v2"}`} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "no-such-folder")
	cases := []struct {
		name string
		args []string
		says string
	}{
		{"incomplete condition", []string{a, b, "--fail-if", "iops <"}, `"iops <"`},
		{"unknown metric", []string{a, b, "--fail-if", "foo < 5%"}, `unknown metric "foo"`},
		{"bad second condition", []string{a, b, "--fail-if", "iops < -5%, p99 > 10"}, `"p99 > 10"`},
		{"condition before paths", []string{missing, b, "--fail-if", "iops < five%"}, `"iops < five%"`},
		{"missing path", []string{a, missing}, "no-such-folder"},
		{"text file", []string{text, b}, "notes.txt"},
		{"not a result", []string{a, notResult}, "config.json"},
		{"nothing in common", []string{a, other}, "no measurement in common"},
		{"one path", []string{a}, "2 arg"},
		{"three paths", []string{a, b, other}, "2 arg"},
		{"bad format", []string{a, b, "--format", "html"}, `"html"`},
		{"bad alpha", []string{a, b, "--alpha", "1.5"}, "--alpha"},
	}
	for _, c := range cases {
		code, stdout, stderr := cephbench(t, context.Background(), append([]string{"compare"}, c.args...)...)
		wantUsageError(t, c.name, code, stdout, stderr)
		if !strings.Contains(stderr, c.says) {
			t.Errorf("%s: %q does not say %s", c.name, stderr, c.says)
		}
	}
	// What they share is compared; the rest is listed.
	code, stdout, _ := cephbench(t, context.Background(), "compare", a, b)
	if code != ExitOK || !strings.Contains(stdout, "only in B: seqread on null:// (read)") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}
