package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/engine"
	cbs3 "github.com/cephbench/cephbench/engine/s3"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/workload"
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
// and the flags name, with the endpoint filled in so that results say
// where they were measured, and the credentials of the flags. Neither
// the target nor anything printed holds credentials.
func (f *s3Flags) target(arg string) (spec.Target, cbs3.Credentials, error) {
	st, err := spec.ParseTarget(arg)
	if err != nil || st.Scheme != "s3" {
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
		t.Endpoint = os.Getenv("AWS_ENDPOINT_URL")
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

// The op kinds of s3 bench's results, in this order in its collectors.
// get-ttfb is each get's time to the first byte of its response; its ops
// are the gets again, with no bytes.
const (
	kindPut = iota
	kindGet
	kindTTFB
	kindDelete
	kindList
	kindStat
	numS3Kinds
)

var s3Kinds = []string{"put", "get", "get-ttfb", "delete", "list", "stat"}

// s3Mix is the percentage of the ops of each kind.
type s3Mix [numS3Kinds]int

// parseS3Mix parses --mixed: "get=45,put=15,delete=10,list=5,stat=25",
// percentages of put, get, delete, list and stat that sum to 100.
func parseS3Mix(s string) (s3Mix, error) {
	var m s3Mix
	seen := map[string]bool{}
	sum := 0
	for part := range strings.SplitSeq(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		k := slices.Index(s3Kinds, name)
		if !ok || k < 0 || k == kindTTFB {
			return m, usagef("invalid --mixed %q: want KIND=PERCENT,... with kinds get, put, delete, list, stat", s)
		}
		if seen[name] {
			return m, usagef("invalid --mixed %q: %s given twice", s, name)
		}
		seen[name] = true
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 || n > 100 {
			return m, usagef("invalid --mixed %q: %s=%s is not a percentage", s, name, val)
		}
		m[k] = n
		sum += n
	}
	if sum != 100 {
		return m, usagef("invalid --mixed %q: the percentages sum to %d, not 100", s, sum)
	}
	return m, nil
}

// String is the mix as --mixed takes it.
func (m s3Mix) String() string {
	var parts []string
	for k, n := range m {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", s3Kinds[k], n))
		}
	}
	return strings.Join(parts, ",")
}

// s3Phase is one measured step of s3 bench.
type s3Phase struct {
	name string // put, get, list, delete or mixed
	mix  s3Mix
	// mixed phases put when there is no object to get, stat or delete;
	// single-kind phases stop.
	mixed bool
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
			target, creds, err := cf.target(args[0])
			if err != nil {
				return err
			}
			limit := int64(0)
			if cmd.Flags().Changed("objects") {
				limit = f.objects
			}
			if f.objects == 0 {
				// Gets read the kept objects whole.
				m, err := cbs3.LastWrite(cmd.Context(), target.Location, creds)
				if err != nil {
					return err
				}
				if cmd.Flags().Changed("obj-size") && int64(f.objSize) != m.ObjectSize {
					return usagef("the objects kept at %s are %s, not --obj-size %s", args[0], spec.Size(m.ObjectSize), f.objSize)
				}
				f.objSize = spec.Size(m.ObjectSize)
			}
			return s3Bench(cmd.Context(), env, &f, phases, target, creds, limit)
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
	return cmd
}

// phases checks the flags and returns the phases they ask for, in order.
func (f *s3BenchFlags) phases() ([]s3Phase, error) {
	var phases []s3Phase
	single := func(on bool, name string, kind int) {
		if on {
			p := s3Phase{name: name}
			p.mix[kind] = 100
			phases = append(phases, p)
		}
	}
	single(f.put, "put", kindPut)
	single(f.get, "get", kindGet)
	single(f.list, "list", kindList)
	single(f.del, "delete", kindDelete)
	if f.mixed != "" {
		if len(phases) > 0 {
			return nil, usagef("--mixed is a phase of its own: give it without --put, --get, --list or --delete")
		}
		mix, err := parseS3Mix(f.mixed)
		if err != nil {
			return nil, err
		}
		phases = append(phases, s3Phase{name: "mixed", mix: mix, mixed: true})
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

// s3Objects are the objects a run may get, stat and delete. Its methods
// are safe for concurrent use.
type s3Objects struct {
	mu   sync.Mutex
	live []int64
	// busy counts the gets and stats in flight on an object: a delete
	// takes only an object nobody reads, so that no read fails because
	// the run itself removed its object.
	busy map[int64]int
	next int64 // the number of the next new object
}

func newS3Objects() *s3Objects {
	return &s3Objects{busy: map[int64]int{}}
}

// add makes object n available.
func (o *s3Objects) add(n int64) {
	o.mu.Lock()
	o.live = append(o.live, n)
	o.mu.Unlock()
}

// create returns the number of a new object, unless limit objects have
// been numbered (limit 0: no limit).
func (o *s3Objects) create(limit int64) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if limit > 0 && o.next >= limit {
		return 0, false
	}
	o.next++
	return o.next - 1, true
}

// pick returns an object at random for a get or stat, marked busy until
// release.
func (o *s3Objects) pick(r *rand.Rand) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.live) == 0 {
		return 0, false
	}
	n := o.live[r.IntN(len(o.live))]
	o.busy[n]++
	return n, true
}

// release ends a get or stat of object n.
func (o *s3Objects) release(n int64) {
	o.mu.Lock()
	if o.busy[n]--; o.busy[n] == 0 {
		delete(o.busy, n)
	}
	o.mu.Unlock()
}

// take removes an object nobody reads, from a random place on, for a
// delete. At most as many objects as ops in flight are busy, so the scan
// is short.
func (o *s3Objects) take(r *rand.Rand) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.live) == 0 {
		return 0, false
	}
	start := r.IntN(len(o.live))
	for i := range o.live {
		j := (start + i) % len(o.live)
		n := o.live[j]
		if o.busy[n] > 0 {
			continue
		}
		o.live[j] = o.live[len(o.live)-1]
		o.live = o.live[:len(o.live)-1]
		return n, true
	}
	return 0, false
}

// count is how many objects there are to get, stat and delete.
func (o *s3Objects) count() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return int64(len(o.live))
}

// s3Bench opens the target once, puts the objects the phases need, runs
// the phases in turn, then closes the session, which removes what the run
// wrote unless --keep.
func s3Bench(ctx context.Context, env Env, f *s3BenchFlags, phases []s3Phase, target spec.Target, creds cbs3.Credentials, limit int64) error {
	readKept := f.objects == 0
	open := spec.Workload{
		Target: target, Pattern: spec.Random, BlockSize: f.objSize, Workers: f.concurrent, QueueDepth: 1,
		Duration: f.duration, Keep: f.keep,
	}
	if readKept {
		open.ReadPercent = 100
	}
	sess, err := cbs3.OpenWith(ctx, &open, creds)
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	b := &s3Bencher{env: env, f: f, sess: sess, objs: newS3Objects(), objSize: int64(f.objSize), where: target}
	if readKept {
		g := sess.Geometry()
		for n := range g.ObjectCount {
			b.objs.add(n)
		}
	}
	runErr := b.run(ctx, phases, limit)
	if err := sess.Close(context.WithoutCancel(ctx)); err != nil {
		err = fmt.Errorf("cleaning up %s: %w", b.name(), err)
		if runErr != nil {
			fmt.Fprintf(env.Stderr, "cephbench: %s\n", oneLine(err.Error()))
		} else {
			runErr = err
		}
	}
	if len(b.done) > 1 {
		fmt.Fprintln(env.Stdout)
		report.Table(env.Stdout, b.done)
	}
	if len(b.done) > 0 {
		fmt.Fprintf(env.Stdout, "\nresults: %s\n", b.runDir)
	}
	return runErr
}

// s3Bencher runs the phases of one s3 bench on one session.
type s3Bencher struct {
	env     Env
	f       *s3BenchFlags
	sess    *cbs3.Session
	objs    *s3Objects
	objSize int64
	where   spec.Target
	runDir  string
	done    []*result.Result
}

// name is the target as the user wrote it, with the endpoint.
func (b *s3Bencher) name() string {
	t, _ := cbs3.ParseTarget(b.where.Location) // built by s3Flags.target
	return t.String() + " at " + t.Endpoint
}

func (b *s3Bencher) run(ctx context.Context, phases []s3Phase, limit int64) error {
	b.runDir = stamped(b.f.results, "s3-bench")
	// --objects 0 reads kept objects; a put phase first makes its own.
	if phases[0].name != "put" && b.f.objects > 0 {
		if err := b.prepare(ctx, b.f.objects); err != nil {
			return err
		}
	}
	for i, p := range phases {
		lim := int64(0)
		if p.name == "put" && limit > 0 {
			lim = b.objs.next + limit
		}
		res, err := b.phase(ctx, p, lim, filepath.Join(b.runDir, fmt.Sprintf("%02d-s3-%s.json", i+1, p.name)))
		if err != nil {
			return err
		}
		b.done = append(b.done, res)
		if res.Interrupted {
			return errInterrupted
		}
	}
	return nil
}

// prepare puts n new objects, concurrently and unmeasured.
func (b *s3Bencher) prepare(ctx context.Context, n int64) error {
	fmt.Fprintf(b.env.Stdout, "putting %d objects of %s in %s (not measured)\n", n, spec.Size(b.objSize), b.name())
	start := time.Now()
	limit := b.objs.next + n
	var wg sync.WaitGroup
	var firstErr atomic.Pointer[error]
	for range min(int64(b.f.concurrent), n) {
		wg.Go(func() {
			op := &engine.Op{Kind: engine.Write, Buf: make([]byte, b.objSize)}
			workload.Fill(op.Buf)
			for firstErr.Load() == nil {
				obj, ok := b.objs.create(limit)
				if !ok {
					return
				}
				op.Object = obj
				workload.Stamp(op)
				if err := b.sess.Do(ctx, op); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				b.objs.add(obj)
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return errInterrupted
	}
	if p := firstErr.Load(); p != nil {
		return fmt.Errorf("putting the run's objects: %w", *p)
	}
	fmt.Fprintf(b.env.Stdout, "put %d objects in %.1fs\n\n", n, time.Since(start).Seconds())
	return nil
}

// spec describes phase p as a workload, for the result.
func (b *s3Bencher) spec(p s3Phase, limit int64) spec.Workload {
	w := spec.Workload{
		Name: "s3-" + p.name, Target: b.where, Pattern: spec.Random, ReadPercent: p.mix[kindGet] + p.mix[kindList] + p.mix[kindStat],
		BlockSize: spec.Size(b.objSize), Objects: b.objs.count(), Workers: b.f.concurrent, QueueDepth: 1,
		Duration: b.f.duration, Verify: p.mix[kindGet] > 0, Keep: b.f.keep,
	}
	if p.name == "put" {
		w.Pattern, w.Objects = spec.Sequential, max(limit-b.objs.next, 0)
	}
	return w
}

// heading says what a phase does, as report.Heading does for a step.
func (b *s3Bencher) heading(p s3Phase) string {
	size := spec.Size(b.objSize).String()
	what := map[string]string{
		"put":    "put new " + size + " objects",
		"get":    fmt.Sprintf("get %s objects at random, of %d", size, b.objs.count()),
		"list":   fmt.Sprintf("list up to %d keys a request, of %d", cbs3.ListPage, b.objs.count()),
		"delete": fmt.Sprintf("delete %d %s objects", b.objs.count(), size),
		"mixed":  fmt.Sprintf("%s on %d %s objects", p.mix, b.objs.count(), size),
	}[p.name]
	return fmt.Sprintf("== s3-%s: %s in %s, %d concurrent, up to %s\n", p.name, what, b.name(), b.f.concurrent, b.f.duration)
}

// phase runs one phase for the duration, or until it has nothing left to
// do, printing a row a second, then saves and prints its result.
func (b *s3Bencher) phase(ctx context.Context, p s3Phase, limit int64, save string) (*result.Result, error) {
	out := b.env.Stdout
	fmt.Fprint(out, b.heading(p))
	w := b.spec(p, limit)
	col := metrics.NewCollector(s3Kinds)
	r := &s3Run{sess: b.sess, objs: b.objs, objSize: b.objSize, phase: p, limit: limit}
	ticks, err := result.CreateTickLog(result.TickLogPath(save), time.Now())
	if err != nil {
		return nil, fmt.Errorf("the tick log: %w", err)
	}
	subscribers := []metrics.Subscriber{ticks.Tick}
	if !b.f.quiet {
		table := report.NewProgress(out)
		subscribers = append(subscribers, func(t metrics.Tick) { table.Tick(r.tick(t)) })
	}
	emit := func(t metrics.Tick) {
		for _, sub := range subscribers {
			sub(t)
		}
	}

	start, usage0 := time.Now(), metrics.ReadUsage()
	t0 := engine.Now()
	r.deadline = t0 + b.f.duration.D()
	seed := uint64(time.Now().UnixNano())
	var wg sync.WaitGroup
	for i := range b.f.concurrent {
		rec := col.NewRecorder()
		wg.Go(func() { r.worker(ctx, rec, rand.New(rand.NewPCG(seed, uint64(i)))) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	ticker := time.NewTicker(time.Second)
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-ctx.Done():
			r.stop(runner.StopInterrupted)
			<-done // ops return as soon as their requests are canceled
			waiting = false
		case <-ticker.C:
			emit(col.Tick(engine.Now() - t0))
		}
	}
	ticker.Stop()
	if ctx.Err() != nil {
		// The workers may all have seen it before this loop did.
		r.stop(runner.StopInterrupted)
	}
	elapsed := engine.Now() - t0
	last := col.Tick(elapsed)
	last.Short = last.Dur < 0.5
	emit(last)
	reason, _ := r.reason.Load().(string)
	o := &runner.Outcome{
		Start: start, End: time.Now(), Elapsed: elapsed, StopReason: reason, Kinds: s3Kinds, Collector: col,
		CPU: metrics.ReadUsage().Since(usage0, elapsed),
	}
	res, err := o.Result(w.Name, &w, result.ThisHost())
	if err != nil {
		ticks.Discard()
		return nil, err
	}
	if err := res.Attach(ticks); err != nil {
		return res, fmt.Errorf("saving the result: %w", err)
	}
	if err := res.Save(save); err != nil {
		return res, fmt.Errorf("saving the result: %w", err)
	}
	report.Summary(out, res)
	if _, ok := res.Ops["get-ttfb"]; ok {
		fmt.Fprintln(out, "  (get-ttfb: from each get's start to the first byte of its response; get: to its last byte)")
	}
	fmt.Fprintf(out, "  result saved to %s\n\n", save)
	return res, nil
}

// s3Run is the state the workers of one phase share.
type s3Run struct {
	sess     *cbs3.Session
	objs     *s3Objects
	objSize  int64
	phase    s3Phase
	limit    int64         // puts stop at this object number; 0: never
	deadline time.Duration // on the engine.Now clock

	stopped           atomic.Bool
	reason            atomic.Value // string
	started, finished atomic.Int64
}

func (r *s3Run) stop(reason string) {
	if r.stopped.CompareAndSwap(false, true) {
		r.reason.Store(reason)
	}
}

// tick is the progress row's view of a second: the gets' first-byte
// times are not more ops.
func (r *s3Run) tick(t metrics.Tick) metrics.Tick {
	kinds := make(map[string]metrics.KindSecond, len(t.Kinds))
	for k, v := range t.Kinds {
		if k != s3Kinds[kindTTFB] {
			kinds[k] = v
		}
	}
	t.Kinds = kinds
	t.Finished = r.finished.Load()
	t.Started = r.started.Load()
	t.InFlight = t.Started - t.Finished
	return t
}

// draw picks the next op's kind from the mix.
func (r *s3Run) draw(rng *rand.Rand) int {
	x := rng.IntN(100)
	for k, n := range r.phase.mix {
		if x < n {
			return k
		}
		x -= n
	}
	return kindPut // unreachable: the mix sums to 100
}

// worker runs ops one after another until the phase stops.
func (r *s3Run) worker(ctx context.Context, rec *metrics.Recorder, rng *rand.Rand) {
	op := &engine.Op{Buf: make([]byte, r.objSize)}
	filled := false // whether op.Buf holds the write pattern
	for !r.stopped.Load() && ctx.Err() == nil {
		if engine.Now() >= r.deadline {
			r.stop(runner.StopDuration)
			return
		}
		kind := r.draw(rng)
		var obj int64
		ok := true
		switch kind {
		case kindGet, kindStat:
			obj, ok = r.objs.pick(rng)
		case kindDelete:
			obj, ok = r.objs.take(rng)
		}
		if !ok && r.phase.mixed {
			kind, ok = kindPut, true
		}
		if ok && kind == kindPut {
			obj, ok = r.objs.create(r.limit)
		}
		if !ok {
			r.stop(runner.StopExhausted)
			return
		}
		if kind == kindPut {
			if !filled {
				workload.Fill(op.Buf)
				filled = true
			}
			op.Kind, op.Object, op.Offset = engine.Write, obj, 0
			workload.Stamp(op)
		}

		r.started.Add(1)
		var first time.Duration
		var n int64
		var err error
		start := engine.Now()
		switch kind {
		case kindPut:
			err = r.sess.Do(ctx, op)
			n = r.objSize
		case kindGet:
			op.Kind, op.Object, op.Offset = engine.Read, obj, 0
			filled = false
			first, err = r.sess.Get(ctx, op)
			n = r.objSize
		case kindStat:
			var size int64
			if size, err = r.sess.Stat(ctx, obj); err == nil && size != r.objSize {
				err = fmt.Errorf("s3: HEAD %s: %d bytes, want %d", r.sess.Key(obj), size, r.objSize)
			}
		case kindDelete:
			err = r.sess.Delete(ctx, obj)
		case kindList:
			_, err = r.sess.List(ctx)
		}
		end := engine.Now()
		r.finished.Add(1)
		if err == nil && kind == kindGet {
			err = workload.Check(op)
		}
		switch kind {
		case kindPut:
			if err == nil {
				r.objs.add(obj)
			}
		case kindGet, kindStat:
			r.objs.release(obj)
		}

		switch {
		case err == nil:
			rec.Record(kind, end-start, n, end)
			if kind == kindGet && first >= start {
				rec.Record(kindTTFB, first-start, 0, first)
			}
		case ctx.Err() != nil && errors.Is(err, context.Canceled):
			// cut short by the interrupt, not a failure of the service
		default:
			rec.RecordError(kind, s3ErrorClass(err))
		}
	}
}

// s3ErrorClass names an op error for the result's error counts: the S3
// error code (NoSuchKey, SlowDown...) when the service answered.
func s3ErrorClass(err error) string {
	var re *cbs3.RequestError
	if errors.As(err, &re) && re.Code != "" {
		return re.Code
	}
	return engine.ErrorKind(err)
}

func newS3CleanupCmd(env Env, cf *s3Flags) *cobra.Command {
	return &cobra.Command{
		Use:   "cleanup s3://BUCKET[/PREFIX]",
		Short: "remove the objects an s3 bench --keep left, and the bucket if it made it and it is empty",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, creds, err := cf.target(args[0])
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
