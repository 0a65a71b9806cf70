package workload

import (
	"errors"
	"math/rand/v2"
	"sync/atomic"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// Source makes the operations of one worker. Next is not safe for
// concurrent use (a worker serialises it); Done may run concurrently
// with Next and with other Dones.
type Source interface {
	// Next fills op for the worker's next operation, or returns false
	// when the workload has nothing more to do.
	Next(op *engine.Op) bool
	// Done tells the source that op, made by Next, ended with err
	// (engine.ErrNotIssued if it never started).
	Done(op *engine.Op, err error)
}

var (
	_ Source = (*Generator)(nil)
	_ Source = (*MixGenerator)(nil)
)

// Done does nothing: a read/write workload keeps no state across ops.
func (g *Generator) Done(*engine.Op, error) {}

// Reread replays the first n ops of src, a write-only workload's source
// made again as it was, as reads: the reads that check what it wrote, in
// the order written (fio's verify phase).
func Reread(src Source, n int64) Source { return &reread{src: src, left: n} }

type reread struct {
	src  Source
	left int64
}

func (r *reread) Next(op *engine.Op) bool {
	if r.left <= 0 || !r.src.Next(op) {
		return false
	}
	r.left--
	op.Kind = engine.Read
	return true
}

func (r *reread) Done(op *engine.Op, err error) { r.src.Done(op, err) }

// Share is one op kind of a mix, resolved to the kind a session serves.
type Share struct {
	Kind    engine.OpKind
	Percent int
}

// Mix is the state the generators of one mixed run share: its shares,
// its object set and the puts made so far. Its methods are safe for
// concurrent use.
type Mix struct {
	shares []Share
	objs   *Objects
	bs     int64
	// fill: a mix that lists Write (even at 0%) puts when there is
	// nothing to get, stat or delete; one that does not stops.
	fill bool
	// limit bounds the puts of the run (0: none); puts counts them.
	limit int64
	puts  atomic.Int64
}

// NewMix returns the mix of shares (which sum to 100) over objs, with
// the ops and put limit of w: every op addresses a whole object of
// w.BlockSize at offset 0, and the puts create at most w.Objects
// objects.
func NewMix(shares []Share, w *spec.Workload, objs *Objects) *Mix {
	m := &Mix{shares: shares, objs: objs, bs: int64(w.BlockSize), limit: w.Objects}
	for _, s := range shares {
		m.fill = m.fill || s.Kind == engine.Write
	}
	return m
}

// Worker returns the generator of one worker. seed makes the kinds and
// objects drawn reproducible for the same object set.
func (m *Mix) Worker(worker int, seed uint64) *MixGenerator {
	return &MixGenerator{m: m, rng: rand.New(rand.NewPCG(seed, uint64(worker)+1))}
}

// MixGenerator draws one worker's ops from a Mix. Next is not safe for
// concurrent use; Done is.
type MixGenerator struct {
	m   *Mix
	rng *rand.Rand
}

// draw picks the next op's kind by the shares.
func (g *MixGenerator) draw() engine.OpKind {
	x := g.rng.IntN(100)
	for _, s := range g.m.shares {
		if x < s.Percent {
			return s.Kind
		}
		x -= s.Percent
	}
	return g.m.shares[len(g.m.shares)-1].Kind // unreachable: the shares sum to 100
}

// Next draws op's kind and object: a get or stat holds a live object
// until Done, a delete takes one no op reads, a put numbers a new one. It
// returns false when there is nothing to do: no object to get, stat or
// delete and no put to fill in, or the put limit reached.
func (g *MixGenerator) Next(op *engine.Op) bool {
	m := g.m
	kind := g.draw()
	var obj int64
	ok := true
	switch kind {
	case engine.Read, engine.Stat:
		obj, ok = m.objs.pick(g.rng)
	case engine.Delete:
		obj, ok = m.objs.take(g.rng)
	}
	if !ok && m.fill {
		kind, ok = engine.Write, true
	}
	if ok && kind == engine.Write {
		if m.limit > 0 && m.puts.Add(1) > m.limit {
			return false
		}
		obj = m.objs.create()
	}
	if !ok {
		return false
	}
	op.Kind, op.File, op.Object, op.Offset = kind, 0, obj, 0
	op.Err, op.Completed = nil, 0
	if kind == engine.Read || kind == engine.Write {
		op.Buf = op.Buf[:m.bs]
	} else {
		op.Buf = op.Buf[:0]
	}
	return true
}

// Done releases a get's or stat's object, makes a put's object available
// once it is written, and gives back the object of a delete that never
// started (err engine.ErrNotIssued).
func (g *MixGenerator) Done(op *engine.Op, err error) {
	switch op.Kind {
	case engine.Read, engine.Stat:
		g.m.objs.release(op.Object)
	case engine.Write:
		if err == nil {
			g.m.objs.add(op.Object)
		}
	case engine.Delete:
		if errors.Is(err, engine.ErrNotIssued) {
			g.m.objs.add(op.Object)
		}
	}
}
