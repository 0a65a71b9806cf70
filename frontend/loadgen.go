//go:build ceph

package frontend

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/internal/peer/cephtext"
	"github.com/cephbench/cephbench/internal/peer/loadgen"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

func init() {
	register("rados load-gen", front{run: eachStep(radosLoadGen), estimate: func(j Job) (time.Duration, bool) { return durations(j), true }})
}

// radosLoadGen runs a load-gen step on its pool as rados load-gen does:
// prepare, run, wait, clean up, then the summary and the saved result.
// Once its objects are created they are removed whatever happens, Ctrl-C
// included.
func radosLoadGen(ctx context.Context, st step.Step, hooks step.Hooks, out IO) error {
	cfg := st.Front.LoadGen
	if cfg == nil {
		return engine.Usagef("%s: no rados load-gen options", st.Name)
	}
	if err := cfg.Validate(); err != nil {
		return &engine.UsageError{Err: err}
	}
	rt, err := rados.ParseTarget(st.Workload.Target.Location)
	if err != nil {
		return err
	}
	st.Workload = cfg.Workload(st.Workload.Target)
	pool, err := rados.OpenPool(rt)
	if err != nil {
		return err
	}
	defer pool.Close()
	if ctx.Err() != nil {
		return step.ErrInterrupted
	}
	// Ceph's own default (5G objects) fails here, but only once some
	// objects are written.
	if limit, err := pool.ObjectSizeLimit(); err == nil && cfg.MaxObjectSize > limit {
		return engine.Usagef("--max-object-size %s is over the OSDs' osd_max_object_size %s: they refuse larger objects",
			spec.Size(cfg.MaxObjectSize), spec.Size(limit))
	}
	prefix := loadGenPrefix()
	seed := rand.Uint64()
	g := loadgen.New(*cfg, prefix, seed)
	// Replication needs more, so this only catches the runs that cannot
	// fit at all (rados' 5G objects, say) before writing anything.
	if free, err := pool.FreeBytes(); err == nil && g.Bytes() > free {
		return engine.Usagef("preparing %d objects writes %s, more than the cluster's %s free: use fewer or smaller objects",
			cfg.Objects, gib(g.Bytes()), gib(free))
	}

	fmt.Fprintf(out.Stdout, "run length %s seconds\n", loadGenSeconds(cfg))
	fmt.Fprintf(out.Stdout, "preparing %d objects\n", cfg.Objects)
	names := g.Names()
	// Recorded first: a run killed while it creates, runs or removes
	// leaves objects that cephbench cleanup finds by the record.
	if err := pool.PutRecord(prefix + "obj"); err != nil {
		return err
	}
	created, err := pool.CreateExclusive(ctx, names)
	var cleanErr error
	cleanup := func() error {
		fmt.Fprintln(out.Stdout, "cleaning up objects")
		var ours []string
		for i, c := range created {
			if c {
				ours = append(ours, names[i])
			}
		}
		if err := pool.Remove(context.WithoutCancel(ctx), ours); err != nil {
			cleanErr = fmt.Errorf("removing the run's objects (%s*): %w", prefix, err)
		} else {
			cleanErr = pool.DropRecord(prefix + "obj")
		}
		return cleanErr
	}
	if err != nil {
		if cleanup() == nil && ctx.Err() != nil {
			return step.ErrInterrupted
		}
		return errors.Join(err, cleanErr)
	}
	st.Seed = seed
	st.Notes = append([]string{loadGenNote(*cfg, prefix)}, st.Notes...)
	res, err := loadGenRun(ctx, st, out, hooks, pool, g, cleanup)
	switch {
	case res == nil && ctx.Err() != nil && cleanErr == nil:
		return step.ErrInterrupted
	case err != nil:
		return err
	case cleanErr != nil:
		return cleanErr
	case res.Interrupted:
		return step.ErrInterrupted
	}
	return nil
}

// loadGenSeconds is the run length as rados load-gen prints it.
func loadGenSeconds(cfg *loadgen.Config) string {
	return strconv.FormatFloat(cfg.RunLength.D().Seconds(), 'f', -1, 64)
}

// loadGenRun fills the created objects, then runs st's load on them as
// every step runs, printing rados load-gen's lines; cleanup removes the
// objects once the run's ops are done, or if they could not be filled.
func loadGenRun(ctx context.Context, st step.Step, out IO, hooks step.Hooks, pool *rados.Pool, g *loadgen.Gen, cleanup func() error) (*result.Result, error) {
	cfg := st.Front.LoadGen
	set := pool.Objects(g.Names(), g.Sizes())
	closeSet := func() error {
		fmt.Fprintln(out.Stdout, "waiting for all operations to complete")
		return errors.Join(set.Close(context.WithoutCancel(ctx)), cleanup())
	}
	q, err := set.NewQueue(cfg.MaxOps)
	if err != nil {
		return nil, errors.Join(err, closeSet())
	}
	err = g.Prepare(ctx, q)
	if closeErr := q.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("load-gen: preparing the objects: %w", err), closeSet())
	}
	so := step.Output{
		Summary: out.Stdout, Live: out.Live, Hooks: hooks,
		Heading: fmt.Sprintf("load-gen will run %s seconds\n", loadGenSeconds(cfg)),
		Opened:  func(engine.Session) metrics.Subscriber { return cephtext.NewLoadGenProgress(out.Stdout).Tick },
	}
	return step.RunOn(ctx, set, st, so, runner.Options{}, closeSet)
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
