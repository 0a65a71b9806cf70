package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/result"
)

// runTwoTargets runs the two-target plan with three repeats into a new
// folder and returns it.
func runTwoTargets(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := cephbench(t, context.Background(), "run", writePlan(t, twoTargets), "--set", "dir="+t.TempDir(), "--out", out, "-q")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	return out
}

func TestReportAggregatesTheRepeatsOfAPlan(t *testing.T) {
	out := runTwoTargets(t)
	m, err := result.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	// What each measurement's repeats measured, from their own files.
	perRepeat := map[string][]float64{}
	for _, st := range m.Steps {
		r, err := result.Load(filepath.Join(out, st.Results[0]))
		if err != nil {
			t.Fatal(err)
		}
		key := st.Step + "@" + st.Target
		perRepeat[key] = append(perRepeat[key], r.Ops["read"].IOPS.Mean)
	}

	code, stdout, stderr := cephbench(t, context.Background(), "report", out, "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	aggregates := 0
	for _, row := range rows[1:] {
		if row[col["repeat"]] != "all" {
			continue
		}
		aggregates++
		values := perRepeat[row[col["step"]]+"@"+row[col["target"]]]
		var sum, sq float64
		for _, v := range values {
			sum += v
		}
		mean := sum / float64(len(values))
		for _, v := range values {
			sq += (v - mean) * (v - mean)
		}
		got := func(name string) float64 {
			v, err := strconv.ParseFloat(row[col[name]], 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return v
		}
		if row[col["n"]] != "3" || math.Abs(got("iops")-mean) > 1e-6*mean || math.Abs(got("iops_stddev")-math.Sqrt(sq/2)) > 1e-6*mean {
			t.Errorf("%s @%s: n %s, iops %s, stddev %s; the repeats' files give %v", row[col["step"]], row[col["target"]],
				row[col["n"]], row[col["iops"]], row[col["iops_stddev"]], values)
		}
	}
	if aggregates != 4 {
		t.Errorf("%d aggregate rows; want 4 (2 sizes x 2 targets)", aggregates)
	}

	code, text, _ := cephbench(t, context.Background(), "report", out, "--repeats")
	if code != 0 {
		t.Fatalf("text: exit %d", code)
	}
	for _, want := range []string{"plan two-targets", "randread bs=4k   mem", "randread bs=16k  local", "#3", "Side by side:", "mem IOPS", "local IOPS", "Client hosts:"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text report lacks %q:\n%s", want, text)
		}
	}

	code, md, _ := cephbench(t, context.Background(), "report", out, "--format", "markdown")
	if code != 0 || !strings.Contains(md, "| randread bs=16k | local | read | 16K | 3 |") || !strings.Contains(md, "## Side by side") {
		t.Errorf("markdown: exit %d\n%s", code, md)
	}

	code, js, _ := cephbench(t, context.Background(), "report", out, "--format", "json")
	var doc struct {
		Schema       string            `json:"schema"`
		Measurements []json.RawMessage `json:"measurements"`
	}
	if code != 0 || json.Unmarshal([]byte(js), &doc) != nil || doc.Schema != "cephbench.report/v1" || len(doc.Measurements) != 4 {
		t.Errorf("json: exit %d, schema %q, %d measurements", code, doc.Schema, len(doc.Measurements))
	}

	page := filepath.Join(t.TempDir(), "report.html")
	code, stdout, stderr = cephbench(t, context.Background(), "report", out, "--format", "html", "-o", page)
	b, _ := os.ReadFile(page)
	if code != 0 || stdout != "" || !strings.Contains(stderr, page) || !strings.Contains(string(b), "<svg") {
		t.Errorf("html: exit %d, stdout %q, stderr %q, %d bytes", code, stdout, stderr, len(b))
	}
}

func TestReportFormatFollowsTheOutputsExtension(t *testing.T) {
	out := runTwoTargets(t)
	for ext, start := range map[string]string{".csv": "step,job,target", ".md": "# cephbench report", ".json": "{", ".html": "<!DOCTYPE html>"} {
		file := filepath.Join(t.TempDir(), "report"+ext)
		if code, _, stderr := cephbench(t, context.Background(), "report", out, "-o", file); code != 0 {
			t.Fatalf("%s: exit %d: %s", ext, code, stderr)
		}
		b, _ := os.ReadFile(file)
		if !strings.HasPrefix(strings.TrimSpace(string(b)), start) {
			t.Errorf("-o report%s starts %.40q; want %q", ext, b, start)
		}
	}
}

func TestReportBadInput(t *testing.T) {
	notResult := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(notResult, []byte(`{"hello": 1}`), 0o644)
	text := filepath.Join(t.TempDir(), "x.txt")
	os.WriteFile(text, []byte("not json"), 0o644)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no arguments", []string{"report"}},
		{"missing path", []string{"report", "/nonexistent/results"}},
		{"not a result", []string{"report", notResult}},
		{"not json", []string{"report", text}},
		{"empty folder", []string{"report", t.TempDir()}},
		{"unknown format", []string{"report", notResult, "--format", "pdf"}},
		{"unwritable output", []string{"report", runTwoTargets(t), "-o", "/nonexistent/dir/r.html"}},
	} {
		code, stdout, stderr := cephbench(t, context.Background(), c.args...)
		wantUsageError(t, c.name, code, stdout, stderr)
	}
}
