package loadgen

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/metrics"
)

// fakeQueue completes every op delay after it was submitted, and checks
// what a cluster would: that each op stays inside its object. It waits by
// spinning, so its timing is exact.
type fakeQueue struct {
	t       *testing.T
	delay   time.Duration
	sizes   map[string]int64
	pending []*Op
	due     []time.Duration

	maxInFlight int
	writes      map[string][]int64 // offsets and ends of the writes, per object
	ops, reads  int
}

func newFakeQueue(t *testing.T, g *Gen, delay time.Duration) *fakeQueue {
	f := &fakeQueue{t: t, delay: delay, sizes: map[string]int64{}, writes: map[string][]int64{}}
	for _, o := range g.Objects() {
		f.sizes[o.Name] = o.Size
	}
	return f
}

func (f *fakeQueue) Submit(op *Op) error {
	size, ok := f.sizes[op.Name]
	if !ok || op.Offset < 0 || op.Offset+int64(len(op.Buf)) > size {
		f.t.Errorf("op %s [%d, +%d) is outside the object (size %d)", op.Name, op.Offset, len(op.Buf), size)
	}
	f.ops++
	if op.Write {
		f.writes[op.Name] = append(f.writes[op.Name], op.Offset, op.Offset+int64(len(op.Buf)))
	} else {
		f.reads++
	}
	f.pending = append(f.pending, op)
	f.due = append(f.due, engine.Now()+f.delay)
	f.maxInFlight = max(f.maxInFlight, len(f.pending))
	return nil
}

func (f *fakeQueue) Sleep(d time.Duration) {
	for deadline := engine.Now() + d; engine.Now() < deadline; {
	}
}

func (f *fakeQueue) Reap(least int, wait time.Duration, done []*Op) int {
	deadline := engine.Now() + wait
	n := 0
	for {
		now := engine.Now()
		for i := 0; i < len(f.pending) && n < len(done); {
			if f.due[i] > now {
				i++
				continue
			}
			op := f.pending[i]
			op.Err, op.Completed = nil, f.due[i]
			done[n] = op
			n++
			f.pending = append(f.pending[:i], f.pending[i+1:]...)
			f.due = append(f.due[:i], f.due[i+1:]...)
		}
		if n >= least || now >= deadline {
			return n
		}
	}
}

func testConfig() Config {
	return Config{
		Objects: 20, MinObjectSize: 10 << 10, MaxObjectSize: 300 << 10, MinOpLen: 1 << 10, MaxOpLen: 64 << 10,
		MaxOps: 8, MaxBacklog: 256 << 10, ReadPercent: 70, RunLength: 500 * time.Millisecond,
	}
}

func TestDefaultsAreValidAndBadOptionsAreNot(t *testing.T) {
	d := Defaults()
	if err := d.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if d.Objects != 200 || d.MaxOps != 16 || d.MaxBacklog != 10<<20 || d.ReadPercent != 80 || d.Throughput != 5<<20 || d.RunLength != time.Minute {
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
	col := metrics.NewCollector([]string{"read", "write"})
	if err := g.Run(context.Background(), &backlogCheck{fakeQueue: q, g: g, limit: cfg.MaxBacklog}, col.NewRecorder(), engine.Now()); err != nil {
		t.Fatal(err)
	}
	if q.maxInFlight > cfg.MaxOps {
		t.Errorf("%d ops in flight; --max-ops is %d", q.maxInFlight, cfg.MaxOps)
	}
	if g.Pending() != 0 || len(q.pending) != 0 {
		t.Errorf("Run returned with %d bytes in flight", g.Pending())
	}
	if frac := float64(q.reads) / float64(q.ops); q.ops < 200 || math.Abs(frac-0.7) > 0.1 {
		t.Errorf("%d ops, %.2f of them reads; want many, 0.7", q.ops, frac)
	}
	col.Tick(time.Second)
	r, w := col.Summary(int(engine.Read), time.Second), col.Summary(int(engine.Write), time.Second)
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

// backlogCheck fails the test if an op starts while the backlog is full.
type backlogCheck struct {
	*fakeQueue
	g     *Gen
	limit int64
}

func (b *backlogCheck) Submit(op *Op) error {
	if p := b.g.Pending(); p >= b.limit {
		b.t.Errorf("an op started with %d bytes in flight; --max-backlog is %d", p, b.limit)
	}
	return b.fakeQueue.Submit(op)
}

func TestRunPacesToTheTargetThroughput(t *testing.T) {
	cfg := testConfig()
	cfg.Throughput = 4 << 20
	cfg.RunLength = time.Second
	cfg.MinOpLen = cfg.MaxOpLen // ops of one size, so missed ops count in bytes
	g := New(cfg, "p_", 3)
	q := newFakeQueue(t, g, time.Millisecond)
	col := metrics.NewCollector([]string{"read", "write"})
	if err := g.Run(context.Background(), q, col.NewRecorder(), engine.Now()); err != nil {
		t.Fatal(err)
	}
	// Open loop: every op due in the second (4M at 4M/s, give or take the
	// op that starts at the end) was either sent or counted as missed,
	// however long a busy machine held the run's thread.
	sent, missed := g.sent.Load(), g.Missed()*cfg.MaxOpLen
	if due := sent + missed; sent == 0 || due < 4<<20-2*cfg.MaxOpLen || due > 4<<20+2*cfg.MaxOpLen {
		t.Errorf("sent %d bytes and missed %d in a second paced at %d", sent, missed, cfg.Throughput)
	}
}

func TestRunCountsWhatItCouldNotIssueOnTime(t *testing.T) {
	cfg := testConfig()
	cfg.Throughput = 64 << 20 // far more than 8 ops of 20ms can carry
	g := New(cfg, "p_", 4)
	q := newFakeQueue(t, g, 20*time.Millisecond)
	col := metrics.NewCollector([]string{"read", "write"})
	if err := g.Run(context.Background(), q, col.NewRecorder(), engine.Now()); err != nil {
		t.Fatal(err)
	}
	// Half a second at 64M/s is 32M; 8 ops in flight of at most 64K each,
	// 20ms each, carry at most 12.8M.
	if g.Late() == 0 || g.Missed() < (32<<20-13<<20)/cfg.MaxOpLen {
		t.Errorf("%d ops late, %d missed; want the shortfall counted", g.Late(), g.Missed())
	}
}

func TestRunStopsWhenCanceled(t *testing.T) {
	cfg := testConfig()
	cfg.RunLength = time.Hour
	g := New(cfg, "p_", 5)
	q := newFakeQueue(t, g, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := g.Run(ctx, q, metrics.NewCollector([]string{"read", "write"}).NewRecorder(), engine.Now()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second || len(q.pending) != 0 {
		t.Errorf("canceled after 200ms, Run returned after %v with %d ops in flight", took, len(q.pending))
	}
}
