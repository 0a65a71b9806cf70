// Package workload turns a spec.Workload into a stream of operations:
// which kind, which file or object, which offset. It also owns the data
// written, so that reads can be verified.
package workload

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// Shared is the state the generators of one run share: the cursors of
// object workloads, where every worker takes the next object in turn, and
// the sizes of a set of objects of their own sizes. Its methods are safe
// for concurrent use.
type Shared struct {
	// ObjectSizes, when set, is each object's size, by index, of a
	// session's engine.ObjectSet; generators only read it.
	ObjectSizes []int64
	// Steer, when set, turns the direction a mixed workload's op drew
	// into the one to issue (reads and writes on schedules of their own
	// go to whichever is due). Generators call it concurrently.
	Steer func(drawn engine.OpKind) engine.OpKind

	writes atomic.Int64
	reads  atomic.Int64
}

// Generator makes the operations of one worker. It is not safe for
// concurrent use; a worker serialises access to it.
type Generator struct {
	w      *spec.Workload
	geo    engine.Geometry
	shared *Shared
	rng    *rand.Rand
	// regions are the worker's files on a block target; current is the
	// one in use, for sinceSwitch ops so far.
	regions        []region
	current        int
	sinceSwitch    int
	service        spec.FileService
	switchEvery    int
	opsSinceOffset int64 // ops since the start, for NewOffsetEvery

	opsPerObject int64
	readable     int64   // objects reads may address
	writable     int64   // object key space of random writes
	sizes        []int64 // each object's, for a set of objects of their own sizes
}

// New returns the generator for one worker. seed makes random sequences
// reproducible: the same seed, workload and worker give the same ops.
func New(w *spec.Workload, geo engine.Geometry, worker int, shared *Shared, seed uint64) *Generator {
	g := &Generator{
		w: w, geo: geo, shared: shared,
		rng: rand.New(rand.NewPCG(seed, uint64(worker)+1)),
	}
	bs := int64(w.BlockSize)
	switch geo.Layout {
	case engine.Blocks:
		g.newRegions(worker)
	case engine.Objects:
		g.sizes = shared.ObjectSizes
		objSize := int64(w.EffectiveObjectSize())
		if geo.ObjectSize > 0 {
			objSize = geo.ObjectSize
		}
		g.opsPerObject = max(objSize/bs, 1)
		g.readable = geo.ObjectCount
		if w.Objects > 0 && (g.readable == 0 || w.Objects < g.readable) {
			g.readable = min(w.Objects, geo.ObjectCount)
		}
		g.writable = w.Objects
		if g.writable == 0 {
			g.writable = geo.ObjectCount
		}
	}
	return g
}

// Next fills op's Kind, File, Object and Offset, and sets op.Buf's length
// to the op's, within its capacity (BlockSize at least). It returns false
// when the workload has nothing more to do: a sequential object write
// reached its object limit, or there is no object to read.
func (g *Generator) Next(op *engine.Op) bool {
	kind := engine.Write
	switch r := g.w.ReadPercent; {
	case r >= 100:
		kind = engine.Read
	case r > 0 && g.rng.IntN(100) < r:
		kind = engine.Read
	}
	if g.shared.Steer != nil && g.w.ReadPercent > 0 && g.w.ReadPercent < 100 {
		kind = g.shared.Steer(kind)
	}
	op.Kind = kind
	op.Err = nil
	op.Completed = 0
	if g.geo.Layout == engine.Blocks {
		g.nextBlock(op, kind)
		return true
	}
	bs := int64(g.w.BlockSize)
	n := bs
	if lo := int64(g.w.MinBlockSize); lo > 0 && lo < bs {
		n = lo + g.rng.Int64N(bs-lo+1)
	}
	op.Buf = op.Buf[:n]
	if g.sizes != nil {
		g.nextSized(op)
		return true
	}
	return g.nextObject(op, kind, bs)
}

// nextSized addresses a random byte range of a random object of a set of
// objects of their own sizes, as rados load-gen's gen_op does: the length
// cut to the object's size, the offset moved back so that the op ends
// inside the object, then aligned down.
func (g *Generator) nextSized(op *engine.Op) {
	obj := g.rng.IntN(len(g.sizes))
	size := g.sizes[obj]
	n := min(int64(len(op.Buf)), size)
	off := g.rng.Int64N(size + 1)
	if off+n > size {
		off = size - n
	}
	if a := int64(g.w.OffsetAlign); a > 0 {
		off -= off % a
	}
	op.File, op.Object, op.Offset, op.Buf = 0, int64(obj), off, op.Buf[:n]
}

// ObjectSizes draws the sizes of a set of w.Objects objects of their own
// sizes, uniform in [w.MinObjectSize, w.EffectiveObjectSize()]: what an
// engine that prepares the set makes and reports. The same seed gives the
// same sizes.
func ObjectSizes(w *spec.Workload, seed uint64) []int64 {
	rng := rand.New(rand.NewPCG(seed, 0))
	lo, hi := int64(w.MinObjectSize), int64(w.EffectiveObjectSize())
	sizes := make([]int64, w.Objects)
	for i := range sizes {
		sizes[i] = lo + rng.Int64N(hi-lo+1)
	}
	return sizes
}

func (g *Generator) nextObject(op *engine.Op, kind engine.OpKind, bs int64) bool {
	var k int64 // op number in the object space, opsPerObject per object
	if kind == engine.Read && g.readable == 0 && g.w.ReadPercent < 100 {
		// A mixed workload on an empty target writes until there is
		// something to read.
		kind, op.Kind = engine.Write, engine.Write
	}
	switch {
	case kind == engine.Read && g.readable == 0:
		return false
	case kind == engine.Read && g.w.Pattern == spec.Random:
		k = g.rng.Int64N(g.readable * g.opsPerObject)
	case kind == engine.Read:
		k = (g.shared.reads.Add(1) - 1) % (g.readable * g.opsPerObject)
	case g.w.Pattern == spec.Random && g.writable > 0:
		k = g.rng.Int64N(g.writable * g.opsPerObject)
	default:
		// Sequential writes create objects one after another, as rados
		// bench does, until the object limit, or start over if cycling.
		k = g.shared.writes.Add(1) - 1
		if limit := g.w.Objects * g.opsPerObject; limit > 0 && k >= limit {
			if !g.w.Cycle {
				return false
			}
			k %= limit
		}
	}
	op.File = 0
	op.Object = k / g.opsPerObject
	op.Offset = (k % g.opsPerObject) * bs
	return true
}
