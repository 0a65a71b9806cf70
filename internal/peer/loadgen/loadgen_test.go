package loadgen

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
)

// fakeSession serves a Gen's objects through one fakeQueue, as the rados
// engine serves them on a cluster: a session on a set of objects of their
// own sizes.
type fakeSession struct {
	g *Gen
	q *fakeQueue
}

var (
	_ engine.AsyncSession = (*fakeSession)(nil)
	_ engine.ObjectSet    = (*fakeSession)(nil)
)

func (f *fakeSession) Geometry() engine.Geometry {
	return engine.Geometry{Layout: engine.Objects, ObjectCount: int64(len(f.g.Objects()))}
}

func (f *fakeSession) ObjectSizes() []int64 { return f.g.Sizes() }

func (f *fakeSession) Do(context.Context, *engine.Op) error {
	f.q.t.Error("Do called: load-gen's ops go through a queue")
	return nil
}

func (f *fakeSession) Close(context.Context) error { return nil }

func (f *fakeSession) NewQueue(depth int) (engine.Queue, error) {
	f.q.depth = depth
	return f.q, nil
}

// fakeQueue completes every op delay after it was submitted, and checks
// what a cluster would: that each op stays inside its object, and that
// no op starts while limit bytes (when set) are in flight. It waits by
// spinning, so its timing is exact.
type fakeQueue struct {
	t       *testing.T
	delay   time.Duration
	sizes   []int64
	names   []string
	limit   int64
	depth   int
	pending []*engine.Op

	maxInFlight int
	inFlight    int64              // bytes submitted and not yet reaped
	writes      map[string][]int64 // offsets and ends of the writes, per object
	ops, reads  int
	sent        int64 // bytes
}

func newFakeQueue(t *testing.T, g *Gen, delay time.Duration) *fakeQueue {
	return &fakeQueue{t: t, delay: delay, sizes: g.Sizes(), names: g.Names(), writes: map[string][]int64{}}
}

func (f *fakeQueue) Submit(op *engine.Op) error {
	if op.Object < 0 || op.Object >= int64(len(f.sizes)) {
		f.t.Fatalf("op on object %d of %d", op.Object, len(f.sizes))
	}
	name, size := f.names[op.Object], f.sizes[op.Object]
	if op.Offset < 0 || op.Offset+int64(len(op.Buf)) > size {
		f.t.Errorf("op %s [%d, +%d) is outside the object (size %d)", name, op.Offset, len(op.Buf), size)
	}
	if f.limit > 0 && f.inFlight >= f.limit {
		f.t.Errorf("an op started with %d bytes in flight; --max-backlog is %d", f.inFlight, f.limit)
	}
	f.ops++
	f.sent += int64(len(op.Buf))
	f.inFlight += int64(len(op.Buf))
	if op.Kind == engine.Write {
		f.writes[name] = append(f.writes[name], op.Offset, op.Offset+int64(len(op.Buf)))
	} else {
		f.reads++
	}
	op.Completed = engine.Now() + f.delay
	f.pending = append(f.pending, op)
	f.maxInFlight = max(f.maxInFlight, len(f.pending))
	return nil
}

func (f *fakeQueue) Reap(ctx context.Context, least int, done []*engine.Op) (int, error) {
	n := 0
	for {
		now := engine.Now()
		for i := 0; i < len(f.pending) && n < len(done); {
			op := f.pending[i]
			if op.Completed > now {
				i++
				continue
			}
			op.Err = nil
			done[n] = op
			n++
			f.inFlight -= int64(len(op.Buf))
			f.pending = append(f.pending[:i], f.pending[i+1:]...)
		}
		if n >= least {
			return n, nil
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
	}
}

// Close waits for the ops in flight, as an engine's queue does.
func (f *fakeQueue) Close() error {
	_, err := f.Reap(context.Background(), len(f.pending), make([]*engine.Op, len(f.pending)))
	return err
}

// run runs g's workload through the runner on a fakeSession with q.
func run(t *testing.T, ctx context.Context, cfg Config, g *Gen, q *fakeQueue) *runner.Outcome {
	t.Helper()
	w := cfg.Workload(spec.Target{Scheme: "fake"})
	o, err := runner.Run(ctx, &fakeSession{g: g, q: q}, &w, runner.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// sent returns the bytes of the ops a run completed.
func sent(o *runner.Outcome) int64 {
	var n int64
	for k := range o.Kinds {
		_, b, _ := o.Collector.Totals(k)
		n += b
	}
	return n
}

func testConfig() Config {
	return Config{
		Objects: 20, MinObjectSize: 10 << 10, MaxObjectSize: 300 << 10, MinOpLen: 1 << 10, MaxOpLen: 64 << 10,
		MaxOps: 8, MaxBacklog: 256 << 10, ReadPercent: 70, RunLength: spec.Duration(500 * time.Millisecond),
	}
}

func TestDefaultsAreValidAndBadOptionsAreNot(t *testing.T) {
	d := Defaults()
	if err := d.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if d.Objects != 200 || d.MaxOps != 16 || d.MaxBacklog != 10<<20 || d.ReadPercent != 80 || d.Throughput != 5<<20 || d.RunLength.D() != time.Minute {
		t.Errorf("defaults %+v are not rados load-gen's", d)
	}
	for name, bad := range map[string]func(*Config){
		"no objects":          func(c *Config) { c.Objects = 0 },
		"empty objects":       func(c *Config) { c.MinObjectSize = 0 },
		"max object < min":    func(c *Config) { c.MaxObjectSize = c.MinObjectSize - 1 },
		"empty ops":           func(c *Config) { c.MinOpLen = 0 },
		"max op < min":        func(c *Config) { c.MaxOpLen = c.MinOpLen - 1 },
		"huge ops":            func(c *Config) { c.MaxOpLen = 2 << 30 },
		"no ops in flight":    func(c *Config) { c.MaxOps = 0 },
		"no backlog":          func(c *Config) { c.MaxBacklog = 0 },
		"percent over 100":    func(c *Config) { c.ReadPercent = 101 },
		"negative throughput": func(c *Config) { c.Throughput = -1 },
		"no run length":       func(c *Config) { c.RunLength = 0 },
		"negative alignment":  func(c *Config) { c.OffsetAlign = -1 },
	} {
		c := testConfig()
		bad(&c)
		if c.Validate() == nil {
			t.Errorf("%s: accepted %+v", name, c)
		}
	}
}

func TestPrepareWritesEveryObjectWhole(t *testing.T) {
	cfg := testConfig()
	cfg.MaxObjectSize = 9 << 20 // more than one fill write
	g := New(cfg, "p_", 1)
	q := newFakeQueue(t, g, time.Millisecond)
	if err := g.Prepare(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if q.maxInFlight > cfg.MaxOps {
		t.Errorf("%d writes in flight; --max-ops is %d", q.maxInFlight, cfg.MaxOps)
	}
	for _, o := range g.Objects() {
		var next int64
		w := q.writes[o.Name]
		for i := 0; i < len(w); i += 2 {
			if w[i] != next {
				t.Fatalf("%s: write at %d, want %d: %v", o.Name, w[i], next, w)
			}
			next = w[i+1]
		}
		if next != o.Size {
			t.Errorf("%s: written up to %d of %d bytes", o.Name, next, o.Size)
		}
	}
	zeros := 0
	for _, b := range g.data {
		if b == 0 {
			zeros++
		}
	}
	if zeros > len(g.data)/100 {
		t.Errorf("%d of the %d data bytes are zero: not random data", zeros, len(g.data))
	}
}

func TestRunKeepsItsLimitsAndMix(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetAlign = 4096
	g := New(cfg, "p_", 2)
	q := newFakeQueue(t, g, 2*time.Millisecond)
	q.limit = cfg.MaxBacklog
	o := run(t, context.Background(), cfg, g, q)
	if q.maxInFlight > cfg.MaxOps {
		t.Errorf("%d ops in flight; --max-ops is %d", q.maxInFlight, cfg.MaxOps)
	}
	if q.inFlight != 0 || len(q.pending) != 0 {
		t.Errorf("the run returned with %d bytes in flight", q.inFlight)
	}
	if frac := float64(q.reads) / float64(q.ops); q.ops < 200 || math.Abs(frac-0.7) > 0.1 {
		t.Errorf("%d ops, %.2f of them reads; want many, 0.7", q.ops, frac)
	}
	r, w := o.Collector.Summary(int(engine.Read), time.Second), o.Collector.Summary(int(engine.Write), time.Second)
	if r.Ops+w.Ops != int64(q.ops) || r.Errors+w.Errors != 0 {
		t.Errorf("recorded %d reads and %d writes, %d errors; the queue saw %d ops", r.Ops, w.Ops, r.Errors+w.Errors, q.ops)
	}
	if p50 := time.Duration(r.Latency.Percentiles.At(50)); p50 < 1900*time.Microsecond || p50 > 2100*time.Microsecond {
		t.Errorf("read p50 %v; every op took 2ms", p50)
	}
	for _, o := range g.Objects() {
		w := q.writes[o.Name]
		for i := 0; i < len(w); i += 2 {
			if w[i]%cfg.OffsetAlign != 0 {
				t.Fatalf("%s: write at %d, not aligned to %d", o.Name, w[i], cfg.OffsetAlign)
			}
		}
	}
}

func TestRunPacesToTheTargetThroughput(t *testing.T) {
	cfg := testConfig()
	cfg.Throughput = 4 << 20
	cfg.RunLength = spec.Duration(time.Second)
	cfg.MinOpLen = cfg.MaxOpLen // ops of one size, so missed ops count in bytes
	g := New(cfg, "p_", 3)
	q := newFakeQueue(t, g, time.Millisecond)
	o := run(t, context.Background(), cfg, g, q)
	// Open loop: every op due in the second (4M at 4M/s, give or take the
	// op that starts at the end) was either sent or counted as missed,
	// however long a busy machine held the run's thread.
	sent, missed := sent(o), o.Missed*cfg.MaxOpLen
	if due := sent + missed; sent == 0 || due < 4<<20-2*cfg.MaxOpLen || due > 4<<20+2*cfg.MaxOpLen {
		t.Errorf("sent %d bytes and missed %d in a second paced at %d", sent, missed, cfg.Throughput)
	}
}

func TestRunCountsWhatItCouldNotIssueOnTime(t *testing.T) {
	cfg := testConfig()
	cfg.Throughput = 64 << 20 // far more than 8 ops of 20ms can carry
	g := New(cfg, "p_", 4)
	q := newFakeQueue(t, g, 20*time.Millisecond)
	o := run(t, context.Background(), cfg, g, q)
	// Half a second at 64M/s is 32M; 8 ops in flight of at most 64K each,
	// 20ms each, carry at most 12.8M.
	if o.Late == 0 || o.Missed < (32<<20-13<<20)/cfg.MaxOpLen {
		t.Errorf("%d ops late, %d missed; want the shortfall counted", o.Late, o.Missed)
	}
}

func TestRunStopsWhenCanceled(t *testing.T) {
	cfg := testConfig()
	cfg.RunLength = spec.Duration(time.Hour)
	g := New(cfg, "p_", 5)
	q := newFakeQueue(t, g, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	o := run(t, ctx, cfg, g, q)
	// The bound is a hang check: the run was set to an hour.
	if took := time.Since(start); took > 30*time.Second || len(q.pending) != 0 || o.StopReason != runner.StopInterrupted {
		t.Errorf("canceled after 200ms, the run returned after %v with %d ops in flight, stopped by %q", took, len(q.pending), o.StopReason)
	}
}
