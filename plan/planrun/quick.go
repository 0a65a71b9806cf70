package planrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/file"
	"github.com/cephbench/cephbench/internal/shellword"
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

// Quick prepares the built-in quick plan on target, each step with
// --quiet if quiet, printing each step's text as it runs: its steps depend on
// the target's kind, and on a local directory on its free space.
func Quick(target string, dur spec.Duration, quiet bool) (*Run, error) {
	r := &Run{Name: "quick", vars: map[string]string{"target": target, "duration": dur.String()}, echo: true}
	t, err := spec.ParseTarget(target)
	if err != nil {
		return nil, &engine.UsageError{Err: err}
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
func quickSteps(r *Run, t spec.Target, dur spec.Duration) ([]step.Step, error) {
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
		return nil, engine.Usagef("the built-in plan runs on %s, not on %s://", quickTargets(), t.Scheme)
	}
	r.finish = func() error { return engine.CleanKept(context.Background(), t, nil) }
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
func quickLocal(r *Run, t spec.Target, dur spec.Duration) ([]step.Step, error) {
	dir := t.Location
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, engine.Usagef("--target %s is not a directory", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, &engine.UsageError{Err: err}
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if _, err := os.Stat(parent); err != nil {
		return nil, engine.Usagef("--target %s: parent directory does not exist", dir)
	}
	_, statErr := os.Stat(dir)
	createdDir := errors.Is(statErr, os.ErrNotExist)
	probe := dir
	if createdDir {
		probe = parent
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(probe, &fs); err != nil {
		return nil, engine.Usagef("%s: %v", probe, err)
	}
	free := fs.Bavail * uint64(fs.Bsize)
	if free < minFreeBytes {
		return nil, engine.Usagef("%s has only %d MiB free; the plan needs at least %d MiB", probe, free>>20, minFreeBytes>>20)
	}
	dataFile := filepath.Join(dir, file.WorkerFile(0))
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
		err := engine.CleanKept(context.Background(), objects, nil)
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
		p.Steps = append(p.Steps, plan.Step{Name: it.ID, Run: shellword.Join(it.Args), Requires: it.Requires})
	}
	if !strings.Contains(target, "://") {
		p.Cleanup = []string{shellword.Join([]string{"cleanup", "dirobj://" + target}), shellword.Join([]string{"cleanup", target})}
	} else {
		p.Cleanup = []string{shellword.Join([]string{"cleanup", target})}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&p); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// Source is the plan as YAML, as the results folder keeps it.
func (r *Run) Source() []byte { return r.source }
