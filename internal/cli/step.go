package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/io/diskstats"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
)

// step is one workload to run and where its result goes.
type step struct {
	name string
	w    spec.Workload
	// save is the JSON result's path; empty means not saved.
	save string
	// fit, if set, completes the workload from the target's geometry once
	// the session is open (a bound of one pass over a whole device).
	fit func(*spec.Workload, engine.Geometry) error
	// seed makes the random offsets repeat from run to run; zero draws
	// new ones each run.
	seed uint64
}

// stepOutput says where a step's text goes.
type stepOutput struct {
	progress io.Writer // the heading and per-second table; nil for none
	summary  io.Writer // the summary; nil for none
	// heading, if set, replaces report.Heading's line (s3 bench says what
	// a phase does in its own words).
	heading string
	// Front ends that print their own formats (rados bench) set opened
	// instead: it sees the session before the run starts and returns what
	// gets every second (or nil).
	opened func(engine.Session) metrics.Subscriber
	// soFar, if set, sees the run's outcome up to each second
	// (runner.Options.SoFar).
	soFar func(*runner.Outcome)
}

// defaultResults is where commands save their results unless told.
const defaultResults = "cephbench-results"

// resultsFlag registers --results, the folder results are saved under.
func resultsFlag(fl *pflag.FlagSet, dir *string) {
	fl.StringVar(dir, "results", defaultResults, "folder under which results are saved")
}

// stampLayout is the local time that starts the names of saved results
// and results folders, so that they sort by when they ran.
const stampLayout = "20060102-150405"

// stamped is the path, in dir, of a result or folder called name made
// now.
func stamped(dir, name string) string {
	return filepath.Join(dir, time.Now().Format(stampLayout)+"-"+name)
}

// liveKey carries, in a context, where a plan run wants the live progress
// line of the steps it runs (the commands it runs write their text to a
// log, so the terminal shows only the line).
type liveKey struct{}

type liveLine struct {
	w           io.Writer
	label, step string
}

// withLiveLine asks the steps run under ctx to draw a live progress line
// on w, starting with label, for the plan step called step.
func withLiveLine(ctx context.Context, w io.Writer, label, step string) context.Context {
	return context.WithValue(ctx, liveKey{}, liveLine{w: w, label: label, step: step})
}

// runStep opens the target, runs the workload and closes the session (which
// removes what it created unless the workload keeps it), then saves the
// result. An interrupted step still returns its result.
func runStep(ctx context.Context, st step, out stepOutput) (*result.Result, error) {
	if st.fit == nil {
		if err := st.w.Validate(); err != nil {
			return nil, usageErr(err)
		}
	}
	sess, err := engine.Open(ctx, &st.w)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		return nil, fmt.Errorf("%s: %w", st.name, err)
	}
	if st.fit != nil {
		if err := st.fit(&st.w, sess.Geometry()); err != nil {
			return nil, errors.Join(usageErr(fmt.Errorf("%s: %w", st.name, err)), sess.Close(context.WithoutCancel(ctx)))
		}
	}
	return runOn(ctx, sess, st, out, runner.Options{}, func() error { return sess.Close(context.WithoutCancel(ctx)) })
}

// runOn runs st on sess, an open session, with opts (its seed, ticks and
// SoFar set here), then calls closeSess, if set, before the result is
// made (a session that serves more steps stays open), and saves and
// prints the result. An interrupted step still returns its result.
func runOn(ctx context.Context, sess engine.Session, st step, out stepOutput, opts runner.Options, closeSess func() error) (*result.Result, error) {
	if closeSess == nil {
		closeSess = func() error { return nil }
	}
	opts.Seed, opts.SoFar = st.seed, out.soFar
	if opts.Seed == 0 {
		opts.Seed = uint64(time.Now().UnixNano())
	}
	heading := func(w io.Writer) {
		if out.heading != "" {
			fmt.Fprint(w, out.heading)
		} else {
			report.Heading(w, st.name, &st.w)
		}
	}
	var table metrics.Subscriber
	if out.progress != nil {
		heading(out.progress)
		table = report.NewProgress(out.progress).Tick
	} else if out.summary != nil {
		heading(out.summary)
	}
	if out.opened != nil {
		if tick := out.opened(sess); tick != nil {
			table = tick
		}
	}
	var ticks *result.TickLog
	if st.save != "" {
		// First in line: a second is on disk before it is printed.
		var err error
		if ticks, err = result.CreateTickLog(result.TickLogPath(st.save), time.Now()); err != nil {
			return nil, errors.Join(fmt.Errorf("%s: the tick log: %w", st.name, err), closeSess())
		}
		opts.Subscribers = append(opts.Subscribers, ticks.Tick)
	}
	if table != nil {
		opts.Subscribers = append(opts.Subscribers, table)
	}
	if ll, ok := ctx.Value(liveKey{}).(liveLine); ok {
		label := ll.label
		if !strings.HasPrefix(ll.step, st.name) {
			label += " " + st.name
		}
		live := report.NewLive(ll.w, label, time.Duration(st.w.Duration))
		opts.Subscribers = append(opts.Subscribers, live.Tick)
		defer live.Clear()
	}
	var state *cluster.Pair
	var stateErr error
	reporter, onCluster := sess.(engine.ClusterReporter)
	if onCluster {
		state = &cluster.Pair{}
		state.Before, stateErr = reporter.ClusterSnapshot()
	}
	disks := watchDisks(&st.w)
	outcome, runErr := runner.Run(ctx, sess, &st.w, opts)
	if onCluster {
		var err error
		state.After, err = reporter.ClusterSnapshot()
		stateErr = errors.Join(stateErr, err)
	}
	// Clean up even when interrupted: the user's Ctrl-C must not leave
	// our files behind.
	closeErr := closeSess()
	if runErr != nil {
		if ticks != nil {
			ticks.Discard()
		}
		return nil, fmt.Errorf("%s: %w", st.name, runErr)
	}
	res, err := outcome.Result(st.name, &st.w, result.ThisHost())
	if err != nil {
		if ticks != nil {
			ticks.Discard()
		}
		return nil, err
	}
	res.Cluster = state
	res.Disks = disks.stop()
	if stateErr != nil {
		res.Notes = append(res.Notes, "the cluster's state could not be read: "+oneLine(stateErr.Error()))
	}
	if df, ok := sess.(engine.BufferedFallback); ok && df.DirectFallback() {
		res.Notes = append(res.Notes, "the filesystem refused O_DIRECT, so this step used buffered I/O (page cache)")
	}
	if closeErr != nil {
		res.Notes = append(res.Notes, "cleanup failed: "+closeErr.Error())
	}
	if st.save != "" {
		if err := res.Attach(ticks); err != nil {
			return res, fmt.Errorf("saving the result: %w", err)
		}
		if err := res.Save(st.save); err != nil {
			return res, fmt.Errorf("saving the result: %w", err)
		}
	}
	if out.summary != nil {
		report.Summary(out.summary, res)
		if st.save != "" {
			fmt.Fprintf(out.summary, "  result saved to %s\n", st.save)
		}
	}
	return res, nil
}

// diskWatch samples the block devices under a local target around a run.
type diskWatch struct{ w *diskstats.Watch }

// watchDisks starts sampling the devices under w's target if its engine
// asks for them and the path is on block devices; otherwise its stop
// returns nothing.
func watchDisks(w *spec.Workload) diskWatch {
	if d, err := engine.Describe(w.Target.Scheme); err != nil || !d.LocalDisks {
		return diskWatch{}
	}
	devices, err := diskstats.DevicesOf(w.Target.Location)
	if err != nil || len(devices) == 0 {
		return diskWatch{}
	}
	watch, err := diskstats.Start(devices)
	if err != nil {
		return diskWatch{}
	}
	return diskWatch{watch}
}

func (d diskWatch) stop() []result.DiskUsage {
	if d.w == nil {
		return nil
	}
	usage, err := d.w.Stop()
	if err != nil {
		return nil
	}
	out := make([]result.DiskUsage, 0, len(usage))
	for _, u := range usage {
		out = append(out, result.DiskUsage{Name: u.Name, Util: u.Util, ReadIOs: int64(u.ReadIOs), WriteIOs: int64(u.WriteIOs)})
	}
	return out
}
