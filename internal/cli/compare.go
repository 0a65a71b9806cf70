package cli

import (
	"encoding/json"
	"os"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/report/comparison"
)

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
			for i := range args {
				args[i] = env.path(args[i])
			}
			if format != "text" && format != "markdown" && format != "json" {
				return usagef("invalid --format %q (want text, markdown or json)", format)
			}
			if !(alpha > 0 && alpha < 1) {
				return usagef("invalid --alpha %g (want a probability between 0 and 1)", alpha)
			}
			conds, err := aggregate.ParseConditions(failIf)
			if err != nil {
				return usagef("--fail-if: %v", err)
			}
			sets, err := loadCompared(args)
			if err != nil {
				return err
			}
			c := aggregate.Compare(sets[0].Groups(), sets[1].Groups(), alpha)
			if len(c.Matched) == 0 {
				return usagef("%s and %s have no measurement in common (matched by step, job, target and op kind)", args[0], args[1])
			}
			rep := comparison.New(comparison.SideOf(args[0], sets[0]), comparison.SideOf(args[1], sets[1]), c, conds, ignoreNoise)
			switch format {
			case "json":
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false) // keep "p<0.0001" readable
				if err := enc.Encode(rep); err != nil {
					return err
				}
			default:
				rep.Write(env.Stdout, format == "markdown")
			}
			if len(rep.Failures) > 0 {
				return failuref("--fail-if held: %s", rep.FailureCounts())
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
