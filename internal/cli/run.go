package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/plan"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
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
func objectSteps(target spec.Target, dur spec.Duration, budget uint64) []step.Step {
	objects := spec.Workload{
		Target: target, BlockSize: 4 << 20,
		Objects: max(int64(budget/(4<<20)), 1), Cycle: true, Workers: 16, QueueDepth: 1, Duration: dur, Keep: true,
	}
	return []step.Step{
		planStep("objects-write-4M", objects, spec.Sequential, 0),
		planStep("objects-seq-read-4M", objects, spec.Sequential, 100),
		planStep("objects-rand-read-4M", objects, spec.Random, 100),
	}
}

// fileSteps are the plan's 4K random writes and reads of a file in the
// directory target, with O_DIRECT, 16 in flight.
func fileSteps(target spec.Target, dur spec.Duration, size uint64) []step.Step {
	file := spec.Workload{
		Target: target, BlockSize: 4 << 10,
		FileSize: spec.Size(size), Workers: 1, QueueDepth: 16, Duration: dur, Direct: true, Keep: true,
	}
	return []step.Step{
		planStep("file-randwrite-4K", file, spec.Random, 0),
		planStep("file-randread-4K", file, spec.Random, 100),
	}
}

// blockSteps are the plan's steps on an RBD image: 4M sequential writes
// and reads, 16 in flight, then 4K random writes and reads, 16 in flight.
// size is the region addressed, and the size of an image the target asks
// to create; reads are verified only on an image the plan creates (one
// that holds a user's data holds no blocks cephbench can check).
func blockSteps(target spec.Target, dur spec.Duration, size uint64, creates bool) []step.Step {
	large := spec.Workload{
		Target: target, BlockSize: 4 << 20, FileSize: spec.Size(size), Workers: 1, QueueDepth: 16, Duration: dur, Keep: true,
	}
	small := large
	small.BlockSize = 4 << 10
	steps := []step.Step{
		planStep("block-seqwrite-4M", large, spec.Sequential, 0),
		planStep("block-seqread-4M", large, spec.Sequential, 100),
		planStep("block-randwrite-4K", small, spec.Random, 0),
		planStep("block-randread-4K", small, spec.Random, 100),
	}
	if !creates {
		for i := range steps {
			steps[i].Workload.Verify = false
		}
	}
	return steps
}

// cephfsSteps are the plan's file steps on a CephFS directory: 4K random
// writes and reads of a file, 16 in flight (libcephfs has no O_DIRECT).
func cephfsSteps(target spec.Target, dur spec.Duration, size uint64) []step.Step {
	steps := fileSteps(target, dur, size)
	for i := range steps {
		steps[i].Workload.Direct = false
	}
	return steps
}

func planStep(name string, base spec.Workload, p spec.Pattern, reads int) step.Step {
	w := base
	w.Name, w.Pattern, w.ReadPercent, w.Verify = name, p, reads, reads > 0
	return step.Step{Name: name, Workload: w}
}

func newRunCmd(env Env) *cobra.Command {
	var (
		target   string
		duration = spec.Duration(10 * time.Second)
		format   string
		results  string
		out      string
		resume   string
		sets     []string
		dryRun   bool
		quiet    bool
	)
	cmd := &cobra.Command{
		Use:   "run [PLAN.yaml|BUILT-IN] [--set NAME=VALUE]... [--out DIR | --resume DIR] [--dry-run]",
		Short: "Run a test plan: the built-in quick plan by default, a built-in one, or a YAML file",
		Long: `Run a test plan and save every step's result, its text output and a
manifest in one results folder (--out DIR, by default a new timestamped
folder under --results). A plan that fails or is interrupted keeps what
it finished and runs its cleanup; --resume DIR runs the steps it did not
finish (and the steps those need, such as the write a read reads).
--dry-run prints the steps, their command lines and the time they take,
and runs nothing. "cephbench plans" lists the built-in plans and prints
any of them as YAML, the format of a plan file.

With no plan, the built-in "quick" plan runs against a local directory
(./cephbench-data by default, created if needed): 4M object writes, then
sequential and random object reads (like rados bench write/seq/rand), then
4K random writes and reads of a file, each printing a per-second table
and a summary. Only the files the plan created are removed at the end.
Its --target may be rados://POOL (the object steps on a pool),
s3://BUCKET[/PREFIX] (on S3; the bucket is created if missing and removed
only if the plan created it), rbd://POOL/IMAGE (4M sequential and 4K random
writes and reads on the image: an existing image is written over unless
it is in use or holds a filesystem; rbd://POOL/IMAGE?create=true creates
one of 256 MiB and removes it at the end) or cephfs://[FS]/PATH (the file
steps in a CephFS directory).

A plan from a file or a built-in one shows a line per finished step and a
live progress line on a terminal's stderr (not with --quiet); each step's
full text is in its folder's output.txt.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usagef("invalid --format %q (want text or json)", format)
			}
			if duration <= 0 {
				return usagef("--duration must be positive")
			}
			vars, err := parseSets(sets)
			if err != nil {
				return err
			}
			quick := len(args) == 0 || args[0] == "quick"
			ownFlags := cmd.Flags().Changed("target") || cmd.Flags().Changed("duration")
			var r *planRun
			switch {
			case resume != "" && (len(args) > 0 || out != "" || len(sets) > 0 || ownFlags):
				return usagef("--resume takes the plan, its variables and its folder from the folder: give no plan, --out, --set, --target or --duration")
			case resume != "":
				r, err = resumeRun(env, resume, quiet)
			case !quick && ownFlags:
				return usagef("--target and --duration are the quick plan's; set a plan's variables with --set NAME=VALUE")
			case quick && len(sets) > 0:
				return usagef("the quick plan has no variables; use --target and --duration")
			case quick:
				r, err = quickRun(env, target, duration, quiet)
			default:
				r, err = fileRun(env, args[0], vars, quiet)
			}
			if err != nil {
				return err
			}
			r.format = format
			if r.dir == "" {
				r.dir = out
			}
			if r.dir == "" {
				r.dir = stamped(results, r.name)
			}
			if dryRun {
				return r.dryRun()
			}
			return r.run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&target, "target", "cephbench-data", "the quick plan's target: a directory, or rados://POOL, rbd://POOL/IMAGE, cephfs://[FS]/PATH, s3://BUCKET[/PREFIX]")
	fl.Var(&duration, "duration", "the quick plan's measured time per step: 10s, 1m, ...")
	fl.StringArrayVar(&sets, "set", nil, "set a plan variable: NAME=VALUE (repeatable)")
	fl.StringVarP(&out, "out", "o", "", "the results folder (default: a new timestamped folder under --results)")
	fl.StringVar(&resume, "resume", "", "finish the plan whose results folder this is")
	fl.BoolVar(&dryRun, "dry-run", false, "print the steps and the time they take; run nothing")
	fl.StringVar(&format, "format", "text", "text, or json (only the JSON results on stdout; the rest goes to stderr)")
	resultsFlag(fl, &results)
	fl.BoolVarP(&quiet, "quiet", "q", false, "no per-second tables and no live progress line")
	return cmd
}

func parseSets(sets []string) (map[string]string, error) {
	vars := map[string]string{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, usagef("invalid --set %q (want NAME=VALUE)", s)
		}
		vars[k] = v
	}
	return vars, nil
}

// fileRun prepares a run of a plan file or built-in plan.
func fileRun(env Env, arg string, vars map[string]string, quiet bool) (*planRun, error) {
	p, src, err := loadPlan(arg)
	if err != nil {
		return nil, usageErr(err)
	}
	if _, ok := vars[plan.PlanDir]; !ok {
		// A resumed run keeps the first run's: its copy of the plan is
		// elsewhere, the files beside the plan are not.
		dir, err := filepath.Abs(filepath.Dir(arg))
		if err != nil {
			return nil, err
		}
		vars[plan.PlanDir] = dir
	}
	expanded, err := p.Expand(vars)
	if err != nil {
		return nil, usageErr(err)
	}
	r := &planRun{env: env, name: p.Name, source: src, vars: vars, items: expanded.Items, cleanup: expanded.Cleanup}
	if env.StderrTerminal && !quiet {
		r.live = env.Stderr
	}
	return r, nil
}

// resumeRun prepares the run that finishes the plan of a results folder.
func resumeRun(env Env, dir string, quiet bool) (*planRun, error) {
	m, err := result.LoadManifest(dir)
	if err != nil {
		return nil, usagef("--resume %s: %v", dir, err)
	}
	var r *planRun
	if m.Plan == "quick" {
		d, derr := spec.ParseDuration(m.Vars["duration"])
		if derr != nil {
			return nil, usagef("--resume %s: the manifest's duration: %v", dir, derr)
		}
		r, err = quickRun(env, m.Vars["target"], d, quiet)
	} else {
		r, err = fileRun(env, filepath.Join(dir, planFile), m.Vars, quiet)
	}
	if err != nil {
		return nil, err
	}
	r.dir, r.resume = dir, true
	return r, nil
}

// quickRun prepares the built-in quick plan on target: its steps depend on
// the target's kind, and on a local directory on its free space.
func quickRun(env Env, target string, dur spec.Duration, quiet bool) (*planRun, error) {
	r := &planRun{env: env, name: "quick", vars: map[string]string{"target": target, "duration": dur.String()}, echo: true}
	if env.StderrTerminal && !env.StdoutTerminal && !quiet {
		r.live = env.Stderr
	}
	t, err := spec.ParseTarget(target)
	if err != nil {
		return nil, usageErr(err)
	}
	steps, err := quickSteps(r, t, dur)
	if err != nil {
		return nil, err
	}
	lastWrite := map[spec.Target]string{}
	for _, st := range steps {
		args := workloadArgs(st.Name, &st.Workload)
		if quiet {
			args = append(args, "--quiet")
		}
		it := plan.Item{ID: st.Name, PlanStep: result.PlanStep{Step: st.Name, Target: target, Repeat: 1, Of: 1}, Args: args}
		// A read verifies what the write before it on the same target
		// left, so a resumed run writes again first.
		if st.Workload.ReadPercent == 0 {
			lastWrite[st.Workload.Target] = it.ID
		} else if w, ok := lastWrite[st.Workload.Target]; ok {
			it.Requires = []string{w}
		}
		r.items = append(r.items, it)
	}
	r.source, err = quickYAML(target, r.items)
	return r, err
}

// quickSteps are the quick plan's steps on t, as t's engine says what t
// is; the plan removes what they keep when it ends.
func quickSteps(r *planRun, t spec.Target, dur spec.Duration) ([]step.Step, error) {
	d, err := engine.Describe(t.Scheme)
	if err != nil {
		d.Kind = engine.KindOther
	}
	var steps []step.Step
	switch d.Kind {
	case engine.KindLocalDirectory:
		return quickLocal(r, t, dur)
	case engine.KindObjects:
		steps = objectSteps(t, dur, quickObjectBudget)
	case engine.KindBlockImage:
		creates := d.Creates != nil && d.Creates(t.Location)
		size := uint64(0) // the whole image
		if creates {
			size = quickFileSize
		}
		steps = blockSteps(t, dur, size, creates)
	case engine.KindSharedFilesystem:
		steps = cephfsSteps(t, dur, quickFileSize)
	default:
		return nil, usagef("the built-in plan runs on %s, not on %s://", quickTargets(), t.Scheme)
	}
	r.finish = func() error { return engine.CleanKept(context.Background(), t) }
	return steps, nil
}

// quickTargets lists what the quick plan runs on: the targets of the
// engines that say what kind of target they serve.
func quickTargets() string {
	var local bool
	var syntaxes []string
	for _, scheme := range engine.Schemes() {
		switch d, _ := engine.Describe(scheme); d.Kind {
		case engine.KindOther:
		case engine.KindLocalDirectory:
			local = true
		default:
			syntaxes = append(syntaxes, d.Syntax)
		}
	}
	if local {
		syntaxes = append([]string{"a local directory"}, syntaxes...)
	}
	if len(syntaxes) < 2 {
		return strings.Join(syntaxes, "")
	}
	return strings.Join(syntaxes[:len(syntaxes)-1], ", ") + " or " + syntaxes[len(syntaxes)-1]
}

// quickLocal is the quick plan on a local directory: object steps on
// dirobj://DIR and file steps in DIR, sized to the free space. The
// directory is created when the run starts (prepare), and removed at the
// end if the plan created it and it is empty; the data file is removed if
// the plan created it.
func quickLocal(r *planRun, t spec.Target, dur spec.Duration) ([]step.Step, error) {
	dir := t.Location
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, usagef("--target %s is not a directory", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, usageErr(err)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if _, err := os.Stat(parent); err != nil {
		return nil, usagef("--target %s: parent directory does not exist", dir)
	}
	_, statErr := os.Stat(dir)
	createdDir := errors.Is(statErr, os.ErrNotExist)
	probe := dir
	if createdDir {
		probe = parent
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(probe, &fs); err != nil {
		return nil, usageErr(fmt.Errorf("%s: %w", probe, err))
	}
	free := fs.Bavail * uint64(fs.Bsize)
	if free < minFreeBytes {
		return nil, usagef("%s has only %d MiB free; the plan needs at least %d MiB", probe, free>>20, minFreeBytes>>20)
	}
	dataFile := filepath.Join(dir, perWorkerFile)
	_, fileErr := os.Stat(dataFile)
	fileWasThere := fileErr == nil

	objects := spec.Target{Scheme: "dirobj", Location: dir}
	r.prepare = func() error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
		return nil
	}
	r.finish = func() error {
		err := engine.CleanKept(context.Background(), objects)
		if !fileWasThere {
			os.Remove(dataFile)
		}
		if createdDir {
			os.Remove(dir) // only if empty: never remove what others put there
		}
		return err
	}
	return append(objectSteps(objects, dur, min(uint64(quickObjectBudget), free/4)),
		fileSteps(t, dur, min(uint64(quickFileSize), free/8)&^(1<<20-1))...), nil
}

// workloadArgs is the bench command line that runs w.
func workloadArgs(name string, w *spec.Workload) []string {
	target := w.Target.Short()
	rw := map[spec.Pattern][3]string{spec.Sequential: {"write", "read", "rw"}, spec.Random: {"randwrite", "randread", "randrw"}}[w.Pattern]
	args := []string{"bench", "--target", target, "--name", name}
	switch w.ReadPercent {
	case 0:
		args = append(args, "--rw", rw[0])
	case 100:
		args = append(args, "--rw", rw[1])
	default:
		args = append(args, "--rw", rw[2], "--rwmixread", strconv.Itoa(w.ReadPercent))
	}
	args = append(args, "--bs", w.BlockSize.String(), "--workers", strconv.Itoa(w.Workers), "--iodepth", strconv.Itoa(w.QueueDepth))
	if w.Objects > 0 {
		args = append(args, "--objects", strconv.FormatInt(w.Objects, 10))
	}
	if w.FileSize > 0 {
		args = append(args, "--size", w.FileSize.String())
	}
	if w.Duration > 0 {
		args = append(args, "--duration", w.Duration.String())
	}
	for _, f := range []struct {
		on   bool
		flag string
	}{{w.Cycle, "--cycle"}, {w.Direct, "--direct"}, {w.Verify, "--verify"}, {w.Keep, "--keep"}} {
		if f.on {
			args = append(args, f.flag)
		}
	}
	return args
}

// quickYAML writes the quick plan's steps as a plan file: what "cephbench
// plans quick" prints and what a results folder keeps.
func quickYAML(target string, items []plan.Item) ([]byte, error) {
	p := plan.Plan{
		Name: "quick",
		Description: "The built-in quick plan on " + target + ": 4M object writes, sequential and random reads of them, " +
			"then 4K random writes and reads of a file. (Run as a built-in, it also removes the directory if it created it.)",
	}
	for _, it := range items {
		p.Steps = append(p.Steps, plan.Step{Name: it.ID, Run: shellJoin(it.Args), Requires: it.Requires})
	}
	if !strings.Contains(target, "://") {
		p.Cleanup = []string{shellJoin([]string{"cleanup", "dirobj://" + target}), shellJoin([]string{"cleanup", target})}
	} else {
		p.Cleanup = []string{shellJoin([]string{"cleanup", target})}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&p); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// shellJoin joins args into a command line that plan.SplitArgs splits
// back into them.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		quoted[i] = a
	}
	return strings.Join(quoted, " ")
}
