package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	cbs3 "github.com/cephbench/cephbench/engine/s3"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
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
	return spec.Target{Scheme: "s3", Location: t.Location()}, creds, nil
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

// s3MixKinds are the kinds --mixed takes, in the order its phase lists
// them.
var s3MixKinds = []string{"put", "get", "delete", "list", "stat"}

// parseS3Mix parses --mixed: "get=45,put=15,delete=10,list=5,stat=25",
// percentages of put, get, delete, list and stat that sum to 100. The
// shares come back by kind, put always among them: a mixed phase puts
// when there is nothing to get, stat or delete.
func parseS3Mix(s string) (map[string]int, error) {
	for part := range strings.SplitSeq(s, ",") {
		name, _, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || !slices.Contains(s3MixKinds, name) {
			return nil, usagef("invalid --mixed %q: want KIND=PERCENT,... with kinds get, put, delete, list, stat", s)
		}
	}
	shares, err := spec.OpMix(s).Shares()
	if err != nil {
		return nil, usagef("invalid --mixed %q: %v", s, err)
	}
	m := map[string]int{"put": 0}
	for _, sh := range shares {
		m[sh.Kind] = sh.Percent
	}
	return m, nil
}

// s3Phase is one measured step of s3 bench.
type s3Phase struct {
	name string // put, get, list, delete or mixed
	// share is the percentage of the ops of each kind the phase does; a
	// single-kind phase stops when it runs out of objects.
	share map[string]int
}

// mix is the phase's op mix, in the order of s3MixKinds.
func (p s3Phase) mix() spec.OpMix {
	var parts []string
	for _, k := range s3MixKinds {
		if n, ok := p.share[k]; ok {
			parts = append(parts, k+"="+strconv.Itoa(n))
		}
	}
	return spec.OpMix(strings.Join(parts, ","))
}

type s3BenchFlags struct {
	put, get, del, list bool
	mixed               string
	objSize             spec.Size
	objects             int64
	concurrent          int
	duration            spec.Duration
	keep, quiet         bool
	results             string
}

func newS3BenchCmd(env Env, cf *s3Flags) *cobra.Command {
	f := s3BenchFlags{objSize: 4 << 20, duration: spec.Duration(60 * time.Second)}
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
			phases, err := f.phases()
			if err != nil {
				return err
			}
			target, creds, err := cf.target(args[0], env.getenv)
			if err != nil {
				return err
			}
			limit := int64(0)
			if cmd.Flags().Changed("objects") {
				limit = f.objects
			}
			j := f.job(phases, target, limit, env.path(f.results))
			j.S3.SizeGiven = j.S3.Kept && cmd.Flags().Changed("obj-size")
			if creds != (cbs3.Credentials{}) {
				j.S3.Credentials = &creds
			}
			return env.run(cmd.Context(), j)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.put, "put", false, "a phase of puts of new objects")
	fl.BoolVar(&f.get, "get", false, "a phase of gets of objects at random, verified")
	fl.BoolVar(&f.list, "list", false, "a phase of list requests (up to 1000 keys each)")
	fl.BoolVar(&f.del, "delete", false, "a phase of deletes, until every object is deleted")
	fl.StringVar(&f.mixed, "mixed", "", "one phase of ops at these percentages, e.g. get=45,put=15,delete=10,list=5,stat=25")
	fl.Var(&f.objSize, "obj-size", "object size")
	fl.Int64Var(&f.objects, "objects", 100, "objects put first, unmeasured, for gets, lists, deletes or a mix without --put; given with --put, the most it puts; 0: read what a --put --keep left")
	fl.IntVar(&f.concurrent, "concurrent", 16, "ops in flight")
	fl.Var(&f.duration, "duration", "how long each phase runs")
	fl.BoolVar(&f.keep, "keep", false, "leave the objects written (and a record of them) for --get --objects 0 and s3 cleanup")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no per-second tables")
	resultsFlag(fl, &f.results)
	env.hosts.register(fl)
	return cmd
}

// phases checks the flags and returns the phases they ask for, in order.
func (f *s3BenchFlags) phases() ([]s3Phase, error) {
	var phases []s3Phase
	single := func(on bool, name string) {
		if on {
			phases = append(phases, s3Phase{name: name, share: map[string]int{name: 100}})
		}
	}
	single(f.put, "put")
	single(f.get, "get")
	single(f.list, "list")
	single(f.del, "delete")
	if f.mixed != "" {
		if len(phases) > 0 {
			return nil, usagef("--mixed is a phase of its own: give it without --put, --get, --list or --delete")
		}
		mix, err := parseS3Mix(f.mixed)
		if err != nil {
			return nil, err
		}
		phases = append(phases, s3Phase{name: "mixed", share: mix})
	}
	switch {
	case len(phases) == 0:
		return nil, usagef("nothing to do: give --put, --get, --list, --delete or --mixed")
	case f.concurrent < 1 || f.concurrent > 4096:
		return nil, usagef("invalid --concurrent %d (want 1 to 4096)", f.concurrent)
	case f.duration <= 0:
		return nil, usagef("--duration must be positive")
	case f.objSize <= 0 || f.objSize > 1<<30:
		return nil, usagef("invalid --obj-size %s (want more than 0, at most 1G)", f.objSize)
	case f.objects < 0:
		return nil, usagef("invalid --objects %d", f.objects)
	case f.objects == 0 && (f.put || f.del || f.mixed != ""):
		return nil, usagef("--objects 0 reads the objects of an earlier --put --keep: only with --get and --list")
	case f.keep && (f.del || f.mixed != ""):
		return nil, usagef("--keep keeps what a run put: not with --delete or --mixed, which remove objects")
	case f.objects == 0 && f.keep:
		return nil, usagef("--objects 0 writes nothing to keep")
	}
	return phases, nil
}

// job is the s3 bench job of phases on target, saving into a folder of
// its own under results; limit bounds a put phase's objects (0: none).
func (f *s3BenchFlags) job(phases []s3Phase, target spec.Target, limit int64, results string) frontend.Job {
	opts := &frontend.S3Bench{Kept: f.objects == 0, Results: stamped(results, "s3-bench")}
	// --objects 0 reads kept objects; a put phase first makes its own.
	if phases[0].name != "put" {
		opts.Prepare = f.objects
	}
	j := frontend.Job{Command: "s3 bench", Quiet: f.quiet, S3: opts}
	for i, p := range phases {
		w := spec.Workload{
			Name: "s3-" + p.name, Target: target, Pattern: spec.Random, Mix: p.mix(),
			ReadPercent: p.share["get"] + p.share["list"] + p.share["stat"],
			BlockSize:   f.objSize, Workers: f.concurrent, QueueDepth: 1,
			Duration: f.duration, Verify: p.share["get"] > 0, Keep: f.keep,
		}
		if p.name == "put" {
			w.Pattern, w.Objects = spec.Sequential, limit
		}
		j.Steps = append(j.Steps, step.Step{
			Name: w.Name, Workload: w, Save: filepath.Join(opts.Results, fmt.Sprintf("%02d-s3-%s.json", i+1, p.name)),
			Front: step.Front{Command: j.Command, S3: &step.S3{Phase: p.name}},
		})
	}
	return j
}

func newS3CleanupCmd(env Env, cf *s3Flags) *cobra.Command {
	return &cobra.Command{
		Use:   "cleanup s3://BUCKET[/PREFIX]",
		Short: "remove the objects an s3 bench --keep left, and the bucket if it made it and it is empty",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, creds, err := cf.target(args[0], env.getenv)
			if err != nil {
				return err
			}
			n, err := cbs3.Cleanup(cmd.Context(), target.Location, creds)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "Removed %d objects\n", n)
			return nil
		},
	}
}
