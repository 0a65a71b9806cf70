// Package loadgen is Ceph's `rados load-gen` in cephbench's terms: its
// options and defaults, the workload they make (ops of random lengths at
// random places in objects of random sizes, a read/write mix, paced in
// bytes with the bytes in flight bounded: rados.cc's LoadGen, which the
// runner drives), and the objects it prepares, with the unmeasured writes
// that fill them.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/workload"
)

// Config is one load-gen run, in rados load-gen's terms. It is plain data
// that round-trips through JSON, so a step can carry it.
type Config struct {
	Objects       int   `json:"objects"`         // --num-objects
	MinObjectSize int64 `json:"min_object_size"` // bytes; each object's size is uniform in [Min, Max]
	MaxObjectSize int64 `json:"max_object_size"`
	MinOpLen      int64 `json:"min_op_len"` // bytes; each op's length is uniform in [Min, Max], cut to its object's size
	MaxOpLen      int64 `json:"max_op_len"`
	MaxOps        int   `json:"max_ops"`     // ops in flight
	MaxBacklog    int64 `json:"max_backlog"` // bytes in flight: no op starts while this many are
	ReadPercent   int   `json:"read_percent"`
	// Throughput paces the ops, open loop, at this many bytes per second;
	// 0 issues them as fast as MaxOps and MaxBacklog allow.
	Throughput int64         `json:"throughput"`
	RunLength  spec.Duration `json:"run_length"`
	// OffsetAlign, when set, rounds each op's offset down to a multiple of it.
	OffsetAlign int64 `json:"offset_align,omitempty"`
}

// Defaults returns rados load-gen's defaults (Ceph 16), but for
// MaxObjectSize: rados' 5G makes sparse objects that Ceph 16's default
// osd_max_object_size (128M) refuses, and cephbench fills its objects with
// data, so it uses rados bench's 4M object.
func Defaults() Config {
	return Config{
		Objects: 200, MinObjectSize: 1 << 10, MaxObjectSize: 4 << 20,
		MinOpLen: 1 << 10, MaxOpLen: 2 << 20, MaxOps: 16, MaxBacklog: 10 << 20,
		ReadPercent: 80, Throughput: 5 << 20, RunLength: spec.Duration(60 * time.Second),
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
		return fmt.Errorf("invalid --run-length %s: must be positive", c.RunLength.D())
	case c.OffsetAlign < 0:
		return fmt.Errorf("invalid --offset-align %d: negative", c.OffsetAlign)
	}
	return nil
}

// Workload is the run cfg describes on target, for the runner: one worker
// keeping MaxOps ops in flight, each of MinOpLen..MaxOpLen bytes at a
// random place in a random object of the set, paced at Throughput bytes
// per second, no op starting while MaxBacklog bytes are in flight.
func (c *Config) Workload(target spec.Target) spec.Workload {
	return spec.Workload{
		Target: target, Pattern: spec.Random, ReadPercent: c.ReadPercent,
		BlockSize: spec.Size(c.MaxOpLen), MinBlockSize: spec.Size(c.MinOpLen),
		Objects: int64(c.Objects), ObjectSize: spec.Size(c.MaxObjectSize), MinObjectSize: spec.Size(c.MinObjectSize),
		OffsetAlign: spec.Size(c.OffsetAlign), Workers: 1, QueueDepth: c.MaxOps, Duration: c.RunLength,
		RateBytes: float64(c.Throughput), MaxBacklog: spec.Size(c.MaxBacklog),
	}
}

// Object is one object a run prepares.
type Object struct {
	Name string
	Size int64
}

// Gen is one load-gen run's objects and the data that fills them. Not
// safe for concurrent use.
type Gen struct {
	cfg  Config
	objs []Object
	data []byte // what the fill writes: random bytes, sliced at random places
	rnd  *rand.Rand
}

// fillChunk is the largest write Prepare makes: whole objects could exceed
// the OSDs' write size limit (osd_max_write_size, 90M by default).
const fillChunk = 4 << 20

// New picks the sizes of cfg.Objects objects named prefix+"obj"+N, as
// the workload's object set, and makes the data that fills them. cfg must
// be valid.
func New(cfg Config, prefix string, seed uint64) *Gen {
	g := &Gen{cfg: cfg, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	w := cfg.Workload(spec.Target{})
	g.objs = make([]Object, cfg.Objects)
	for i, size := range workload.ObjectSizes(&w, seed) {
		g.objs[i] = Object{Name: prefix + "obj" + strconv.Itoa(i), Size: size}
	}
	// Room past the longest write so that writes of the same length send
	// different bytes.
	g.data = make([]byte, fillChunk+1<<20)
	var key [32]byte
	for i := range key {
		key[i] = byte(g.rnd.Uint32())
	}
	_, _ = rand.NewChaCha8(key).Read(g.data) // cannot fail
	return g
}

// Objects returns the run's objects, by the index the workload's ops use.
func (g *Gen) Objects() []Object { return g.objs }

// Names returns the objects' names, by index.
func (g *Gen) Names() []string {
	names := make([]string, len(g.objs))
	for i, o := range g.objs {
		names[i] = o.Name
	}
	return names
}

// Sizes returns the objects' sizes, by index.
func (g *Gen) Sizes() []int64 {
	sizes := make([]int64, len(g.objs))
	for i, o := range g.objs {
		sizes[i] = o.Size
	}
	return sizes
}

// Bytes returns the size of all the objects: what Prepare writes.
func (g *Gen) Bytes() int64 {
	var n int64
	for _, o := range g.objs {
		n += o.Size
	}
	return n
}

// Prepare writes every object whole with random data, up to MaxOps
// writes in flight on q (rados load-gen's throttle), whose ops address
// the objects by index. It stops issuing at ctx's end or the first failed
// write; on a failure it returns once the writes in flight have
// completed, and on ctx's end it leaves them to q's Close.
func (g *Gen) Prepare(ctx context.Context, q engine.Queue) error {
	ops := make([]engine.Op, g.cfg.MaxOps)
	free := make([]*engine.Op, len(ops))
	for i := range ops {
		free[i] = &ops[i]
	}
	done := make([]*engine.Op, len(ops))
	inFlight, obj, off := 0, 0, int64(0)
	var failed error
	for {
		for failed == nil && ctx.Err() == nil && len(free) > 0 && obj < len(g.objs) {
			o := g.objs[obj]
			n := min(fillChunk, o.Size-off)
			at := g.rnd.Int64N(int64(len(g.data)) - n + 1)
			op := free[len(free)-1]
			*op = engine.Op{Kind: engine.Write, Object: int64(obj), Offset: off, Buf: g.data[at : at+n]}
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
		// Once a write failed, the rest are waited for whatever ctx says.
		wait := ctx
		if failed != nil {
			wait = context.WithoutCancel(ctx)
		}
		n, err := q.Reap(wait, 1, done)
		for _, op := range done[:n] {
			if op.Err != nil && failed == nil {
				failed = fmt.Errorf("writing %s: %w", g.objs[op.Object].Name, op.Err)
			}
			free = append(free, op)
			inFlight--
		}
		if err != nil {
			return errors.Join(failed, err)
		}
	}
	if failed != nil {
		return failed
	}
	return ctx.Err()
}
