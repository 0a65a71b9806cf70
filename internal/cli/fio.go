package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/cmdline"
	"github.com/cephbench/cephbench/internal/peer/fiojob"
	"github.com/cephbench/cephbench/result"
)

const fioHelp = `Usage: cephbench fio [options] [jobfile ...]

Runs fio's jobs with cephbench's own engines: the same command-line options
(--name=value, -name=value, --name value) and INI job files ([global],
include, ${VAR}, numjobs, stonewall, new_group), and fio's output
(--output-format=normal, json, json+ or terse). An option cephbench cannot
honour is an error naming it and why; those that only tune fio itself
(gtod_reduce, invalidate, ...) are named once on stderr and ignored.

Engines: psync (also sync, vsync, pvsync, pvsync2), libaio, io_uring, null,
rbd (pool=, rbdname=, clientname=) and rados (pool=, clientname=).

cephbench's own options:
  --force         write over a file, device or image cephbench did not create
  --keep          leave the files and images cephbench created
  --results DIR   where cephbench's own JSON results go (default cephbench-results)
  --hosts h1,h2,...  run on these hosts at once over ssh; fio's output is of the merged
                  jobs (--hostfile and the other host flags: see cephbench bench --help)
  --cluster-interval D  sample a Ceph cluster's own view this often during the run
                  (default 1s; 0: do not); the verdict goes to stderr

Examples:
  cephbench fio --rw=rw --bs=1m --size=10M --numjobs=20 --group_reporting --name=test-rw
  cephbench fio -direct=1 -iodepth=128 -rw=randwrite -ioengine=libaio -bs=4k -size=1G -runtime=60 -time_based -filename=/dev/sdb -name=Rand_Write_Test --force
  cephbench fio write.fio --output-format=json
`

func newFioCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "fio [options] [jobfile ...]",
		Short: "Run fio command lines and job files natively, with fio's output",
		// fio's options are not POSIX flags (-direct=1, bare booleans,
		// job files between them): fiojob reads them all.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The host flags are cephbench's, among fio's.
			hosts := pflag.NewFlagSet("hosts", pflag.ContinueOnError)
			env.hosts.register(hosts)
			env.metrics.register(hosts)
			env.watchFlag(hosts)
			args, err := cmdline.Take(hosts, args)
			if err != nil {
				return usageErr(err)
			}
			plan, err := fiojob.Parse(args, env.getenv, env.readFile)
			switch {
			case err != nil:
				return usageErr(err)
			case plan.Help:
				fmt.Fprint(env.Stdout, fioHelp)
				return nil
			case plan.Version:
				fmt.Fprintf(env.Stdout, "cephbench-%s\n", result.Version)
				return nil
			case len(plan.Jobs) == 0:
				return usagef("no jobs: give a --name=NAME with its options, or a job file")
			}
			return env.run(cmd.Context(), fioJob(env, plan))
		},
	}
}

// fioJob is the job of a fio invocation, its paths taken from the working
// directory.
func fioJob(env Env, plan *fiojob.Plan) frontend.Job {
	results := env.path(plan.ResultsDir)
	if results == "" {
		results = env.path(defaultResults)
	}
	plan.Output = env.path(plan.Output)
	return frontend.FioJob(plan, env.Dir, results, stamped(results, "fio")) // one stamp for all the invocation's jobs
}
