// Package loadgen is Ceph's `rados load-gen` without the I/O: its options
// and defaults, the objects it prepares, the ops it makes (random object,
// length, offset and read/write mix, as rados.cc's LoadGen::gen_op) and the
// loop that keeps them in flight within an op count, a byte backlog and a
// target throughput. A Queue does the I/O: engine/rados.ObjectQueue on a
// cluster.
package loadgen

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/metrics"
)

// Config is one load-gen run, in rados load-gen's terms.
type Config struct {
	Objects       int   // --num-objects
	MinObjectSize int64 // bytes; each object's size is uniform in [Min, Max]
	MaxObjectSize int64
	MinOpLen      int64 // bytes; each op's length is uniform in [Min, Max], cut to its object's size
	MaxOpLen      int64
	MaxOps        int   // ops in flight
	MaxBacklog    int64 // bytes in flight: no op starts while this many are
	ReadPercent   int
	// Throughput paces the ops, open loop, at this many bytes per second;
	// 0 issues them as fast as MaxOps and MaxBacklog allow.
	Throughput int64
	RunLength  time.Duration
	// OffsetAlign, when set, rounds each op's offset down to a multiple of it.
	OffsetAlign int64
}

// Defaults returns rados load-gen's defaults (Ceph 16), but for
// MaxObjectSize: rados' 5G makes sparse objects that Ceph 16's default
// osd_max_object_size (128M) refuses, and cephbench fills its objects with
// data, so it uses rados bench's 4M object.
func Defaults() Config {
	return Config{
		Objects: 200, MinObjectSize: 1 << 10, MaxObjectSize: 4 << 20,
		MinOpLen: 1 << 10, MaxOpLen: 2 << 20, MaxOps: 16, MaxBacklog: 10 << 20,
		ReadPercent: 80, Throughput: 5 << 20, RunLength: 60 * time.Second,
	}
}

// Limits that keep a typo from allocating the machine away.
const (
	maxObjects = 1 << 24
	maxOpLen   = 1 << 30
	maxOps     = 1 << 16
)

// Validate reports the first bad option, naming its rados load-gen flag.
func (c *Config) Validate() error {
	switch {
	case c.Objects < 1 || c.Objects > maxObjects:
		return fmt.Errorf("invalid --num-objects %d (want 1..%d)", c.Objects, maxObjects)
	case c.MinObjectSize < 1:
		return fmt.Errorf("invalid --min-object-size %d: at least 1 byte", c.MinObjectSize)
	case c.MaxObjectSize < c.MinObjectSize:
		return fmt.Errorf("--max-object-size %d is smaller than --min-object-size %d", c.MaxObjectSize, c.MinObjectSize)
	case c.MinOpLen < 1:
		return fmt.Errorf("invalid --min-op-len %d: at least 1 byte", c.MinOpLen)
	case c.MaxOpLen < c.MinOpLen:
		return fmt.Errorf("--max-op-len %d is smaller than --min-op-len %d", c.MaxOpLen, c.MinOpLen)
	case c.MaxOpLen > maxOpLen:
		return fmt.Errorf("--max-op-len %d is over the 1G limit", c.MaxOpLen)
	case c.MaxOps < 1 || c.MaxOps > maxOps:
		return fmt.Errorf("invalid --max-ops %d (want 1..%d)", c.MaxOps, maxOps)
	case c.MaxBacklog < 1:
		return fmt.Errorf("invalid --max-backlog %d: at least 1 byte", c.MaxBacklog)
	case c.ReadPercent < 0 || c.ReadPercent > 100:
		return fmt.Errorf("invalid --read-percent %d (want 0..100)", c.ReadPercent)
	case c.Throughput < 0:
		return fmt.Errorf("invalid --target-throughput %d: negative", c.Throughput)
	case c.RunLength <= 0:
		return fmt.Errorf("invalid --run-length %s: must be positive", c.RunLength)
	case c.OffsetAlign < 0:
		return fmt.Errorf("invalid --offset-align %d: negative", c.OffsetAlign)
	}
	return nil
}

// Object is one object a run prepares.
type Object struct {
	Name string
	Size int64
}

// Op is one read or write. The loop owns it; a Queue reads Name, Write,
// Offset and Buf and sets Err and Completed.
type Op struct {
	Name   string
	Write  bool
	Offset int64
	// Buf's length is the op's: a write sends it, a read fills it. It
	// stays valid and unmoved until the op completes.
	Buf []byte

	Err error
	// Completed is when the op finished, on engine.Now's clock; zero
	// means the loop stamps it when it reaps the op.
	Completed time.Duration

	start time.Duration // where its latency counts from
	rbuf  []byte        // this slot's read buffer, made on its first read
}

// Queue runs ops asynchronously.
type Queue interface {
	// Submit starts op. It fails only if the op could not be started; its
	// outcome comes back from Reap.
	Submit(op *Op) error
	// Reap stores up to len(done) completed ops in done and returns how
	// many; if fewer than least have completed, it waits up to wait for
	// them.
	Reap(least int, wait time.Duration, done []*Op) int
	// Sleep pauses for d, to well under a millisecond: a paced op is late
	// if it starts a millisecond after it was due.
	Sleep(d time.Duration)
}

// Gen is one load-gen run: its objects, its data and its counters.
// Prepare and Run are called from one goroutine; Pending, Late and Missed
// may be read from others.
type Gen struct {
	cfg  Config
	objs []Object
	data []byte // what writes send: random bytes, sliced at random places
	rnd  *rand.Rand

	sent, completed atomic.Int64 // bytes
	issued          int64
	late, missed    atomic.Int64
}

// fillChunk is the largest write Prepare makes: whole objects could exceed
// the OSDs' write size limit (osd_max_write_size, 90M by default).
const fillChunk = 4 << 20

// New picks the sizes of cfg.Objects objects named prefix+"obj"+N and
// makes the data the run writes. cfg must be valid.
func New(cfg Config, prefix string, seed uint64) *Gen {
	g := &Gen{cfg: cfg, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	g.objs = make([]Object, cfg.Objects)
	for i := range g.objs {
		g.objs[i] = Object{Name: prefix + "obj" + strconv.Itoa(i), Size: g.between(cfg.MinObjectSize, cfg.MaxObjectSize)}
	}
	// Room past the longest write so that writes of the same length send
	// different bytes.
	g.data = make([]byte, max(fillChunk, cfg.MaxOpLen)+1<<20)
	var key [32]byte
	for i := range key {
		key[i] = byte(g.rnd.Uint32())
	}
	_, _ = rand.NewChaCha8(key).Read(g.data) // cannot fail
	return g
}

// between returns a uniform random number in [lo, hi].
func (g *Gen) between(lo, hi int64) int64 { return lo + g.rnd.Int64N(hi-lo+1) }

// Objects returns the run's objects.
func (g *Gen) Objects() []Object { return g.objs }

// Bytes returns the size of all the objects: what Prepare writes.
func (g *Gen) Bytes() int64 {
	var n int64
	for _, o := range g.objs {
		n += o.Size
	}
	return n
}

// slots returns n ops to use as a queue's slots, all free.
func slots(n int) (free, done []*Op) {
	ops := make([]Op, n)
	free = make([]*Op, n)
	for i := range ops {
		free[i] = &ops[i]
	}
	return free, make([]*Op, n)
}

// maxWait bounds every wait for completions, so the loops notice their
// end and cancellation promptly.
const maxWait = 100 * time.Millisecond

// Prepare writes every object whole with the run's data, up to MaxOps
// writes in flight on q (rados load-gen's throttle). It stops issuing at
// ctx's end or the first failed write, and returns once the writes in
// flight have completed.
func (g *Gen) Prepare(ctx context.Context, q Queue) error {
	free, done := slots(g.cfg.MaxOps)
	inFlight, obj, off := 0, 0, int64(0)
	var failed error
	for {
		for failed == nil && ctx.Err() == nil && len(free) > 0 && obj < len(g.objs) {
			o := g.objs[obj]
			n := min(fillChunk, o.Size-off)
			at := g.rnd.Int64N(int64(len(g.data)) - n + 1)
			op := free[len(free)-1]
			*op = Op{Name: o.Name, Write: true, Offset: off, Buf: g.data[at : at+n]}
			if err := q.Submit(op); err != nil {
				failed = fmt.Errorf("writing %s: %w", o.Name, err)
				break
			}
			free = free[:len(free)-1]
			inFlight++
			if off += n; off == o.Size {
				obj, off = obj+1, 0
			}
		}
		if inFlight == 0 {
			break
		}
		n := q.Reap(1, maxWait, done)
		for _, op := range done[:n] {
			if op.Err != nil && failed == nil {
				failed = fmt.Errorf("writing %s: %w", op.Name, op.Err)
			}
			free = append(free, op)
			inFlight--
		}
	}
	if failed != nil {
		return failed
	}
	return ctx.Err()
}

// lateThreshold is how far behind its due time a paced op may start
// before it counts as late, as the runner counts them.
const lateThreshold = time.Millisecond

// Run issues random reads and writes on the prepared objects from t0 (on
// engine.Now's clock) for RunLength or until ctx ends, then waits for the
// ops in flight, recording each completed op in rec (kind engine.Read or
// engine.Write). An op starts only while fewer than MaxOps ops and
// MaxBacklog bytes are in flight and, when paced, once the bytes sent
// before it are due: op k is due at t0 + (bytes of ops 0..k-1) /
// Throughput. A paced op's latency counts from its due time, so time spent
// waiting for a free slot is in it. Run returns an error only if an op
// could not be submitted.
func (g *Gen) Run(ctx context.Context, q Queue, rec *metrics.Recorder, t0 time.Duration) error {
	cfg := g.cfg
	end := t0 + cfg.RunLength
	paced := cfg.Throughput > 0
	free, done := slots(cfg.MaxOps)
	inFlight := 0
	var failed error
	stopAt := time.Duration(-1)
	// The loop may notice a cancellation only after its next op was due;
	// that op was not missed.
	var canceledAt atomic.Int64
	defer context.AfterFunc(ctx, func() { canceledAt.Store(int64(engine.Now())) })()
	for {
		now := engine.Now()
		if stopAt < 0 && (failed != nil || now >= end || ctx.Err() != nil) {
			stopAt = min(now, end)
			if c := time.Duration(canceledAt.Load()); c > 0 {
				stopAt = min(stopAt, c)
			}
		}
		// next is when the next op is due, if nothing but its time holds
		// it back.
		var next time.Duration
		for stopAt < 0 && len(free) > 0 && g.Pending() < cfg.MaxBacklog {
			start := now
			if paced {
				due := t0 + bytesTime(g.sent.Load(), cfg.Throughput)
				if due > now {
					next = due
					break
				}
				if now-due > lateThreshold {
					g.late.Add(1)
				}
				start = due
			}
			op := free[len(free)-1]
			g.next(op)
			op.start = start
			if err := q.Submit(op); err != nil {
				failed = fmt.Errorf("%s: %w", op.Name, err)
				stopAt = now
				break
			}
			free = free[:len(free)-1]
			inFlight++
			g.issued++
			g.sent.Add(int64(len(op.Buf)))
			now = engine.Now()
		}
		if inFlight == 0 && stopAt >= 0 {
			break
		}
		var n int
		if next > 0 {
			// Completions meanwhile are stamped by the queue; reaping
			// them later frees nothing this op needs.
			q.Sleep(min(next, end, now+maxWait) - now)
			n = q.Reap(0, 0, done)
		} else {
			n = q.Reap(1, maxWait, done)
		}
		for _, op := range done[:n] {
			g.finish(op, rec)
			free = append(free, op)
			inFlight--
		}
	}
	if paced {
		g.missed.Store(g.unsent(bytesDue(stopAt-t0, cfg.Throughput)))
	}
	return failed
}

// next makes op rados load-gen's next op: a random object; a random length,
// cut to the object's size; a random offset, moved back so the op ends
// within the object, then aligned; a read with probability ReadPercent.
func (g *Gen) next(op *Op) {
	o := g.objs[g.rnd.IntN(len(g.objs))]
	n := min(g.between(g.cfg.MinOpLen, g.cfg.MaxOpLen), o.Size)
	off := g.between(0, o.Size)
	if off+n > o.Size {
		off = o.Size - n
	}
	if a := g.cfg.OffsetAlign; a > 0 {
		off -= off % a
	}
	op.Name, op.Offset, op.Err, op.Completed = o.Name, off, nil, 0
	op.Write = g.rnd.IntN(100) >= g.cfg.ReadPercent
	if op.Write {
		at := g.rnd.Int64N(int64(len(g.data)) - n + 1)
		op.Buf = g.data[at : at+n]
		return
	}
	if op.rbuf == nil {
		op.rbuf = make([]byte, g.cfg.MaxOpLen)
	}
	op.Buf = op.rbuf[:n]
}

func (g *Gen) finish(op *Op, rec *metrics.Recorder) {
	kind := int(engine.Read)
	if op.Write {
		kind = int(engine.Write)
	}
	n := int64(len(op.Buf))
	g.completed.Add(n)
	if op.Err != nil {
		rec.RecordError(kind, engine.ErrorKind(op.Err))
		return
	}
	end := op.Completed
	if end == 0 {
		end = engine.Now()
	}
	rec.Record(kind, end-op.start, n, end)
}

// unsent estimates how many ops were due by the time due bytes were, but
// never issued: the bytes short, in ops of the mean length issued.
func (g *Gen) unsent(due int64) int64 {
	short := due - g.sent.Load()
	if short <= 0 {
		return 0
	}
	mean := float64(g.cfg.MinOpLen+g.cfg.MaxOpLen) / 2
	if g.issued > 0 {
		mean = float64(g.sent.Load()) / float64(g.issued)
	}
	return int64(math.Ceil(float64(short) / mean))
}

// Pending returns the bytes of the ops in flight: rados load-gen's
// "pending data".
func (g *Gen) Pending() int64 { return g.sent.Load() - g.completed.Load() }

// Late counts paced ops issued more than a millisecond after they were due.
func (g *Gen) Late() int64 { return g.late.Load() }

// Missed estimates the paced ops that were due before the run ended but
// never issued; it is set when Run returns.
func (g *Gen) Missed() int64 { return g.missed.Load() }

// bytesTime is when n bytes are due at rate bytes per second.
func bytesTime(n, rate int64) time.Duration {
	return time.Duration(float64(n) / float64(rate) * float64(time.Second))
}

// bytesDue is how many bytes are due after d at rate bytes per second.
func bytesDue(d time.Duration, rate int64) int64 { return int64(d.Seconds() * float64(rate)) }
