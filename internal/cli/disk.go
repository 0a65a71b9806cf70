package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine/file"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/io/devsafe"
	"github.com/cephbench/cephbench/internal/io/kaio"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

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
			return t, usagef("cannot create %s: directory %s does not exist", path, dir)
		}
	case err != nil:
		return t, usageErr(err)
	case fi.Mode().IsRegular():
		t.existed, t.size = true, fi.Size()
	case fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0:
		t.device = true
		if t.size, err = deviceSize(path); err != nil {
			return t, usageErr(fmt.Errorf("%s: %w", path, err))
		}
	default:
		return t, usagef("%s is not a regular file, a directory or a block device", path)
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

func newDiskCmd(env Env) *cobra.Command {
	var (
		size     spec.Size
		bs       = spec.Size(4 << 20)
		duration = spec.Duration(10 * time.Second)
		results  string
		force    bool
		keep     bool
		quiet    bool
	)
	cmd := &cobra.Command{
		Use:   "disk PATH [--size 1G] [--bs 4M] [--duration 10s]",
		Short: "Measure a local disk's ceiling: direct sequential and 4K random I/O on a file or block device",
		Long: `Measure the disk under PATH, as "dd oflag=direct" and "dd iflag=direct" do
and more, so that its ceiling can sit next to a cluster's figures: a
sequential write of the region in --bs blocks, a sequential read of it, then
4K random reads and 4K random writes at queue depth 1 and at 32 (io_uring,
or libaio where the kernel refuses io_uring). All of it uses O_DIRECT. Each
step prints its summary and is saved as JSON under --results; a table of
the steps, in MB/s (10^6 bytes, as dd counts) and MiB/s, ends the run.

PATH is a file, a directory (the file cephbench.0.dat in it) or a block
device. The region is --size: by default 1G, or the whole device or
existing file when it is smaller. A sequential step ends after one pass
over the region, as dd's count= does, or at --duration, whichever comes
first; the random steps run for --duration. On a device, the steps after
the write address only what the write covered, so that they read its data.

A file that does not exist is created, laid out with data, and removed at
the end unless --keep. An existing file that cephbench did not write is
only read, unless --force. A device that is mounted, in use, partitioned or
carries a filesystem or other signature is refused unless --force.`,
		Example: `  cephbench disk /var/lib/ceph/osd/ceph-12/deleteme     # a new 1G file, removed afterwards
  cephbench disk /dev/sdb --size 10G --duration 30s     # refused if in use or formatted
  cephbench disk /mnt/data --bs 1M -q`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if duration <= 0 {
				return usagef("--duration must be positive")
			}
			t, err := resolveDisk(env.path(args[0]))
			if err != nil {
				return err
			}
			region := int64(size)
			switch {
			case region == 0 && (t.device || t.existed && t.size > 0):
				region = min(diskRegion, t.size)
			case region == 0:
				region = diskRegion
			case t.device && region > t.size:
				return usagef("--size %s is larger than %s, which holds %d bytes", size, t.path, t.size)
			}
			plan := diskPlan{
				base: spec.Workload{
					Target:  spec.Target{Scheme: "file", Location: t.path},
					Workers: 1, QueueDepth: 1, Duration: duration,
					// Every step keeps the file for the next; the command
					// removes it at the end.
					Direct: true, Keep: true, Force: force,
				},
				bs: bs, ioengine: asyncEngine(),
			}
			steps := plan.steps(region)
			for _, st := range steps {
				if err := st.Workload.Validate(); err != nil {
					return usageErr(err)
				}
			}
			if t.device && !force {
				if err := devsafe.CheckDevice(t.path); err != nil {
					return usageErr(err)
				}
			}
			return env.run(cmd.Context(), diskJob(t, steps, env.path(results), keep, quiet))
		},
	}
	fl := cmd.Flags()
	fl.Var(&size, "size", "region to write and read: 1G, 100M, ... (default 1G, or the device or existing file if smaller)")
	fl.Var(&bs, "bs", "block size of the sequential steps")
	fl.Var(&duration, "duration", "longest time of each step: 10s, 1m, ...")
	resultsFlag(fl, &results)
	fl.BoolVar(&force, "force", false, "write to a device in use or formatted, or to a file cephbench did not write")
	fl.BoolVar(&keep, "keep", false, "leave the file created in place")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no per-second tables")
	return cmd
}

// diskJob is the disk job of steps on t, saving into a folder of its
// own under results.
func diskJob(t diskTarget, steps []step.Step, results string, keep, quiet bool) frontend.Job {
	runDir := stamped(results, "disk")
	for i := range steps {
		steps[i].Save = filepath.Join(runDir, fmt.Sprintf("%02d-%s.json", i+1, steps[i].Name))
	}
	return frontend.Job{Command: "disk", Steps: steps, Quiet: quiet, Disk: &frontend.Disk{
		Target: t.String(), Device: t.device, Existing: t.existed, Remove: !keep && !t.device && !t.existed, Results: runDir,
	}}
}
