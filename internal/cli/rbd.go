//go:build ceph

package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// rbdDefaultPool is the pool rbd uses when none is named (rbd_default_pool).
const rbdDefaultPool = "rbd"

func newRBDCmd(env Env) *cobra.Command {
	cf := cephFlags{env: env}
	cmd := &cobra.Command{
		Use:   "rbd",
		Short: "RBD benchmarks that take rbd's command lines: bench, bench-write",
		Long: `The rbd tool's benchmarks, natively, on librbd: the same command lines,
start line, per-second table and closing lines, plus latency percentiles and
a JSON result with the cluster's state. An existing image is written to as
rbd bench does, except one in use (mapped, or open in another client) or one
that holds a filesystem or partition signature: those need --force.`,
		Args: cobra.NoArgs,
	}
	cf.register(cmd)
	cmd.AddCommand(newRBDBenchCmd(env, &cf, false), newRBDBenchCmd(env, &cf, true))
	return cmd
}

// rbdBenchFlags are rbd bench's options and cephbench's additions.
type rbdBenchFlags struct {
	image     string
	ioType    string
	ioSize    spec.Size
	threads   int
	total     spec.Size
	pattern   string
	buffers   bufferFlags
	mixRead   int
	duration  spec.Duration
	create    bool
	size      spec.Size
	keep      bool
	force     bool
	direct    bool
	opTimeout spec.Duration
	results   string
}

func newRBDBenchCmd(env Env, cf *cephFlags, old bool) *cobra.Command {
	f := rbdBenchFlags{ioSize: 4096, total: 1 << 30}
	use, short := "bench [-p POOL] [POOL/]IMAGE --io-type read|write|readwrite|rw", "rbd bench: I/O to an image through librbd, with latency percentiles"
	if old {
		use, short = "bench-write [-p POOL] [POOL/]IMAGE", "rbd bench-write, the older spelling of bench --io-type write"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Example: `  cephbench rbd bench -p rbd img --io-type write --io-size 4K --io-threads 16 --io-total 1G --io-pattern rand
  cephbench rbd bench rbd/img --io-type readwrite --rw-mix-read 70
  cephbench rbd bench rbd/new --io-type write --create --size 10G     # removed afterwards unless --keep`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var notes []string
			if old {
				notes = append(notes, "rbd: bench-write is deprecated, use rbd bench --io-type write ...")
				f.ioType = "write"
			}
			if len(args) == 1 {
				if f.image != "" {
					return usagef("the image is given twice: %q and --image %q", args[0], f.image)
				}
				f.image = args[0]
			}
			st, err := f.step(cf, env.path(f.results))
			if err != nil {
				return err
			}
			return env.run(cmd.Context(), frontend.Job{Command: "rbd bench", Steps: []step.Step{st}, Notes: notes})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.image, "image", "", "the image, [POOL/]IMAGE (or as the argument)")
	if !old {
		fl.StringVar(&f.ioType, "io-type", "", "read, write, or readwrite (rw)")
		fl.IntVar(&f.mixRead, "rw-mix-read", 50, "percentage of reads in readwrite")
	}
	fl.Var(&f.ioSize, "io-size", "size of each op")
	fl.IntVar(&f.threads, "io-threads", 16, "ops in flight")
	fl.Var(&f.total, "io-total", "bytes to transfer in all")
	fl.StringVar(&f.pattern, "io-pattern", "seq", "seq or rand")
	fl.Var(&f.duration, "duration", "stop after this long, if before --io-total")
	fl.BoolVar(&f.create, "create", false, "create the image (of --size) if it does not exist; it is removed afterwards unless --keep")
	fl.Var(&f.size, "size", "the image size to create, or the region of the image to address (default: all of it)")
	fl.BoolVar(&f.keep, "keep", false, "keep an image cephbench created")
	fl.BoolVar(&f.direct, "direct", false, "turn librbd's cache off, as fio's direct=1 (by default it is on, in writeback, as rbd bench runs it)")
	fl.BoolVar(&f.force, "force", false, "write even to an image in use or one that holds a filesystem or partition signature")
	fl.Var(&f.opTimeout, "op-timeout", "fail (and count) an op that takes longer than this")
	fl.Lookup("op-timeout").DefValue = "60s" // zero leaves it to Connect's default
	f.buffers.register(fl)
	resultsFlag(fl, &f.results)
	env.hosts.register(fl)
	env.metrics.register(fl)
	env.watchFlag(fl)
	return cmd
}

// workload checks the flags and returns the workload they describe.
func (f *rbdBenchFlags) workload(cf *cephFlags) (spec.Workload, error) {
	if f.image == "" {
		return spec.Workload{}, usagef("no image given: rbd bench [-p POOL] [POOL/]IMAGE")
	}
	pool, image := cf.pool, f.image
	if p, i, ok := strings.Cut(f.image, "/"); ok {
		if cf.pool != "" && cf.pool != p {
			return spec.Workload{}, usagef("the pool is given twice: -p %q and %q", cf.pool, f.image)
		}
		pool, image = p, i
	}
	if pool == "" {
		pool = rbdDefaultPool
	}
	w := spec.Workload{
		BlockSize: f.ioSize, Workers: 1, QueueDepth: f.threads, TotalBytes: f.total, Duration: f.duration,
		FileSize: f.size, Keep: f.keep, Force: f.force, OpTimeout: f.opTimeout, Direct: f.direct,
	}
	f.buffers.apply(&w)
	switch f.ioType {
	case "read":
		w.ReadPercent = 100
	case "write":
	case "readwrite", "rw":
		if f.mixRead < 0 || f.mixRead > 100 {
			return w, usagef("invalid --rw-mix-read %d (want 0 to 100)", f.mixRead)
		}
		w.ReadPercent = f.mixRead
	case "":
		return w, usagef("--io-type is required: read, write or readwrite")
	default:
		return w, usagef("invalid --io-type %q (want read, write or readwrite)", f.ioType)
	}
	switch f.pattern {
	case "seq":
		w.Pattern = spec.Sequential
	case "rand":
		w.Pattern = spec.Random
	default:
		return w, usagef("invalid --io-pattern %q (want seq or rand)", f.pattern)
	}
	if f.threads < 1 {
		return w, usagef("invalid --io-threads %d: at least 1", f.threads)
	}
	if f.create && f.size == 0 {
		return w, usagef("--create needs --size")
	}
	q := cf.query()
	if f.create {
		q.Set("create", "true")
	}
	loc := pool + "/" + image
	if len(q) > 0 {
		loc += "?" + q.Encode()
	}
	w.Target = spec.Target{Scheme: "rbd", Location: loc}
	if err := w.Validate(); err != nil {
		return w, usageErr(err)
	}
	return w, nil
}

// step checks the flags and returns the step they describe, named for
// its io type as rbd bench's start line names it and saving under
// results.
func (f *rbdBenchFlags) step(cf *cephFlags, results string) (step.Step, error) {
	w, err := f.workload(cf)
	if err != nil {
		return step.Step{}, err
	}
	ioType := "write"
	switch {
	case w.ReadPercent == 100:
		ioType = "read"
	case w.ReadPercent > 0 || f.ioType == "readwrite" || f.ioType == "rw":
		ioType = "readwrite"
	}
	name := "rbd-bench-" + ioType
	return step.Step{Name: name, Workload: w, Save: stamped(results, name) + ".json",
		Front: step.Front{Command: "rbd bench", RBDBench: &step.RBDBench{IOType: ioType}}}, nil
}
