//go:build ceph

package cli

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/cmdline"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// cephFlags are the rados tool's connection options.
type cephFlags struct {
	pool, conf, id, name, keyring, cluster string
	// env takes the files named from the command's working directory.
	env Env
}

func (c *cephFlags) register(cmd *cobra.Command) {
	fl := cmd.PersistentFlags()
	fl.StringVarP(&c.pool, "pool", "p", "", "the pool")
	fl.StringVarP(&c.conf, "conf", "c", "", "ceph.conf to read (default: CEPH_CONF, then /etc/ceph/ceph.conf)")
	fl.StringVar(&c.id, "id", "", "client id, without \"client.\" (e.g. admin)")
	fl.StringVarP(&c.name, "name", "n", "", "client name (e.g. client.admin)")
	fl.StringVarP(&c.keyring, "keyring", "k", "", "keyring file")
	fl.StringVar(&c.cluster, "cluster", "", "cluster name")
}

// query holds the connection options of the flags, for a target's query;
// the files named are taken from the command's working directory, as the
// target is used wherever the job runs.
func (c *cephFlags) query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"conf": c.env.path(c.conf), "id": c.id, "name": c.name, "keyring": c.env.path(c.keyring), "cluster": c.cluster} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// target is the rados:// target of the flags, with more target options
// (run-name, hints) from extra.
func (c *cephFlags) target(extra map[string]string) (rados.Target, spec.Target, error) {
	if c.pool == "" {
		return rados.Target{}, spec.Target{}, usagef("no pool given: use -p POOL")
	}
	q := c.query()
	for k, v := range extra {
		if v != "" {
			q.Set(k, v)
		}
	}
	loc := c.pool
	if len(q) > 0 {
		loc += "?" + q.Encode()
	}
	t, err := rados.ParseTarget(loc)
	if err != nil {
		return rados.Target{}, spec.Target{}, err
	}
	return t, spec.Target{Scheme: "rados", Location: loc}, nil
}

func newRadosCmd(env Env) *cobra.Command {
	cf := cephFlags{env: env}
	cmd := &cobra.Command{
		Use:   "rados",
		Short: "RADOS benchmarks that take rados' command lines: bench, cleanup",
		Long: `The rados tool's benchmarks, natively: the same command lines, object names
and metadata object, so Ceph's own "rados bench seq|rand" and "rados cleanup"
read and remove what cephbench writes, and the other way round. Connection
options as for the rados tool, plus CEPH_CONF and CEPH_ARGS. Long flags
may have one dash (-no-cleanup), which Ceph's rados silently ignores.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{cmdline.OneDashAnnotation: ""},
	}
	cf.register(cmd)
	cmd.AddCommand(newRadosBenchCmd(env, &cf), newRadosCleanupCmd(env, &cf), newRadosLoadGenCmd(env, &cf))
	return cmd
}

func newRadosBenchCmd(env Env, cf *cephFlags) *cobra.Command {
	var (
		opSize     = spec.Size(4 << 20)
		objectSize spec.Size
		threads    int
		noCleanup  bool
		noVerify   bool
		runName    string
		maxObjects int64
		format     string
		results    string
		opTimeout  spec.Duration
		buffers    bufferFlags
		noHints    bool
	)
	cmd := &cobra.Command{
		Use:   "bench SECONDS write|seq|rand [-b SIZE] [-O SIZE] [-t N] [--no-cleanup]",
		Short: "rados bench: write, then read sequentially or at random, with latency percentiles",
		Example: `  cephbench rados bench -p rbd 60 write -t 16 --no-cleanup
  cephbench rados bench -p rbd 60 seq -t 16
  cephbench rados bench -p rbd 60 rand -t 16
  cephbench rados -p rbd cleanup`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			secs, err := spec.ParseDuration(args[0])
			if err != nil {
				return usageErr(err)
			}
			opts := step.RadosBench{Mode: args[1], Format: format}
			if err := opts.Validate(); err != nil {
				return usageErr(err)
			}
			if threads < 1 {
				return usagef("invalid -t %d: at least 1", threads)
			}
			extra := map[string]string{"run-name": runName}
			if noHints {
				extra["hints"] = "false"
			}
			_, target, err := cf.target(extra)
			if err != nil {
				return err
			}
			w := spec.Workload{
				Target: target, Pattern: spec.Sequential, BlockSize: opSize, ObjectSize: objectSize,
				Objects: maxObjects, Workers: 1, QueueDepth: threads, Duration: secs, Keep: noCleanup,
				Verify: !noVerify, OpTimeout: opTimeout,
			}
			buffers.apply(&w)
			if opts.Mode == "write" {
				if err := w.Validate(); err != nil {
					return usageErr(err)
				}
			} else {
				// The run takes the sizes of the last write from its
				// metadata object.
				w.ReadPercent, w.Keep, w.Objects, w.BlockSize, w.ObjectSize = 100, true, 0, 0, 0
				if opts.Mode == "rand" {
					w.Pattern = spec.Random
				}
			}
			name := "rados-bench-" + opts.Mode
			st := step.Step{Name: name, Workload: w, Save: stamped(env.path(results), name) + ".json",
				Front: step.Front{Command: "rados bench", RadosBench: &opts}}
			return env.run(cmd.Context(), frontend.Job{Command: "rados bench", Steps: []step.Step{st}})
		},
	}
	fl := cmd.Flags()
	fl.VarP(&opSize, "block-size", "b", "size of each write or read")
	fl.VarP(&objectSize, "object-size", "O", "object size (default: the block size)")
	fl.IntVarP(&threads, "concurrent-ios", "t", 16, "ops in flight")
	fl.BoolVar(&noCleanup, "no-cleanup", false, "keep the written objects (and the metadata object) for seq, rand and cleanup")
	fl.BoolVar(&noVerify, "no-verify", false, "do not check the data read")
	fl.BoolVar(&noHints, "no-hints", false, "do not send rados bench's allocation hint (object size, write size, sequential, immutable) with writes")
	fl.Var(&opTimeout, "op-timeout", "fail (and count) an op that takes longer than this")
	fl.Lookup("op-timeout").DefValue = "60s" // zero leaves it to Connect's default
	buffers.register(fl)
	fl.StringVar(&runName, "run-name", "", "name of the metadata object (default benchmark_last_metadata)")
	fl.Int64Var(&maxObjects, "max-objects", 0, "stop a write after this many objects")
	fl.StringVarP(&format, "format", "f", "plain", "plain, json or json-pretty (rados bench's keys)")
	resultsFlag(fl, &results)
	env.hosts.register(fl)
	env.metrics.register(fl)
	env.watchFlag(fl)
	return cmd
}

func newRadosCleanupCmd(env Env, cf *cephFlags) *cobra.Command {
	var runName, prefix string
	var rf recordFlags
	cmd := &cobra.Command{
		Use:   "cleanup [--run-name NAME] [--prefix benchmark_data...] [--force | --older-than AGE]",
		Short: "remove the objects a bench wrote with --no-cleanup, or a killed run left, and nothing else",
		Long: `Remove the objects of the write that the metadata object (benchmark_last_metadata,
or --run-name's) records, then the metadata object; or, with --prefix, every
object whose name starts with it. Also remove what the write records of
killed cephbench runs in the pool name, as "cephbench cleanup rados://POOL"
does, and leave what a run still writing names (see --force, --older-than).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if prefix != "" && !strings.HasPrefix(prefix, "benchmark_data") {
				return usagef("refusing prefix %q: only benchmark_data* objects are a benchmark's", prefix)
			}
			j, err := rf.judge(cmd)
			if err != nil {
				return err
			}
			rt, _, err := cf.target(map[string]string{"run-name": runName})
			if err != nil {
				return err
			}
			n, err := rados.CleanupTarget(cmd.Context(), rt, prefix, j)
			printSkipped(env.Stdout, j)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "Removed %s objects\n", strconv.FormatInt(n, 10))
			return nil
		},
	}
	cmd.Flags().StringVar(&runName, "run-name", "", "metadata object of the write to remove (default benchmark_last_metadata)")
	cmd.Flags().StringVar(&prefix, "prefix", "", "remove every object whose name starts with this (must start with benchmark_data)")
	rf.register(cmd)
	return cmd
}
