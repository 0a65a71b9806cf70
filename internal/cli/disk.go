package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/spec"
)

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
			j, err := frontend.DiskJob(frontend.DiskRequest{
				Path: env.path(args[0]), Size: size, BlockSize: bs, Duration: duration,
				RunDir: stamped(env.path(results), "disk"), Force: force, Keep: keep, Quiet: quiet,
			})
			if err != nil {
				return err
			}
			return env.run(cmd.Context(), j)
		},
	}
	fl := cmd.Flags()
	fl.Var(&size, "size", "region to write and read: 1G, 100M, ... (default 1G, or the device or existing file if smaller)")
	fl.Var(&bs, "bs", "block size of the sequential steps")
	fl.Var(&duration, "duration", "longest time of each step: 10s, 1m, ...")
	resultsFlag(fl, &results)
	env.metrics.register(fl)
	fl.BoolVar(&force, "force", false, "write to a device in use or formatted, or to a file cephbench did not write")
	fl.BoolVar(&keep, "keep", false, "leave the file created in place")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no per-second tables")
	return cmd
}
