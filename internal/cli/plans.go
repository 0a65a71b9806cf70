package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/plan"
	"github.com/cephbench/cephbench/plan/planrun"
	"github.com/cephbench/cephbench/spec"
)

func newPlansCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "plans [NAME]",
		Short: "List the built-in test plans, or print one as a plan file",
		Long: `With no name, list the built-in plans and what each needs (--set
NAME=VALUE for "cephbench run"). With a name, print that plan as YAML: the
format of a plan file, to copy and change. "quick" is printed as it runs on
./cephbench-data with 10 s steps.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return listPlans(env)
			}
			if args[0] == "quick" {
				r, err := planrun.Quick("cephbench-data", spec.Duration(10e9), false)
				if err != nil {
					return err
				}
				_, err = env.Stdout.Write(r.Source())
				return err
			}
			b, ok := plan.Builtin(args[0])
			if !ok {
				return usagef("no built-in plan %q (built-in: quick, %s)", args[0], strings.Join(plan.BuiltinNames(), ", "))
			}
			_, err := env.Stdout.Write(b)
			return err
		},
	}
}

func listPlans(env Env) error {
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PLAN\tSTEPS\tNEEDS\tWHAT")
	fmt.Fprintln(tw, "quick\t5\t-\tthe default: 4M objects and 4K random file I/O on ./cephbench-data (or --target), about a minute")
	plans, err := plan.BuiltinSummaries()
	if err != nil {
		return err
	}
	for _, p := range plans {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.Steps, strings.Join(p.Needs, " "), p.What)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "\ncephbench plans NAME prints a plan as YAML; cephbench run NAME --set VAR=VALUE runs it.")
	return nil
}
