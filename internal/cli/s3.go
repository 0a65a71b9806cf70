package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	cbs3 "github.com/cephbench/cephbench/engine/s3"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/spec"
)

// s3Flags are the connection options of the s3 commands.
type s3Flags struct {
	endpoint, region, profile, addressing string
	accessKey, secretKey                  string
	insecure                              bool
}

func (f *s3Flags) register(cmd *cobra.Command) {
	fl := cmd.PersistentFlags()
	fl.StringVar(&f.endpoint, "endpoint", "", "the S3 service: http://HOST:PORT or https://HOST (default AWS_ENDPOINT_URL)")
	fl.StringVar(&f.accessKey, "access-key", "", "access key (default AWS_ACCESS_KEY_ID, then the profile's); the environment keeps it out of ps")
	fl.StringVar(&f.secretKey, "secret-key", "", "secret key (default AWS_SECRET_ACCESS_KEY, then the profile's)")
	fl.StringVar(&f.profile, "profile", "", "profile in ~/.aws/credentials (default AWS_PROFILE, then default)")
	fl.StringVar(&f.region, "region", "", "region (default AWS_REGION, then the bucket's)")
	fl.BoolVar(&f.insecure, "insecure", false, "do not verify the https endpoint's certificate")
	fl.StringVar(&f.addressing, "addressing", "path", "path (http://HOST/BUCKET) or virtual (http://BUCKET.HOST)")
}

// target returns the target that arg (s3://BUCKET[/PREFIX][?options])
// and the flags name, with the endpoint filled in (from getenv's
// AWS_ENDPOINT_URL if not given) so that results say
// where they were measured, and the credentials of the flags. Neither
// the target nor anything printed holds credentials.
func (f *s3Flags) target(arg string, getenv func(string) string) (spec.Target, cbs3.Credentials, error) {
	st, err := spec.ParseTarget(arg)
	if err != nil || st.Scheme != cbs3.Scheme {
		return spec.Target{}, cbs3.Credentials{}, usagef("invalid target: want s3://BUCKET[/PREFIX]")
	}
	t, err := cbs3.ParseTarget(st.Location)
	if err != nil {
		return spec.Target{}, cbs3.Credentials{}, err
	}
	switch f.addressing {
	case "path":
	case "virtual":
		t.VirtualHosted = true
	default:
		return spec.Target{}, cbs3.Credentials{}, usagef("invalid --addressing %q (want path or virtual)", f.addressing)
	}
	t.Insecure = t.Insecure || f.insecure
	if f.endpoint != "" {
		t.Endpoint = f.endpoint
	} else if t.Endpoint == "" {
		t.Endpoint = getenv("AWS_ENDPOINT_URL")
	}
	if t.Endpoint == "" {
		return spec.Target{}, cbs3.Credentials{}, usagef("no S3 endpoint: give --endpoint URL or set AWS_ENDPOINT_URL")
	}
	if f.region != "" {
		t.Region = f.region
	}
	if f.profile != "" {
		t.Profile = f.profile
	}
	creds := cbs3.Credentials{AccessKey: f.accessKey, SecretKey: f.secretKey}
	return spec.Target{Scheme: cbs3.Scheme, Location: t.Location()}, creds, nil
}

func newS3Cmd(env Env) *cobra.Command {
	var f s3Flags
	cmd := &cobra.Command{
		Use:   "s3",
		Short: "S3 (radosgw) benchmarks: bench, cleanup",
		Long: `Benchmarks of an S3 service, such as Ceph's radosgw, through its HTTP API:
puts, gets (time to first byte and to last byte), deletes, lists and stats,
alone or mixed. The endpoint comes from --endpoint or AWS_ENDPOINT_URL; the
keys from --access-key and --secret-key, AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY, or a profile of ~/.aws/credentials (AWS_PROFILE),
in that order. Keys never appear in the output or the results.`,
		Args: cobra.NoArgs,
	}
	f.register(cmd)
	cmd.AddCommand(newS3BenchCmd(env, &f), newS3CleanupCmd(env, &f))
	return cmd
}

type s3BenchFlags struct {
	req     frontend.S3BenchRequest
	results string
}

func newS3BenchCmd(env Env, cf *s3Flags) *cobra.Command {
	f := s3BenchFlags{req: frontend.S3BenchRequest{ObjectSize: 4 << 20, Duration: spec.Duration(60 * time.Second)}}
	cmd := &cobra.Command{
		Use:   "bench [--put] [--get] [--list] [--delete] [--mixed SHARES] [--obj-size 4M] [--objects N] [--concurrent 16] [--duration 60s] s3://BUCKET[/PREFIX]",
		Short: "Put, get, list, delete or a mix of them, with latency percentiles and get time to first byte",
		Long: `Measure S3 ops on BUCKET (created if missing, and then removed at the end if
empty) under PREFIX. Each of --put, --get, --list and --delete is a phase of
--duration, run in that order: puts write new objects of --obj-size; gets
read objects at random and check their data; lists list up to 1000 of the
run's keys per request; deletes remove the run's objects until none are
left. --mixed runs one phase of ops drawn at the given percentages (of get,
put, delete, list and stat), over a changing set of objects: puts add
objects, deletes remove them, and when none is left a put is made instead.

A phase that reads or deletes works on the objects of the phases before it
or, without a --put phase, on --objects objects put first (not measured).
--objects 0 with --get or --list reads the objects an earlier --put --keep
left at the target instead. Each phase prints a per-second table and a
summary (get-ttfb is each get's time to the first byte of its response, get
its time to the last byte) and saves a JSON result. At the end the run
removes the objects it wrote, unless --keep (then "cephbench s3 cleanup"
removes them), and never anything else.`,
		Example: `  cephbench s3 bench --put --get --obj-size 4M --duration 60s s3://bench
  cephbench s3 bench --mixed get=45,put=15,delete=10,list=5,stat=25 --objects 1000 s3://bench/mixed
  cephbench s3 bench --put --keep --duration 30s s3://bench/data && cephbench s3 bench --get --objects 0 s3://bench/data`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.req.Check(); err != nil {
				return err
			}
			target, creds, err := cf.target(args[0], env.getenv)
			if err != nil {
				return err
			}
			r := f.req
			r.Target, r.Credentials, r.RunDir = target, creds, stamped(env.path(f.results), "s3-bench")
			r.ObjectsGiven, r.SizeGiven = cmd.Flags().Changed("objects"), cmd.Flags().Changed("obj-size")
			j, err := frontend.S3BenchJob(r)
			if err != nil {
				return err
			}
			return env.run(cmd.Context(), j)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.req.Put, "put", false, "a phase of puts of new objects")
	fl.BoolVar(&f.req.Get, "get", false, "a phase of gets of objects at random, verified")
	fl.BoolVar(&f.req.List, "list", false, "a phase of list requests (up to 1000 keys each)")
	fl.BoolVar(&f.req.Delete, "delete", false, "a phase of deletes, until every object is deleted")
	fl.StringVar(&f.req.Mixed, "mixed", "", "one phase of ops at these percentages, e.g. get=45,put=15,delete=10,list=5,stat=25")
	fl.Var(&f.req.ObjectSize, "obj-size", "object size")
	fl.Int64Var(&f.req.Objects, "objects", 100, "objects put first, unmeasured, for gets, lists, deletes or a mix without --put; given with --put, the most it puts; 0: read what a --put --keep left")
	fl.IntVar(&f.req.Concurrent, "concurrent", 16, "ops in flight")
	fl.Var(&f.req.Duration, "duration", "how long each phase runs")
	fl.Var(&f.req.OpTimeout, "op-timeout", "fail (and count) a request that takes longer than this")
	fl.Lookup("op-timeout").DefValue = "60s" // zero leaves it to the engine's default
	fl.BoolVar(&f.req.Keep, "keep", false, "leave the objects written (and a record of them) for --get --objects 0 and s3 cleanup")
	fl.BoolVarP(&f.req.Quiet, "quiet", "q", false, "no per-second tables")
	resultsFlag(fl, &f.results)
	env.watchFlag(fl)
	env.hosts.register(fl)
	env.metrics.register(fl)
	return cmd
}

func newS3CleanupCmd(env Env, cf *s3Flags) *cobra.Command {
	var rf recordFlags
	cmd := &cobra.Command{
		Use:   "cleanup s3://BUCKET[/PREFIX] [--force | --older-than AGE]",
		Short: "remove the objects an s3 bench --keep left, or a killed run left, and the bucket if it made it and it is empty",
		Long: `Remove the objects of the kept writes (their benchmark_last_metadata objects) and
of killed cephbench runs (their write records) under BUCKET[/PREFIX], as
"cephbench cleanup s3://..." does, and leave what a run still writing names
(see --force, --older-than).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			j, err := rf.judge(cmd)
			if err != nil {
				return err
			}
			target, creds, err := cf.target(args[0], env.getenv)
			if err != nil {
				return err
			}
			n, err := cbs3.Cleanup(cmd.Context(), target.Location, creds, j)
			printSkipped(env.Stdout, j)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "Removed %d objects\n", n)
			return nil
		},
	}
	rf.register(cmd)
	return cmd
}
