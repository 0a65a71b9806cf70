package comparison

import (
	"strings"
	"testing"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/result"
)

func TestFailureCountsNameEachConditionOnce(t *testing.T) {
	r := &Report{Failures: []aggregate.Failure{{Condition: "iops < -5%"}, {Condition: "p99 > 10%"}, {Condition: "iops < -5%"}}}
	if got, want := r.FailureCounts(), "iops < -5% (2 measurements), p99 > 10% (1 measurement)"; got != want {
		t.Errorf("FailureCounts() = %q; want %q", got, want)
	}
}

func TestTablesAlignAndEscape(t *testing.T) {
	rows := [][]string{{"STEP", "A"}, {"a|b", "1.0µs"}, {"long-step", "10"}}
	right := []bool{false, true}
	var text strings.Builder
	writeTextTable(&text, rows, right)
	want := "STEP           A\na|b        1.0µs\nlong-step     10\n"
	if text.String() != want {
		t.Errorf("text table:\n%s\nwant\n%s", text.String(), want)
	}
	var md strings.Builder
	writeMarkdownTable(&md, rows, right)
	if !strings.Contains(md.String(), `| a\|b | 1.0µs |`) || !strings.Contains(md.String(), "| :-- | --: |") {
		t.Errorf("markdown table:\n%s", md.String())
	}
}

// A side with runs the cluster was not at rest for says so beneath the
// table.
func TestASideWhoseClusterWasNotAtRestIsNamed(t *testing.T) {
	busy := &result.Result{Cluster: &cluster.Pair{During: &cluster.During{Samples: 5, Events: []cluster.Event{{What: "osd.1 down", At: 3}}}}}
	calm := &result.Result{Cluster: &cluster.Pair{During: &cluster.During{Samples: 5}}}
	a := SideOf("a", &aggregate.Set{Results: []*result.Result{busy, calm}})
	b := SideOf("b", &aggregate.Set{Results: []*result.Result{calm}})
	var out strings.Builder
	New(a, b, aggregate.Comparison{}, nil, false).Write(&out, false)
	if !strings.Contains(out.String(), "A: the cluster was NOT AT REST during 1 of its 2 runs") || strings.Contains(out.String(), "B: the cluster was") {
		t.Errorf("report:\n%s", out.String())
	}
}
