package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/report"
)

// mergeLong is merge's help: what is added, what must match, what is
// warned about.
const mergeLong = `Merge the results of one step run on several hosts at once, by any launcher
(Slurm, Ansible, by hand), into the one result of the whole run, saved to
OUT with its tick log beside it.

Ops, bytes and errors are added; latency percentiles come from the hosts'
histograms added together, never from averaging the hosts' figures; the
per-second series adds the hosts' seconds on absolute time. The measured
time is the overlap of the hosts' measured windows, and the rates are over
the seconds every host ran; a note says by how much the windows fall short
of overlapping fully when they differ by more than 50 ms. Each host's own result is kept in the merged one.
What the cluster did, and its samples, are those of the host that watched it.

Results whose workloads differ are refused, naming the two results and the
field; only a host's own parts may differ: the target's location (its
directory, pool, image or bucket), the file prefix and the pacing rates
(its share; the merged rates are their sum). Results whose histogram
settings differ are refused too.

Exit status: 0 when merged; 2 for bad input (a missing file, a file that is
not a result, fewer than two results, results that do not match).`

func newMergeCmd(env Env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:     "merge RESULT.json... -o OUT.json",
		Short:   "Merge the results of one step run on several hosts at once into one exact result",
		Long:    mergeLong,
		Example: `  cephbench merge client1/randread.json client2/randread.json client3/randread.json -o all/randread.json`,
		Args:    cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if out == "" {
				return usagef("merge: -o OUT is required: where the merged result goes")
			}
			if len(args) < 2 {
				return usagef("merge: give the results of at least two hosts (got %d)", len(args))
			}
			runs := make([]aggregate.HostRun, len(args))
			for i, arg := range args {
				run, err := aggregate.LoadHostRun(env.path(arg))
				if err != nil {
					return usageErr(err)
				}
				run.Name = arg // as the user wrote it, in errors and notes
				runs[i] = run
			}
			merged, intervals, err := aggregate.MergeHosts(runs)
			if err != nil {
				return usageErr(err)
			}
			save := env.path(out)
			saved, err := merged.SaveNew(save, intervals, aggregate.ClusterOf(runs))
			if saved != "" {
				report.Summary(env.Stdout, merged)
				if saved == save {
					saved = out // as the user wrote it
				}
				fmt.Fprintf(env.Stdout, "  result saved to %s\n", saved)
			}
			if err != nil {
				return fmt.Errorf("saving the merged result: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the merged result's file (its tick log goes beside it)")
	return cmd
}
