package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/report"
)

// CompareSchema identifies the JSON of "cephbench compare".
const CompareSchema = "cephbench.compare/v1"

// compareLong is compare's help: what is matched and how noise is told
// from a change.
const compareLong = `Compare the results of A and B, each a result file or a results folder:
typically a baseline before a change and a run after it, both with repeats.
Measurements are matched by step, job, target and op kind; those of one side
only are listed, not compared. For each matched measurement, IOPS, MiB/s and
latency mean, p50, p99 and p99.9 are compared: A's and B's mean over the
repeats, the change (B-A)/A in percent, and a verdict. More IOPS and MiB/s
are better, more latency is worse.

How noise is decided (the HOW column says which rule decided each verdict):
  - At least 2 repeats on each side: Welch's t-test on the per-repeat values
    (unequal variances), two-sided. The change is "better" or "worse" when
    p < --alpha (default 0.05), else "within noise". When neither side's
    repeats differ at all, any difference counts ("no spread").
  - One repeat on a side: run-to-run noise is unknown. For IOPS and MiB/s,
    the change still counts when it exceeds 3 times the larger per-second
    coefficient of variation (stddev/mean over the run's seconds) of the
    results compared, and of the repeats of a side that has several; each
    result needs at least 5 seconds. Seconds are correlated and one run
    shows nothing of how runs differ, so the spread is not divided down:
    the rule is deliberately conservative. Below it, and for latencies, the
    verdict is "noise unknown".

--fail-if METRIC OP PERCENT% (repeatable, or comma-separated) fails the
comparison when the condition holds for the change of any matched
measurement: METRIC is iops, bw (bandwidth), lat (latency mean), p50, p99 or
p99.9; OP is <, <=, > or >=. A change judged "within noise" never fails
("noise unknown" does); --ignore-noise fails on the change alone.

Exit status: 0 when compared (also when things got worse, without
--fail-if); 1 when a --fail-if condition holds, after printing the
comparison and which measurements failed; 2 for bad input (a bad
condition, a missing path, a file that is not a result, nothing in
common). JSON figures are in ops/s, bytes/s and nanoseconds.`

func newCompareCmd(env Env) *cobra.Command {
	var (
		failIf      []string
		format      string
		alpha       float64
		ignoreNoise bool
	)
	cmd := &cobra.Command{
		Use:   "compare A B [--fail-if COND]... [--format text|markdown|json] [--alpha 0.05]",
		Short: "Compare two runs (say, before and after a tuning change) and tell changes from noise",
		Long:  compareLong,
		Example: `  cephbench compare results/before results/after
  cephbench compare before/ after/ --fail-if 'iops < -5%' --fail-if 'p99 > 10%'
  cephbench compare base.json new.json --format markdown >> "$GITHUB_STEP_SUMMARY"`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			if format != "text" && format != "markdown" && format != "json" {
				return usagef("invalid --format %q (want text, markdown or json)", format)
			}
			if !(alpha > 0 && alpha < 1) {
				return usagef("invalid --alpha %g (want a probability between 0 and 1)", alpha)
			}
			conds, err := parseFailIf(failIf)
			if err != nil {
				return err
			}
			sets, err := loadCompared(args)
			if err != nil {
				return err
			}
			c := aggregate.Compare(sets[0].Groups(), sets[1].Groups(), alpha)
			if len(c.Matched) == 0 {
				return usagef("%s and %s have no measurement in common (matched by step, job, target and op kind)", args[0], args[1])
			}
			rep := compareReport{
				Schema: CompareSchema, A: sideOf(args[0], sets[0]), B: sideOf(args[1], sets[1]),
				Comparison: c, IgnoreNoise: ignoreNoise, FailIf: []string{}, Failures: c.Failures(conds, ignoreNoise),
			}
			for _, c := range conds {
				rep.FailIf = append(rep.FailIf, c.Text)
			}
			if rep.Failures == nil {
				rep.Failures = []aggregate.Failure{}
			}
			switch format {
			case "json":
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false) // keep "p<0.0001" readable
				if err := enc.Encode(rep); err != nil {
					return err
				}
			default:
				rep.write(env.Stdout, format == "markdown")
			}
			if len(rep.Failures) > 0 {
				return failuref("--fail-if held: %s", rep.failureCounts())
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&failIf, "fail-if", nil, "exit 1 if a change meets this condition, as in 'iops < -5%' (repeatable, or comma-separated)")
	fl.StringVar(&format, "format", "text", "text, markdown (GitHub tables) or json")
	fl.Float64Var(&alpha, "alpha", 0.05, "significance level of the t-test")
	fl.BoolVar(&ignoreNoise, "ignore-noise", false, "let --fail-if fail on changes judged within noise too")
	return cmd
}

// compareSide describes one side of a comparison.
type compareSide struct {
	Path        string    `json:"path"`
	Plan        string    `json:"plan,omitempty"`
	Results     int       `json:"results"`
	Interrupted int       `json:"interrupted,omitempty"`
	Start       time.Time `json:"start,omitzero"` // of the first result
}

func sideOf(path string, s *aggregate.Set) compareSide {
	side := compareSide{Path: path, Results: len(s.Results)}
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
	}
	return side
}

func (s compareSide) String() string {
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

// compareReport is what "cephbench compare" prints, and its JSON.
type compareReport struct {
	Schema string      `json:"schema"`
	A      compareSide `json:"a"`
	B      compareSide `json:"b"`
	aggregate.Comparison
	IgnoreNoise bool                `json:"ignore_noise"`
	FailIf      []string            `json:"fail_if"`
	Failures    []aggregate.Failure `json:"failures"`
}

// failureCounts says how many measurements each failed condition held
// for, in one line.
func (r *compareReport) failureCounts() string {
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

// write prints the report as text, or as GitHub markdown.
func (r *compareReport) write(w io.Writer, markdown bool) {
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

// parseFailIf parses the --fail-if flags, each one condition or several
// separated by commas.
func parseFailIf(flags []string) ([]aggregate.Condition, error) {
	var conds []aggregate.Condition
	for _, flag := range flags {
		for part := range strings.SplitSeq(flag, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			c, err := aggregate.ParseCondition(part)
			if err != nil {
				return nil, usagef("--fail-if: %v", err)
			}
			conds = append(conds, c)
		}
	}
	return conds, nil
}

// loadCompared loads the two sides of a comparison; a missing path or a
// file that is not a result is bad input.
func loadCompared(paths []string) ([2]*aggregate.Set, error) {
	var sets [2]*aggregate.Set
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return sets, usageErr(err)
		}
	}
	for i, p := range paths {
		s, err := aggregate.Load(p)
		if err != nil {
			return sets, usageErr(err)
		}
		sets[i] = s
	}
	return sets, nil
}
