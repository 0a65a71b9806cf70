package frontend

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/file"
	"github.com/cephbench/cephbench/internal/io/devsafe"
	"github.com/cephbench/cephbench/internal/io/kaio"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// DiskRequest is what a disk command line asks for.
type DiskRequest struct {
	// Path is the file, directory or block device to measure.
	Path string
	// Size is the region; zero is the default (diskRegion, or the
	// device or existing file when smaller).
	Size      spec.Size
	BlockSize spec.Size // the sequential steps' block size
	Duration  spec.Duration
	// RunDir is the folder of the run's results.
	RunDir             string
	Force, Keep, Quiet bool
}

// DiskJob is the disk job r asks for: its target found and checked
// without changing anything, its steps made. Its errors are
// *engine.UsageError.
func DiskJob(r DiskRequest) (Job, error) {
	if r.Duration <= 0 {
		return Job{}, engine.Usagef("--duration must be positive")
	}
	t, err := resolveDisk(r.Path)
	if err != nil {
		return Job{}, err
	}
	region := int64(r.Size)
	switch {
	case region == 0 && (t.device || t.existed && t.size > 0):
		region = min(diskRegion, t.size)
	case region == 0:
		region = diskRegion
	case t.device && region > t.size:
		return Job{}, engine.Usagef("--size %s is larger than %s, which holds %d bytes", r.Size, t.path, t.size)
	}
	plan := diskPlan{
		base: spec.Workload{
			Target:  spec.Target{Scheme: "file", Location: t.path},
			Workers: 1, QueueDepth: 1, Duration: r.Duration,
			// Every step keeps the file for the next; the job removes it
			// at the end.
			Direct: true, Keep: true, Force: r.Force,
		},
		bs: r.BlockSize, ioengine: asyncEngine(),
	}
	steps := plan.steps(region)
	for i := range steps {
		if err := steps[i].Workload.Validate(); err != nil {
			return Job{}, &engine.UsageError{Err: err}
		}
		steps[i].Save = filepath.Join(r.RunDir, fmt.Sprintf("%02d-%s.json", i+1, steps[i].Name))
	}
	if t.device && !r.Force {
		if err := devsafe.CheckDevice(t.path); err != nil {
			return Job{}, &engine.UsageError{Err: err}
		}
	}
	return Job{Command: "disk", Steps: steps, Quiet: r.Quiet, Disk: &Disk{
		Target: t.String(), Device: t.device, Existing: t.existed, Remove: !r.Keep && !t.device && !t.existed, Results: r.RunDir,
	}}, nil
}

// diskRegion is the default region: large enough that a disk's own write
// cache does not hold it all, small enough to lay out in seconds.
const diskRegion = 1 << 30

// The random steps: 4K blocks at one op in flight (the latency a single
// client sees) and at diskDeepQueue (where most SSDs reach their IOPS
// ceiling).
const (
	diskSmallBlock = 4 << 10
	diskDeepQueue  = 32
)

// diskTarget is what the PATH of "cephbench disk" names.
type diskTarget struct {
	path    string // the file or device the steps address
	device  bool
	existed bool  // a file that was there before the run: never removed
	size    int64 // a device's or existing file's size in bytes
}

func (t diskTarget) String() string {
	switch {
	case t.device:
		return fmt.Sprintf("%s (block device of %s)", t.path, spec.Size(t.size))
	case t.existed:
		return fmt.Sprintf("%s (existing file of %s)", t.path, spec.Size(t.size))
	}
	return t.path + " (new file)"
}

// resolveDisk finds what path names, without changing anything. A
// directory stands for the file the file engine would use in it.
func resolveDisk(path string) (diskTarget, error) {
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		path = filepath.Join(path, file.WorkerFile(0))
		fi, err = os.Stat(path)
	}
	t := diskTarget{path: path}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(path)
		if di, err := os.Stat(dir); err != nil || !di.IsDir() {
			return t, engine.Usagef("cannot create %s: directory %s does not exist", path, dir)
		}
	case err != nil:
		return t, &engine.UsageError{Err: err}
	case fi.Mode().IsRegular():
		t.existed, t.size = true, fi.Size()
	case fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0:
		t.device = true
		if t.size, err = deviceSize(path); err != nil {
			return t, engine.Usagef("%s: %v", path, err)
		}
	default:
		return t, engine.Usagef("%s is not a regular file, a directory or a block device", path)
	}
	return t, nil
}

// deviceSize returns the size in bytes of the block device at path.
func deviceSize(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := unix.IoctlGetUint64(int(f.Fd()), unix.BLKGETSIZE64)
	if err != nil {
		return 0, fmt.Errorf("BLKGETSIZE64: %w", err)
	}
	return int64(n), nil
}

// asyncEngine picks the kernel queue of the random steps: io_uring, or
// libaio where the kernel refuses io_uring (container seccomp profiles
// often do). A kernel that refuses both is reported by the first random
// step, naming the system call.
func asyncEngine() string {
	q, err := kaio.New(kaio.IOURing, diskDeepQueue)
	if err != nil {
		return kaio.LibAIO
	}
	q.Close()
	return kaio.IOURing
}

// diskPlan makes the command's steps.
type diskPlan struct {
	base     spec.Workload // target, bounds and flags every step shares
	bs       spec.Size     // the sequential steps' block size
	ioengine string        // the random steps' kernel queue
}

// steps are the command's steps on region bytes: a sequential write of bs
// blocks bounded at one pass (dd's count=) as well as by the duration, a
// sequential read likewise, then 4K random reads and writes at queue
// depths 1 and diskDeepQueue. Reads come before random writes so that
// they read the blocks of the sequential write.
func (p diskPlan) steps(region int64) []step.Step {
	base := p.base
	base.FileSize = spec.Size(region)
	seq := base
	seq.Pattern, seq.BlockSize = spec.Sequential, p.bs
	seq.TotalBytes = spec.Size(region - region%int64(p.bs))
	mk := func(name string, w spec.Workload, reads int) step.Step {
		w.Name, w.ReadPercent = name, reads
		return step.Step{Name: name, Workload: w, Front: step.Front{Command: "disk"}}
	}
	steps := []step.Step{
		mk("disk-seqwrite-"+p.bs.String(), seq, 0),
		mk("disk-seqread-"+p.bs.String(), seq, 100),
	}
	for _, reads := range []int{100, 0} {
		kind := "randread"
		if reads == 0 {
			kind = "randwrite"
		}
		for _, qd := range []int{1, diskDeepQueue} {
			rnd := base
			rnd.Pattern, rnd.BlockSize, rnd.QueueDepth, rnd.IOEngine = spec.Random, diskSmallBlock, qd, p.ioengine
			steps = append(steps, mk(fmt.Sprintf("disk-%s-%s-qd%d", kind, rnd.BlockSize, qd), rnd, reads))
		}
	}
	return steps
}
