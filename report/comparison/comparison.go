// Package comparison is the document "cephbench compare" prints: the two
// sides, each matched measurement's changes and verdicts, what only one
// side has, and the --fail-if conditions that held; as text, GitHub
// markdown or JSON.
package comparison

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
)

// Schema identifies the JSON of "cephbench compare".
const Schema = "cephbench.compare/v1"

// New is the report of comparison c between sides a and b, with the
// failures of conds (changes within noise fail only with ignoreNoise).
func New(a, b Side, c aggregate.Comparison, conds []aggregate.Condition, ignoreNoise bool) *Report {
	r := &Report{
		Schema: Schema, A: a, B: b, Comparison: c, IgnoreNoise: ignoreNoise,
		FailIf: []string{}, Failures: c.Failures(conds, ignoreNoise),
	}
	for _, cond := range conds {
		r.FailIf = append(r.FailIf, cond.Text)
	}
	if r.Failures == nil {
		r.Failures = []aggregate.Failure{}
	}
	return r
}

// Side describes one side of a comparison: where its results are and
// how many.
type Side struct {
	Path        string `json:"path"`
	Plan        string `json:"plan,omitempty"`
	Results     int    `json:"results"`
	Interrupted int    `json:"interrupted,omitempty"`
	// NotAtRest counts the results whose run saw the cluster do other
	// work (a scrub, recovery, an OSD down): their figures may show it.
	NotAtRest int `json:"cluster_not_at_rest,omitempty"`
	// BufferMemory is the kinds of memory its results' buffers were in
	// (spec.BufferMemories), sorted; results saved before it was recorded
	// add none.
	BufferMemory []string `json:"buffer_memory,omitempty"`
	// PacerLagged counts the paced results whose generator issued ops
	// late (result.PacerLag.Lagged): their latencies hold the client's
	// lateness.
	PacerLagged int       `json:"pacer_lagged,omitempty"`
	Start       time.Time `json:"start,omitzero"` // of the first result
}

// SideOf describes the results set s, loaded from path.
func SideOf(path string, s *aggregate.Set) Side {
	side := Side{Path: path, Results: len(s.Results)}
	for _, src := range s.Sources {
		if src.Manifest != nil {
			side.Plan = src.Manifest.Plan
		}
	}
	for _, r := range s.Results {
		if side.Start.IsZero() || r.Start.Before(side.Start) {
			side.Start = r.Start
		}
		if r.Interrupted {
			side.Interrupted++
		}
		if r.Cluster != nil && r.Cluster.During != nil && !r.Cluster.During.AtRest() {
			side.NotAtRest++
		}
		if m := r.Spec.BufferMemory; m != "" && !slices.Contains(side.BufferMemory, m) {
			side.BufferMemory = append(side.BufferMemory, m)
		}
		if r.PacerLag.Lagged() {
			side.PacerLagged++
		}
	}
	slices.Sort(side.BufferMemory)
	return side
}

// String is the side in one line: its plan, results and start.
func (s Side) String() string {
	var facts []string
	if s.Plan != "" {
		facts = append(facts, "plan "+s.Plan)
	}
	n := fmt.Sprintf("%d results", s.Results)
	if s.Results == 1 {
		n = "1 result"
	}
	if s.Interrupted > 0 {
		n += fmt.Sprintf(" (%d interrupted)", s.Interrupted)
	}
	facts = append(facts, n)
	if !s.Start.IsZero() {
		facts = append(facts, "started "+s.Start.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	return strings.Join(facts, ", ")
}

// Report is what "cephbench compare" prints, and, marshalled, its JSON.
type Report struct {
	Schema string `json:"schema"`
	A      Side   `json:"a"`
	B      Side   `json:"b"`
	aggregate.Comparison
	IgnoreNoise bool                `json:"ignore_noise"`
	FailIf      []string            `json:"fail_if"`
	Failures    []aggregate.Failure `json:"failures"`
}

// FailureCounts says how many measurements each failed condition held
// for, in one line.
func (r *Report) FailureCounts() string {
	var order []string
	count := map[string]int{}
	for _, f := range r.Failures {
		if count[f.Condition] == 0 {
			order = append(order, f.Condition)
		}
		count[f.Condition]++
	}
	parts := make([]string, len(order))
	for i, c := range order {
		noun := "measurements"
		if count[c] == 1 {
			noun = "measurement"
		}
		parts[i] = fmt.Sprintf("%s (%d %s)", c, count[c], noun)
	}
	return strings.Join(parts, ", ")
}

// Write prints the report as text, or as GitHub markdown.
func (r *Report) Write(w io.Writer, markdown bool) {
	code := func(s string) string { return s }
	bullet := ""
	if markdown {
		code = func(s string) string { return "`" + s + "`" }
		bullet = "- "
	}
	fmt.Fprintf(w, "%sA: %s (%s)\n", bullet, code(r.A.Path), r.A)
	fmt.Fprintf(w, "%sB: %s (%s)\n\n", bullet, code(r.B.Path), r.B)

	rows := [][]string{{"STEP", "TARGET", "OP", "METRIC", "A", "B", "CHANGE", "VERDICT", "HOW"}}
	if markdown {
		rows[0] = []string{"Step", "Target", "Op", "Metric", "A", "B", "Change", "Verdict", "How"}
	}
	for _, m := range r.Matched {
		for i, ch := range m.Changes {
			name, target, kind := m.Name(), m.Target, m.Kind
			if m.A.Errors+m.B.Errors > 0 {
				kind += fmt.Sprintf(" (errors %d/%d)", m.A.Errors, m.B.Errors)
			}
			if i > 0 {
				name, target, kind = "", "", ""
			}
			metric, _ := aggregate.MetricNamed(ch.Metric)
			verdict := string(ch.Verdict)
			if markdown && (ch.Verdict == aggregate.Better || ch.Verdict == aggregate.Worse) {
				verdict = "**" + verdict + "**"
			}
			rows = append(rows, []string{name, target, kind, metric.Label,
				figure(ch.Metric, ch.A.Mean), figure(ch.Metric, ch.B.Mean), fmt.Sprintf("%+.1f%%", ch.Percent),
				verdict, ch.Method})
		}
	}
	right := []bool{false, false, false, false, true, true, true, false, false}
	if markdown {
		writeMarkdownTable(w, rows, right)
	} else {
		writeTextTable(w, rows, right)
	}

	var notes []string
	a, b := r.A.BufferMemory, r.B.BufferMemory
	if len(a) > 0 && len(b) > 0 && !slices.Equal(a, b) {
		notes = append(notes, fmt.Sprintf("A's and B's buffers were in different memory (A %s, B %s): a direct I/O costs the kernel less from huge pages, so the change may be that",
			strings.Join(a, ", "), strings.Join(b, ", ")))
	}
	for _, side := range []struct {
		name string
		s    Side
	}{{"A", r.A}, {"B", r.B}} {
		if side.s.NotAtRest > 0 {
			notes = append(notes, fmt.Sprintf("%s: the cluster was NOT AT REST during %d of its %d runs (a scrub, recovery, an OSD or health change): cephbench report says what it did",
				side.name, side.s.NotAtRest, side.s.Results))
		}
		if side.s.PacerLagged > 0 {
			notes = append(notes, fmt.Sprintf("%s: the pacer issued ops late in %d of its %d runs (lag p99 over %s): their latencies hold the client's lateness",
				side.name, side.s.PacerLagged, side.s.Results, report.Latency(float64(result.LagLimit))))
		}
	}
	for _, k := range r.OnlyA {
		notes = append(notes, "only in A: "+k.String())
	}
	for _, k := range r.OnlyB {
		notes = append(notes, "only in B: "+k.String())
	}
	for _, f := range r.Failures {
		metric, _ := aggregate.MetricNamed(f.Metric)
		notes = append(notes, fmt.Sprintf("FAILED %s: %s: %s %+.1f%%, %s (%s)", code(f.Condition), f.Key, metric.Label, f.Percent, f.Verdict, f.Method))
	}
	fmt.Fprintln(w)
	for _, n := range notes {
		fmt.Fprintf(w, "%s%s\n", bullet, n)
	}
	if len(notes) > 0 && markdown {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "better/worse: beyond run-to-run noise (Welch's t-test, p < %g; one repeat: 3x the per-second spread)\n", r.Alpha)
}

// figure formats a metric's value in the units of report's tables.
func figure(metric string, v float64) string {
	switch metric {
	case "iops":
		return report.IOPS(v)
	case "bw":
		return report.MiBps(v)
	}
	return report.Latency(v)
}

// writeTextTable aligns rows in columns two spaces apart; right marks the
// right-aligned columns. Widths count runes, for "µs".
func writeTextTable(w io.Writer, rows [][]string, right []bool) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, cell := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if right[i] {
				b.WriteString(pad + cell)
			} else {
				b.WriteString(cell + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// writeMarkdownTable prints rows as a GitHub table, the first row its
// heading.
func writeMarkdownTable(w io.Writer, rows [][]string, right []bool) {
	line := func(cells []string) {
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	for i, row := range rows {
		cells := make([]string, len(row))
		for j, c := range row {
			cells[j] = strings.ReplaceAll(c, "|", `\|`)
		}
		line(cells)
		if i == 0 {
			align := make([]string, len(row))
			for j := range align {
				align[j] = ":--"
				if right[j] {
					align[j] = "--:"
				}
			}
			line(align)
		}
	}
}
