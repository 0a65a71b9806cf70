//go:build ceph

package rados

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"syscall"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/radosbench"
)

// reapWait is how long Reap waits for a completion before it checks the
// context again.
const reapWait = 100 * time.Millisecond

// stagedBytes bounds the data of a queue's staged ops: staging saves a
// wake-up of the reaper per op, which counts for small ops and costs
// nothing next to a large one, so a queue of large blocks stages few and
// its memory is not doubled.
const stagedBytes = 4 << 20

// queue is the engine's aio queue on a session's pool. Not safe for
// concurrent use.
type queue struct {
	s      *Session
	aio    *aioQueue
	spare  int
	ops    []*engine.Op // by slot; nil when free
	closed bool
}

var _ engine.StagingQueue = (*queue)(nil)

// NewQueue returns an aio queue of the given depth on the session's pool,
// which can stage up to depth more ops (within stagedBytes of data).
func (s *Session) NewQueue(depth int) (engine.Queue, error) {
	spare := 0
	if depth > 0 {
		spare = int(min(int64(depth), stagedBytes/max(s.opSize, 1)))
	}
	aio, err := newAIOQueue(s.ioctx, depth, spare)
	if err != nil {
		return nil, err
	}
	if !s.target.NoHints {
		aio.hint(s.objSize, s.opSize)
	}
	s.queues.Add(1)
	return &queue{s: s, aio: aio, spare: spare, ops: make([]*engine.Op, depth+spare)}, nil
}

// Spare is how many ops beyond the depth the queue stages.
func (q *queue) Spare() int { return q.spare }

// Stage turns staging on until cutoff. A staged op starts from the
// librados completion callback of the op it replaces.
func (q *queue) Stage(cutoff time.Duration) { q.aio.stage(cutoff) }

// Submit starts op asynchronously.
func (q *queue) Submit(op *engine.Op) error {
	name := func(b []byte) []byte {
		b = append(append(b, q.s.prefix...), "_object"...)
		return strconv.AppendInt(b, op.Object, 10)
	}
	kind := aioRead
	if op.Kind == engine.Write {
		kind = aioWrite
	}
	slot, err := q.aio.submit(name, kind, op.Buf, op.Offset)
	if err != nil {
		return err
	}
	q.ops[slot] = op
	return nil
}

// Reap waits for at least least completed ops (or ctx's end) and returns up
// to len(done) of them, with Err and Completed set.
func (q *queue) Reap(ctx context.Context, least int, done []*engine.Op) (int, error) {
	if least > q.aio.inFlight() {
		return 0, fmt.Errorf("rados: reap of %d ops with only %d in flight", least, q.aio.inFlight())
	}
	n := 0
	for {
		got := q.aio.reap(len(done)-n, func(r reaped) {
			done[n] = q.complete(r)
			n++
		})
		if n >= least || n == len(done) {
			return n, nil
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if got == 0 {
			q.aio.wait(time.Now().Add(reapWait))
		}
	}
}

func (q *queue) complete(r reaped) *engine.Op {
	op := q.ops[r.slot]
	q.ops[r.slot] = nil
	op.Completed, op.Issued = r.end, r.start
	switch {
	case r.ret == notIssued:
		op.Err, op.Issued = engine.ErrNotIssued, 0
	case r.ret < 0:
		op.Err = syscall.Errno(-r.ret)
	case op.Kind == engine.Read && r.ret < len(op.Buf):
		op.Err = fmt.Errorf("%s: read %d of %d bytes at %d: %w",
			radosbench.ObjectName(q.s.prefix, op.Object), r.ret, len(op.Buf), op.Offset, io.ErrUnexpectedEOF)
	default:
		op.Err = nil
		if op.Kind == engine.Write {
			q.s.noteWrite(op)
		}
	}
	return op
}

// Close returns the staged ops unissued, waits for the ops in flight and
// frees the queue.
func (q *queue) Close() error {
	if q.closed {
		return nil
	}
	q.closed = true
	defer q.s.queues.Done()
	q.aio.unstage()
	done := make([]*engine.Op, q.aio.slots)
	for q.aio.inFlight() > 0 {
		if _, err := q.Reap(context.Background(), 1, done); err != nil {
			return err
		}
	}
	return q.aio.close()
}
