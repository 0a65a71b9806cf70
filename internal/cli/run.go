package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// The built-in plan's data budget: at most this much, and at most a
// quarter of the free space, so it runs on a small laptop disk.
const (
	quickObjectBudget = 1 << 30
	quickFileSize     = 256 << 20
	minFreeBytes      = 64 << 20
)

// perWorkerFile is the file engine's name for worker 0's file in a
// directory target.
const perWorkerFile = "cephbench.0.dat"

// objectSteps are the plan's object steps on target: rados-bench style
// 4M writes (16 in flight, rewriting at most budget bytes of objects so a
// time-bound write keeps a bounded footprint), then verified sequential
// and random reads of them. The write keeps its objects for the reads; the
// plan removes them at the end.
func objectSteps(target spec.Target, dur spec.Duration, budget uint64) []step {
	objects := spec.Workload{
		Target: target, BlockSize: 4 << 20,
		Objects: max(int64(budget/(4<<20)), 1), Cycle: true, Workers: 16, QueueDepth: 1, Duration: dur, Keep: true,
	}
	return []step{
		planStep("objects-write-4M", objects, spec.Sequential, 0),
		planStep("objects-seq-read-4M", objects, spec.Sequential, 100),
		planStep("objects-rand-read-4M", objects, spec.Random, 100),
	}
}

// fileSteps are the plan's 4K random writes and reads of a file in dir,
// with O_DIRECT, 16 in flight.
func fileSteps(dir string, dur spec.Duration, size uint64) []step {
	file := spec.Workload{
		Target: spec.Target{Scheme: "file", Location: dir}, BlockSize: 4 << 10,
		FileSize: spec.Size(size), Workers: 1, QueueDepth: 16, Duration: dur, Direct: true, Keep: true,
	}
	return []step{
		planStep("file-randwrite-4K", file, spec.Random, 0),
		planStep("file-randread-4K", file, spec.Random, 100),
	}
}

// blockSteps are the plan's steps on an RBD image: 4M sequential writes
// and reads, 16 in flight, then 4K random writes and reads, 16 in flight.
// size is the region addressed, and the size of an image the target asks
// to create; reads are verified only on an image the plan creates (one
// that holds a user's data holds no blocks cephbench can check).
func blockSteps(target spec.Target, dur spec.Duration, size uint64, creates bool) []step {
	large := spec.Workload{
		Target: target, BlockSize: 4 << 20, FileSize: spec.Size(size), Workers: 1, QueueDepth: 16, Duration: dur, Keep: true,
	}
	small := large
	small.BlockSize = 4 << 10
	steps := []step{
		planStep("block-seqwrite-4M", large, spec.Sequential, 0),
		planStep("block-seqread-4M", large, spec.Sequential, 100),
		planStep("block-randwrite-4K", small, spec.Random, 0),
		planStep("block-randread-4K", small, spec.Random, 100),
	}
	if !creates {
		for i := range steps {
			steps[i].w.Verify = false
		}
	}
	return steps
}

// cephfsSteps are the plan's file steps on a CephFS directory: 4K random
// writes and reads of a file, 16 in flight (libcephfs has no O_DIRECT).
func cephfsSteps(target spec.Target, dur spec.Duration, size uint64) []step {
	steps := fileSteps(target.Location, dur, size)
	for i := range steps {
		steps[i].w.Target, steps[i].w.Direct = target, false
	}
	return steps
}

func planStep(name string, base spec.Workload, p spec.Pattern, reads int) step {
	w := base
	w.Name, w.Pattern, w.ReadPercent, w.Verify = name, p, reads, reads > 0
	return step{name: name, w: w}
}

func newRunCmd(env Env) *cobra.Command {
	var (
		target   string
		duration = spec.Duration(10 * time.Second)
		format   string
		results  string
		quiet    bool
	)
	cmd := &cobra.Command{
		Use:   "run [--target DIR|rados://POOL|rbd://POOL/IMAGE|cephfs://[FS]/PATH|s3://BUCKET[/PREFIX]] [--duration 10s]",
		Short: "Run the built-in test plan (about a minute on a local directory)",
		Long: `Run the built-in "quick" plan against a local directory (./cephbench-data by
default, created if needed): 4M object writes, then sequential and random
object reads (like rados bench write/seq/rand), then 4K random writes and
reads of a file. Each step prints a per-second table and a summary; a table
of all steps ends the run. Every result is saved as JSON under --results.
Only the files the plan created are removed at the end.

With --target rados://POOL the plan runs its object steps on a RADOS pool
(rados bench's objects, removed at the end); with s3://BUCKET[/PREFIX], on
S3 (the bucket created if missing and removed only if the plan created it). With rbd://POOL/IMAGE it runs
4M sequential and 4K random writes and reads on the image (an existing
image is written over unless it is in use or holds a filesystem;
rbd://POOL/IMAGE?create=true creates one of 256 MiB and removes it at the
end). With cephfs://[FS]/PATH it runs the file steps in a CephFS directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return usagef("invalid --format %q (want text or json)", format)
			}
			if duration <= 0 {
				return usagef("--duration must be positive")
			}
			return runQuick(cmd.Context(), env, target, duration, format, results, quiet)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&target, "target", "cephbench-data", "directory to run the plan in, or rados://POOL, rbd://POOL/IMAGE, cephfs://[FS]/PATH, s3://BUCKET[/PREFIX]")
	fl.Var(&duration, "duration", "measured time of each step: 10s, 1m, ...")
	fl.StringVar(&format, "format", "text", "text, or json (only the JSON results on stdout; progress goes to stderr)")
	fl.StringVar(&results, "results", "cephbench-results", "folder under which each run's results are saved")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no per-second tables")
	return cmd
}

func runQuick(ctx context.Context, env Env, target string, dur spec.Duration, format, resultsDir string, quiet bool) error {
	if strings.Contains(target, "://") {
		t, err := spec.ParseTarget(target)
		if err != nil {
			return usageErr(err)
		}
		var steps []step
		switch t.Scheme {
		case "rados", "s3":
			steps = objectSteps(t, dur, quickObjectBudget)
		case "rbd":
			creates := strings.Contains(t.Location, "create=true")
			size := uint64(0) // the whole image
			if creates {
				size = quickFileSize
			}
			steps = blockSteps(t, dur, size, creates)
		case "cephfs":
			steps = cephfsSteps(t, dur, quickFileSize)
		default:
			return usagef("the built-in plan runs on a local directory, rados://POOL, rbd://POOL/IMAGE, cephfs://[FS]/PATH or s3://BUCKET[/PREFIX], not on %s://", t.Scheme)
		}
		return runPlan(ctx, env, target, steps, format, resultsDir, quiet, func() error {
			return engine.CleanKept(context.WithoutCancel(ctx), t)
		})
	}
	dir := target
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return usagef("--target %s is not a directory", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return usageErr(err)
	}
	if _, err := os.Stat(filepath.Dir(filepath.Clean(dir))); err != nil {
		return usagef("--target %s: parent directory does not exist", dir)
	}
	_, statErr := os.Stat(dir)
	createdDir := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	free := fs.Bavail * uint64(fs.Bsize)
	if free < minFreeBytes {
		return usagef("%s has only %d MiB free; the plan needs at least %d MiB", dir, free>>20, minFreeBytes>>20)
	}
	_, fileErr := os.Stat(filepath.Join(dir, perWorkerFile))
	fileWasThere := fileErr == nil

	objects := spec.Target{Scheme: "dirobj", Location: dir}
	steps := append(objectSteps(objects, dur, min(uint64(quickObjectBudget), free/4)),
		fileSteps(dir, dur, min(uint64(quickFileSize), free/8)&^(1<<20-1))...)
	return runPlan(ctx, env, dir, steps, format, resultsDir, quiet, func() error {
		err := engine.CleanKept(context.WithoutCancel(ctx), objects)
		if !fileWasThere {
			os.Remove(filepath.Join(dir, perWorkerFile))
		}
		if createdDir {
			os.Remove(dir) // only if empty: never remove what others put there
		}
		return err
	})
}

// runPlan runs steps in order, stopping at the first that fails or is
// interrupted, then runs cleanup whatever happened, and reports every
// finished step.
func runPlan(ctx context.Context, env Env, where string, steps []step, format, resultsDir string, quiet bool, cleanup func() error) error {
	runDir := filepath.Join(resultsDir, time.Now().Format("20060102-150405")+"-quick")
	text, progress := env.Stdout, io.Writer(env.Stdout)
	if format == "json" {
		text, progress = env.Stderr, env.Stderr
	}
	if quiet {
		progress = nil
	}
	fmt.Fprintf(text, "cephbench %s: built-in plan, %d steps of %s on %s\n\n", result.Version, len(steps), steps[0].w.Duration, where)

	var done []*result.Result
	var stepErr error
	for i, st := range steps {
		st.save = filepath.Join(runDir, fmt.Sprintf("%02d-%s.json", i+1, st.name))
		res, err := runStep(ctx, st, stepOutput{progress: progress, summary: text})
		if res != nil {
			done = append(done, res)
			fmt.Fprintln(text)
		}
		if err != nil {
			stepErr = err
			break
		}
		if res.Interrupted {
			stepErr = errInterrupted
			break
		}
	}
	if err := cleanup(); err != nil {
		fmt.Fprintf(env.Stderr, "cephbench: cleaning up %s: %v\n", where, err)
	}

	if len(done) > 0 {
		report.Table(text, done)
		fmt.Fprintf(text, "\nresults: %s\n", runDir)
	}
	if format == "json" {
		b, err := json.MarshalIndent(done, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s\n", b)
	}
	return stepErr
}
