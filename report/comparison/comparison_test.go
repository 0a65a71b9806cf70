package comparison

import (
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/metrics"
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

// Sides whose buffers were in different memory are named, as are runs
// whose pacer lagged; results saved before either was recorded are not.
func TestSidesThatDifferInBufferMemoryOrPacerLagAreNamed(t *testing.T) {
	h := metrics.NewHistogram()
	for range 100 {
		_ = h.RecordValue(int64(time.Millisecond)) // every op issued 1 ms late
	}
	lag, err := result.NewPacerLag(h)
	if err != nil {
		t.Fatal(err)
	}
	small, huge, old := &result.Result{}, &result.Result{PacerLag: lag}, &result.Result{}
	small.Spec.BufferMemory, huge.Spec.BufferMemory = "malloc", "mmaphuge"
	var out strings.Builder
	New(SideOf("a", &aggregate.Set{Results: []*result.Result{small, old}}), SideOf("b", &aggregate.Set{Results: []*result.Result{huge}}),
		aggregate.Comparison{}, nil, false).Write(&out, false)
	for _, want := range []string{"buffers were in different memory (A malloc, B mmaphuge)", "B: the pacer issued ops late in 1 of its 1 runs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	New(SideOf("a", &aggregate.Set{Results: []*result.Result{small}}), SideOf("b", &aggregate.Set{Results: []*result.Result{small, old}}),
		aggregate.Comparison{}, nil, false).Write(&out, false)
	if strings.Contains(out.String(), "different memory") || strings.Contains(out.String(), "pacer") {
		t.Errorf("like for like, the report still says:\n%s", out.String())
	}
}
