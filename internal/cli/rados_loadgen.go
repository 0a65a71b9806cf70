//go:build ceph

package cli

import (
	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/peer/loadgen"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

func newRadosLoadGenCmd(env Env, cf *cephFlags) *cobra.Command {
	def := loadgen.Defaults()
	var (
		objects     = def.Objects
		minObject   = spec.Size(def.MinObjectSize)
		maxObject   = spec.Size(def.MaxObjectSize)
		minOp       = spec.Size(def.MinOpLen)
		maxOp       = spec.Size(def.MaxOpLen)
		maxOps      = def.MaxOps
		backlog     = spec.Size(def.MaxBacklog)
		readPercent = def.ReadPercent
		throughput  = loadgen.Rate{Bytes: spec.Size(def.Throughput)}
		runLength   = spec.Duration(def.RunLength)
		align       spec.Size
		minOps      string
		results     string
	)
	cmd := &cobra.Command{
		Use:   "load-gen [flags]",
		Short: "rados load-gen: random reads and writes of random sizes over objects of random sizes, paced to a throughput",
		Long: `Ceph's "rados load-gen", natively, with its options and output: it writes
--num-objects objects of random sizes, then for --run-length seconds reads
(--read-percent of the ops) and writes random ranges of them, at most
--max-ops ops and --max-backlog bytes in flight, paced to --target-throughput,
then removes them. Every op is measured: the summary has latency
percentiles and a JSON result is saved.

Pacing is open loop: op N is due when the bytes of the ops before it are,
and its latency counts from then, so time spent waiting for a free slot is
in it; ops that start over a millisecond after they were due are counted
late, and those never started, missed. With a target the cluster cannot
reach, latency grows with the backlog: use --target-throughput 0 to run as
fast as --max-ops and --max-backlog allow (rados reads 0 as its default).

Unlike rados: the objects are filled with random data and the writes carry
cephbench's data pattern (rados' objects are sparse and its writes are
zeros), so --max-object-size defaults to 4M rather than rados' 5G; a run's objects are named cephbench_loadgen_HOST_PID_RUN_objN and created
exclusively, so it never writes over or removes an object it did not create,
also when interrupted. --percent, the spelling of older releases (which
Ceph 16 ignores), is --read-percent here.`,
		Example: `  cephbench rados -p rbd load-gen --num-objects 50 --min-object-size 4M --max-object-size 4M \
      --max-ops 16 --min-op-len 4M --max-op-len 4M --percent 5 --target-throughput 0 --run-length 60
  cephbench rados -p rbd load-gen --target-throughput 20M --run-length 5m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := loadgen.Config{
				Objects: objects, MinObjectSize: int64(minObject), MaxObjectSize: int64(maxObject),
				MinOpLen: int64(minOp), MaxOpLen: int64(maxOp), MaxOps: maxOps, MaxBacklog: int64(backlog),
				ReadPercent: readPercent, Throughput: int64(throughput.Bytes), RunLength: runLength,
				OffsetAlign: int64(align),
			}
			if err := cfg.Validate(); err != nil {
				return usageErr(err)
			}
			_, target, err := cf.target(nil)
			if err != nil {
				return err
			}
			var notes []string
			if cmd.Flags().Changed("min-ops") {
				notes = append(notes, "cephbench: note: rados load-gen has no --min-ops option (rados ignores it); ignored")
			}
			if note := throughput.UnitNote(); note != "" {
				notes = append(notes, "cephbench: note: "+note)
			}
			st := step.Step{Name: "rados-load-gen", Workload: cfg.Workload(target), Save: stamped(env.path(results), "rados-load-gen") + ".json",
				Front: step.Front{Command: "rados load-gen", LoadGen: &cfg}}
			return env.run(cmd.Context(), frontend.Job{Command: "rados load-gen", Steps: []step.Step{st}, Notes: notes})
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&objects, "num-objects", objects, "objects to write before the run and use during it")
	fl.Var(&minObject, "min-object-size", "smallest object size")
	fl.Var(&maxObject, "max-object-size", "largest object size (rados' default is 5G, of sparse objects)")
	fl.Var(&minOp, "min-op-len", "shortest read or write")
	fl.Var(&maxOp, "max-op-len", "longest read or write (cut to the object's size)")
	fl.IntVar(&maxOps, "max-ops", maxOps, "ops in flight at most")
	fl.Var(&backlog, "max-backlog", "bytes in flight at most: no op starts while this many are")
	fl.IntVar(&readPercent, "read-percent", readPercent, "percentage of the ops that read")
	fl.Var(&throughput, "target-throughput", "bytes per second to pace the ops at, open loop (20M); 0: unpaced")
	fl.Var(&runLength, "run-length", "how long to run (seconds, or 30s, 2m)")
	fl.Var(&align, "offset-align", "align each op's offset down to a multiple of this (0: unaligned)")
	resultsFlag(fl, &results)
	env.metrics.register(fl)
	env.watchFlag(fl)
	// The spellings found in field reports and older releases.
	fl.IntVar(&readPercent, "percent", readPercent, "same as --read-percent")
	fl.Var(&minObject, "min-objects-size", "same as --min-object-size")
	fl.Var(&maxObject, "max-objects-size", "same as --max-object-size")
	fl.StringVar(&minOps, "min-ops", "", "not a rados load-gen option; accepted and ignored")
	fl.Lookup("min-ops").NoOptDefVal = " "
	for _, name := range []string{"min-objects-size", "max-objects-size", "min-ops"} {
		_ = fl.MarkHidden(name) // cannot fail: the flags exist
	}
	return cmd
}
