package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// workloadFlags are the flags that describe one workload.
type workloadFlags struct {
	target    string
	rw        string
	rwmixread int
	w         spec.Workload
	steady    spec.SteadyState
	buffers   bufferFlags
}

func (f *workloadFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.w = spec.Workload{BlockSize: 4096, Workers: 1, QueueDepth: 1}
	fl.StringVar(&f.target, "target", "", "what to measure: a file, directory or block device path, or SCHEME://LOCATION (dirobj://DIR, null://)")
	fl.StringVar(&f.rw, "rw", "randread", "read, write, randread, randwrite, rw (readwrite) or randrw, as in fio")
	fl.IntVar(&f.rwmixread, "rwmixread", 50, "percentage of reads in rw and randrw")
	fl.Var(spec.BlockSizesFlag{W: &f.w}, "bs", "op size: 4k, 1M; a split 4k/10:64k/90 or a range 4k-16k; READS,WRITES as in fio (4k,64k)")
	fl.Var(&f.w.ObjectSize, "object-size", "object size on object targets (default: the block size)")
	fl.Int64Var(&f.w.Objects, "objects", 0, "objects a write creates at most, and the key space of random object I/O")
	fl.BoolVar(&f.w.Cycle, "cycle", false, "once --objects are written, write them again from the first, so a timed write keeps that footprint")
	fl.Var(&f.w.FileSize, "size", "size of the file or region per file (default: the existing size)")
	fl.Var(&f.w.Offset, "offset", "where each worker's region starts in its file (fio's offset)")
	fl.Var(&f.w.OffsetIncrement, "offset-increment", "move worker N's region on by N times this (fio's offset_increment)")
	fl.IntVar(&f.w.FilesPerWorker, "nrfiles", 0, "files per worker in a directory target (fio's nrfiles)")
	fl.StringVar(&f.w.FileService, "file-service", "", "how a worker moves between its files: roundrobin[:N], random[:N] or sequential")
	fl.StringVar(&f.w.Distribution, "distribution", "", "random offsets' spread: random, zipf:θ, pareto:h, normal:σ, zoned:OPS/SIZE%:..., zoned_abs:OPS/SIZE:...")
	fl.BoolVar(&f.w.RandomMap, "random-map", false, "random offsets visit every block once per pass, as fio does without norandommap")
	fl.IntVar(&f.w.Workers, "workers", 1, "parallel workers (fio's numjobs)")
	fl.IntVar(&f.w.QueueDepth, "iodepth", 1, "ops in flight per worker")
	fl.Var(&f.w.Duration, "duration", "how long to measure: 10s, 2m, 1h (default 10s unless --ops or --total is given)")
	fl.Lookup("duration").DefValue = "" // the usage says what unset means
	fl.Int64Var(&f.w.TotalOps, "ops", 0, "stop after this many ops")
	fl.Var(&f.w.TotalBytes, "total", "stop after this many bytes: 1G, ...")
	fl.Var(&f.w.Ramp, "ramp", "run this long before measuring; excluded from every figure")
	fl.Var(spec.RateFlag{W: &f.w}, "rate", "ops per second in total, or R,W for reads and writes each (as fio's rate_iops), paced open loop (latency counts from each op's scheduled time)")
	fl.Var(spec.MinRateFlag{W: &f.w}, "rate-min", "fail the run when reads or writes fall below R,W ops per second (N: both) over a --rate-cycle, after 2s")
	fl.Var(&f.w.RateCycle, "rate-cycle", "the period --rate-min is averaged over (default 1s)")
	fl.StringVar(&f.w.RateProcess, "rate-process", "", "linear (evenly spaced ops, the default) or poisson (exponential intervals)")
	fl.Var(&f.w.OpTimeout, "op-timeout", "fail an op that takes longer than this")
	fl.Var(&f.steady, "steady-state", "also end once the rate holds steady over --steady-window, by fio's criteria: iops:5%, iops_slope:0.1%, bw:10%, bw_slope:1M")
	fl.Var(&f.steady.Window, "steady-window", "how long --steady-state's rate must hold, whole seconds (default 60s)")
	fl.Var(&f.steady.Ramp, "steady-ramp", "start judging --steady-state this long (and a second) after the start")
	fl.BoolVar(&f.w.Direct, "direct", false, "use O_DIRECT (bypass the page cache)")
	f.buffers.register(fl)
	fl.BoolVar(&f.w.Verify, "verify", false, "check that reads return the data cephbench wrote")
	fl.BoolVar(&f.w.Keep, "keep", false, "leave the files and objects created in place")
	fl.BoolVar(&f.w.Force, "force", false, "write even to a device or file that holds data cephbench did not write")
}

// workload validates the flags and returns the workload they describe.
func (f *workloadFlags) workload(env Env, name string) (spec.Workload, error) {
	w := f.w
	w.Name = name
	f.buffers.apply(&w)
	if f.target == "" {
		return w, usagef("--target is required")
	}
	t, err := env.target(f.target)
	if err != nil {
		return w, err
	}
	w.Target = t
	if w.Pattern, w.ReadPercent, err = spec.ParseRW(f.rw, f.rwmixread); err != nil {
		return w, usageErr(err)
	}
	if w.Duration == 0 && w.TotalOps == 0 && w.TotalBytes == 0 {
		w.Duration = spec.Duration(10 * time.Second)
	}
	if ss := f.steady; ss.Metric != "" {
		if ss.Window == 0 {
			ss.Window = spec.Duration(time.Minute)
		}
		w.SteadyState = &ss
	}
	if err := w.Validate(); err != nil {
		return w, usageErr(err)
	}
	return w, nil
}

func newBenchCmd(env Env) *cobra.Command {
	var (
		wf      workloadFlags
		name    string
		format  string
		out     string
		results string
		quiet   bool
	)
	cmd := &cobra.Command{
		Use:   "bench --target TARGET [flags]",
		Short: "Run one workload on any target and report it",
		Example: `  cephbench bench --target /data/test.dat --size 1G --rw randread --bs 4k --direct --duration 30s
  cephbench bench --target dirobj://./objs --rw write --bs 4M --workers 16 --objects 100
  cephbench bench --target null:// --iodepth 64 --ops 10000000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return usagef("invalid --format %q (want text or json)", format)
			}
			w, err := wf.workload(env, name)
			if err != nil {
				return err
			}
			st := step.Step{Name: name, Workload: w, Save: env.path(out), Front: step.Front{Command: "bench"}}
			if st.Save == "" {
				st.Save = stamped(env.path(results), name) + ".json"
			}
			return env.run(cmd.Context(), frontend.Job{Command: "bench", Steps: []step.Step{st}, Format: format, Quiet: quiet})
		},
	}
	wf.register(cmd)
	cmd.Flags().StringVar(&name, "name", "bench", "the step's name in reports and the result file")
	cmd.Flags().StringVar(&format, "format", "text", "text, or json (only the JSON result on stdout; progress goes to stderr)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the JSON result here (default: under --results)")
	resultsFlag(cmd.Flags(), &results)
	env.hosts.register(cmd.Flags())
	env.metrics.register(cmd.Flags())
	env.watchFlag(cmd.Flags())
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no per-second table")
	return cmd
}
