//go:build ceph

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/internal/peer/cephtext"
	"github.com/cephbench/cephbench/internal/peer/loadgen"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
)

// rateFlag is --target-throughput: bytes per second with the size units
// (20M), as Ceph 16's rados reads it. It remembers a value given without a
// unit, which older rados releases read as MB/s.
type rateFlag struct {
	n    spec.Size
	bare bool
}

func (r *rateFlag) Set(s string) error {
	n, err := spec.ParseSize(s)
	if err != nil {
		return err
	}
	_, numErr := strconv.ParseFloat(strings.TrimSpace(s), 64)
	r.n, r.bare = n, numErr == nil
	return nil
}

func (r *rateFlag) String() string { return r.n.String() }

func (*rateFlag) Type() string { return "bytes/s" }

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
		throughput  = rateFlag{n: spec.Size(def.Throughput)}
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
				ReadPercent: readPercent, Throughput: int64(throughput.n), RunLength: runLength,
				OffsetAlign: int64(align),
			}
			if err := cfg.Validate(); err != nil {
				return usageErr(err)
			}
			rt, target, err := cf.target(nil)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("min-ops") {
				fmt.Fprintln(env.Stderr, "cephbench: note: rados load-gen has no --min-ops option (rados ignores it); ignored")
			}
			if throughput.bare && throughput.n > 0 && throughput.n < 1<<20 {
				fmt.Fprintf(env.Stderr, "cephbench: note: --target-throughput %d is %d bytes/s, as Ceph 16's rados reads it; older releases read MB/s: write %dM for that\n",
					int64(throughput.n), int64(throughput.n), int64(throughput.n))
			}
			return radosLoadGen(cmd.Context(), env, cfg, rt, target, results)
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

// radosLoadGen runs a validated load-gen on rt's pool: prepare, run, wait,
// clean up, then the summary and the saved result. Once its objects are
// created they are removed whatever happens, Ctrl-C included.
func radosLoadGen(ctx context.Context, env Env, cfg loadgen.Config, rt rados.Target, target spec.Target, resultsDir string) error {
	out := env.Stdout
	pool, err := rados.OpenPool(rt)
	if err != nil {
		return err
	}
	defer pool.Close()
	if ctx.Err() != nil {
		return errInterrupted
	}
	// Ceph's own default (5G objects) fails here, but only once some
	// objects are written.
	if limit, err := pool.ObjectSizeLimit(); err == nil && cfg.MaxObjectSize > limit {
		return usagef("--max-object-size %s is over the OSDs' osd_max_object_size %s: they refuse larger objects",
			spec.Size(cfg.MaxObjectSize), spec.Size(limit))
	}
	prefix := loadGenPrefix()
	seed := rand.Uint64()
	g := loadgen.New(cfg, prefix, seed)
	// Replication needs more, so this only catches the runs that cannot
	// fit at all (rados' 5G objects, say) before writing anything.
	if free, err := pool.FreeBytes(); err == nil && g.Bytes() > free {
		return usagef("preparing %d objects writes %s, more than the cluster's %s free: use fewer or smaller objects",
			cfg.Objects, gib(g.Bytes()), gib(free))
	}

	secs := strconv.FormatFloat(cfg.RunLength.D().Seconds(), 'f', -1, 64)
	fmt.Fprintf(out, "run length %s seconds\n", secs)
	fmt.Fprintf(out, "preparing %d objects\n", cfg.Objects)
	names := g.Names()
	created, err := pool.CreateExclusive(ctx, names)
	var res *result.Result
	save := stamped(resultsDir, "rados-load-gen") + ".json"
	if err == nil {
		res, err = loadGenRun(ctx, out, pool, g, cfg, target, secs, seed, save)
	}
	fmt.Fprintln(out, "cleaning up objects")
	var ours []string
	for i, c := range created {
		if c {
			ours = append(ours, names[i])
		}
	}
	cleanErr := pool.Remove(context.WithoutCancel(ctx), ours)
	if cleanErr != nil {
		cleanErr = fmt.Errorf("removing the run's objects (%s*): %w", prefix, cleanErr)
	}
	if res == nil {
		if ctx.Err() != nil && cleanErr == nil {
			return errInterrupted
		}
		return errors.Join(err, cleanErr)
	}
	res.Notes = append([]string{loadGenNote(cfg, prefix)}, res.Notes...)
	if cleanErr != nil {
		res.Notes = append(res.Notes, "cleanup failed: "+oneLine(cleanErr.Error()))
	}
	if err := res.Save(save); err != nil {
		return fmt.Errorf("saving the result: %w", err)
	}
	report.Summary(out, res)
	fmt.Fprintf(out, "  result saved to %s\n", save)
	switch {
	case cleanErr != nil:
		return cleanErr
	case res.Interrupted:
		return errInterrupted
	}
	return nil
}

// loadGenRun fills the created objects, then runs the load through the
// runner, printing rados load-gen's lines and writing the tick log beside
// save. It returns the run's result, or nil if the objects could not be
// filled or the run could not start.
func loadGenRun(ctx context.Context, out io.Writer, pool *rados.Pool, g *loadgen.Gen, cfg loadgen.Config, target spec.Target, secs string, seed uint64, save string) (*result.Result, error) {
	set := pool.Objects(g.Names(), g.Sizes())
	defer set.Close(context.WithoutCancel(ctx))
	q, err := set.NewQueue(cfg.MaxOps)
	if err != nil {
		return nil, err
	}
	err = g.Prepare(ctx, q)
	if closeErr := q.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return nil, fmt.Errorf("load-gen: preparing the objects: %w", err)
	}

	ticks, err := result.CreateTickLog(result.TickLogPath(save), time.Now())
	if err != nil {
		return nil, fmt.Errorf("the tick log: %w", err)
	}
	fmt.Fprintf(out, "load-gen will run %s seconds\n", secs)
	state := &cluster.Pair{}
	state.Before, err = pool.ClusterSnapshot()
	stateErr := err
	w := cfg.Workload(target)
	subscribers := []metrics.Subscriber{cephtext.NewLoadGenProgress(out).Tick, ticks.Tick}
	outcome, err := runner.Run(ctx, set, &w, runner.Options{Subscribers: subscribers, Seed: seed})
	fmt.Fprintln(out, "waiting for all operations to complete")
	if err != nil {
		ticks.Discard()
		return nil, fmt.Errorf("load-gen: %w", err)
	}
	state.After, err = pool.ClusterSnapshot()
	stateErr = errors.Join(stateErr, err)

	res, err := outcome.Result("rados-load-gen", &w, result.ThisHost())
	if err != nil {
		ticks.Discard()
		return nil, err
	}
	if err := res.Attach(ticks); err != nil {
		return nil, err
	}
	res.Cluster = state
	if stateErr != nil {
		res.Notes = append(res.Notes, "the cluster's state could not be read: "+oneLine(stateErr.Error()))
	}
	return res, nil
}

// loadGenPrefix names a run's objects: this host and process, as rados
// bench does, and a random run number, so that runs of one process, or of
// a process whose pid a crashed one had, never share a name.
func loadGenPrefix() string {
	host, _ := os.Hostname()
	if len(host) > 29 {
		host = host[:29]
	}
	return fmt.Sprintf("cephbench_loadgen_%s_%d_%06x_", host, os.Getpid(), rand.Uint32()&0xffffff)
}

// loadGenNote records the options the workload in the result cannot hold.
func loadGenNote(cfg loadgen.Config, prefix string) string {
	pace := "unpaced"
	if cfg.Throughput > 0 {
		pace = "paced at " + spec.Size(cfg.Throughput).String() + "/s"
	}
	align := ""
	if cfg.OffsetAlign > 0 {
		align = ", aligned to " + spec.Size(cfg.OffsetAlign).String()
	}
	return fmt.Sprintf("load-gen: %d objects (%sobjN) of %s..%s; ops of %s..%s at random offsets%s, %d%% reads; at most %d ops and %s in flight, %s",
		cfg.Objects, prefix, spec.Size(cfg.MinObjectSize), spec.Size(cfg.MaxObjectSize),
		spec.Size(cfg.MinOpLen), spec.Size(cfg.MaxOpLen), align, cfg.ReadPercent,
		cfg.MaxOps, spec.Size(cfg.MaxBacklog), pace)
}

// gib formats a byte count for a message.
func gib(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }
