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

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/internal/peer/cephtext"
	"github.com/cephbench/cephbench/internal/peer/loadgen"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
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
func radosLoadGen(ctx context.Context, st step.Step, out IO) error {
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
	created, err := pool.CreateExclusive(ctx, names)
	var res *result.Result
	if err == nil {
		res, err = loadGenRun(ctx, st, out, pool, g, seed)
	}
	fmt.Fprintln(out.Stdout, "cleaning up objects")
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
			return step.ErrInterrupted
		}
		return errors.Join(err, cleanErr)
	}
	res.Notes = append([]string{loadGenNote(*cfg, prefix)}, res.Notes...)
	if cleanErr != nil {
		res.Notes = append(res.Notes, "cleanup failed: "+oneLine(cleanErr.Error()))
	}
	if err := res.Save(st.Save); err != nil {
		return fmt.Errorf("saving the result: %w", err)
	}
	report.Summary(out.Stdout, res)
	fmt.Fprintf(out.Stdout, "  result saved to %s\n", st.Save)
	switch {
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

// loadGenRun fills the created objects, then runs st's load through the
// runner, printing rados load-gen's lines and writing the tick log beside
// st's result. It returns the run's result, or nil if the objects could
// not be filled or the run could not start.
func loadGenRun(ctx context.Context, st step.Step, out IO, pool *rados.Pool, g *loadgen.Gen, seed uint64) (*result.Result, error) {
	cfg := st.Front.LoadGen
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

	ticks, err := result.CreateTickLog(result.TickLogPath(st.Save), time.Now())
	if err != nil {
		return nil, fmt.Errorf("the tick log: %w", err)
	}
	fmt.Fprintf(out.Stdout, "load-gen will run %s seconds\n", loadGenSeconds(cfg))
	state := &cluster.Pair{}
	state.Before, err = pool.ClusterSnapshot()
	stateErr := err
	subscribers := []metrics.Subscriber{cephtext.NewLoadGenProgress(out.Stdout).Tick, ticks.Tick}
	if out.Live != nil {
		live := out.Live.Line(st)
		subscribers = append(subscribers, live.Tick)
		defer live.Clear()
	}
	outcome, err := runner.Run(ctx, set, &st.Workload, runner.Options{Subscribers: subscribers, Seed: seed})
	fmt.Fprintln(out.Stdout, "waiting for all operations to complete")
	if err != nil {
		ticks.Discard()
		return nil, fmt.Errorf("load-gen: %w", err)
	}
	state.After, err = pool.ClusterSnapshot()
	stateErr = errors.Join(stateErr, err)

	res, err := outcome.Result(st.Name, &st.Workload, result.ThisHost())
	if err != nil {
		ticks.Discard()
		return nil, err
	}
	if err := res.Attach(ticks); err != nil {
		return nil, err
	}
	res.Cluster = state
	res.Plan = st.Plan
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
