package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/agent"
)

func newAgentCmd(env Env) *cobra.Command {
	var (
		stdio       bool
		results     string
		clockOffset time.Duration
	)
	cmd := &cobra.Command{
		Use:   "agent --stdio [--results DIR]",
		Short: "Run the jobs a coordinator on another host sends on stdin, streaming what they measure on stdout",
		Long: `Run workloads for a coordinator (cephbench --hosts, or a Kubernetes Job): the
coordinator starts "cephbench agent --stdio" over ssh or in a pod, sends jobs
as JSON lines on stdin and reads a hello, ready, one tick a second, each
step's result and any error as JSON lines on stdout. Stdout carries only
those lines; the agent's own messages go to stderr. It opens no port.

A running job stops, and what it wrote is removed, as soon as stdin closes,
the coordinator says stop, or the job's deadline passes, so a lost
coordinator never leaves load running. --results keeps each step's result
and tick log on this host too (by default they are only sent).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !stdio {
				return usagef("agent: --stdio is the only mode: the agent speaks on its stdin and stdout")
			}
			in := env.Stdin
			if in == nil {
				in = strings.NewReader("")
			}
			opts := agent.Options{Results: env.path(results), Stderr: env.Stderr}
			if clockOffset != 0 {
				opts.Now = func() time.Time { return time.Now().Add(clockOffset) }
			}
			return ranErr(agent.Serve(cmd.Context(), in, env.Stdout, opts))
		},
	}
	cmd.Flags().BoolVar(&stdio, "stdio", false, "speak the protocol on stdin and stdout")
	cmd.Flags().StringVar(&results, "results", "", "also save the steps' results in this folder on this host")
	// A host whose clock is off, for checking a coordinator's skew rule
	// without setting a machine's clock.
	cmd.Flags().DurationVar(&clockOffset, "clock-offset", 0, "act as if this host's clock were this far ahead")
	_ = cmd.Flags().MarkHidden("clock-offset") // the flag exists: it cannot fail
	return cmd
}
