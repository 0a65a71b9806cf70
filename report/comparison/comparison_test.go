package comparison

import (
	"strings"
	"testing"

	"github.com/cephbench/cephbench/aggregate"
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
