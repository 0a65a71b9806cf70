package aioq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/cephbench/cephbench/engine"
)

// reapWait is how long EngineQueue.Reap waits for a completion before it
// checks its context again.
const reapWait = 100 * time.Millisecond

// StagedBytes bounds the data of a queue's staged ops: staging saves a
// wake-up of the reaper per op, which counts for small ops and costs
// nothing next to a large one, so a queue of large blocks stages few and
// its memory is not doubled.
const StagedBytes = 4 << 20

// SpareFor is how many ops a queue of depth ops of opSize bytes stages:
// as many as its depth, within StagedBytes.
func SpareFor(depth int, opSize int64) int {
	if depth < 1 {
		return 0
	}
	return int(min(int64(depth), StagedBytes/max(opSize, 1)))
}

// Hooks are what an engine adds to a Queue to make it an engine queue.
// Each may be nil (Base zero).
type Hooks struct {
	// Base is added to every op's offset as the op is issued: where the
	// session's region of its target begins. The op keeps its own.
	Base int64
	// Name appends the name of op's object to b, for object stores.
	Name func(b []byte, op *engine.Op) []byte
	// Describe names op's target in error messages.
	Describe func(op *engine.Op) string
	// Written is told of every write that completed.
	Written func(op *engine.Op)
	// Closed runs when the queue is closed; freed says whether the queue
	// core was freed, and so whether its backend may be (an op still in
	// flight would complete into it).
	Closed func(freed bool) error
}

// EngineQueue is an engine.StagingQueue over a Queue: the ops a session's
// runner submits, timed by the queue core. Not safe for concurrent use.
type EngineQueue struct {
	q      *Queue
	hooks  Hooks
	ops    []*engine.Op // by slot; nil when free
	closed bool
}

var _ engine.StagingQueue = (*EngineQueue)(nil)

// NewEngineQueue wraps q, which it then owns.
func NewEngineQueue(q *Queue, hooks Hooks) *EngineQueue {
	return &EngineQueue{q: q, hooks: hooks, ops: make([]*engine.Op, q.Slots())}
}

// Spare is how many ops beyond the depth the queue stages.
func (e *EngineQueue) Spare() int { return e.q.Slots() - e.q.Depth() }

// Stage turns staging on until cutoff. A staged op starts from the
// completion callback of the op it replaces.
func (e *EngineQueue) Stage(cutoff time.Duration) { e.q.Stage(cutoff) }

// Submit starts op asynchronously.
func (e *EngineQueue) Submit(op *engine.Op) error {
	var name func([]byte) []byte
	if e.hooks.Name != nil {
		name = func(b []byte) []byte { return e.hooks.Name(b, op) }
	}
	kind := Read
	if op.Kind == engine.Write {
		kind = Write
	}
	slot, err := e.q.Submit(name, kind, op.Buf, e.hooks.Base+op.Offset)
	if err != nil {
		return err
	}
	e.ops[slot] = op
	return nil
}

// Reap waits for at least least completed ops (or ctx's end) and returns
// up to len(done) of them, with Err, Completed and Issued set.
func (e *EngineQueue) Reap(ctx context.Context, least int, done []*engine.Op) (int, error) {
	if least > e.q.InFlight() {
		return 0, fmt.Errorf("reap of %d ops with only %d in flight", least, e.q.InFlight())
	}
	n := 0
	for {
		got := e.q.Reap(len(done)-n, func(r Reaped) {
			done[n] = e.complete(r)
			n++
		})
		if n >= least || n == len(done) {
			return n, nil
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if got == 0 {
			e.q.Wait(time.Now().Add(reapWait))
		}
	}
}

func (e *EngineQueue) complete(r Reaped) *engine.Op {
	op := e.ops[r.Slot]
	e.ops[r.Slot] = nil
	op.Completed, op.Issued = r.End, r.Start
	switch {
	case r.Ret == NotIssued:
		op.Err, op.Issued = engine.ErrNotIssued, 0
	case r.Ret < 0:
		op.Err = syscall.Errno(-r.Ret)
	case op.Kind == engine.Read && r.Ret < len(op.Buf):
		what := fmt.Sprintf("offset %d", op.Offset)
		if e.hooks.Describe != nil {
			what = e.hooks.Describe(op)
		}
		op.Err = fmt.Errorf("%s: read %d of %d bytes: %w", what, r.Ret, len(op.Buf), io.ErrUnexpectedEOF)
	default:
		op.Err = nil
		if op.Kind == engine.Write && e.hooks.Written != nil {
			e.hooks.Written(op)
		}
	}
	return op
}

// Close returns the staged ops unissued, waits for the ops in flight and
// frees the queue, then its backend.
func (e *EngineQueue) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	e.q.Unstage()
	done := make([]*engine.Op, e.q.Slots())
	for e.q.InFlight() > 0 {
		if _, err := e.Reap(context.Background(), 1, done); err != nil {
			break // Close below refuses, with the count in flight
		}
	}
	err := e.q.Close()
	if e.hooks.Closed != nil {
		err = errors.Join(err, e.hooks.Closed(err == nil))
	}
	return err
}
