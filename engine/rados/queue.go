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

// queue is the engine's aio queue on a session's pool. Not safe for
// concurrent use.
type queue struct {
	s      *Session
	aio    *aioQueue
	ops    []*engine.Op // by slot; nil when free
	closed bool
}

// NewQueue returns an aio queue of the given depth on the session's pool.
func (s *Session) NewQueue(depth int) (engine.Queue, error) {
	aio, err := newAIOQueue(s.ioctx, depth)
	if err != nil {
		return nil, err
	}
	s.queues.Add(1)
	return &queue{s: s, aio: aio, ops: make([]*engine.Op, depth)}, nil
}

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
		got := q.aio.reap(len(done)-n, func(slot, ret int, end time.Duration) {
			done[n] = q.complete(slot, ret, end)
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

func (q *queue) complete(slot, ret int, end time.Duration) *engine.Op {
	op := q.ops[slot]
	q.ops[slot] = nil
	op.Completed = end
	switch {
	case ret < 0:
		op.Err = syscall.Errno(-ret)
	case op.Kind == engine.Read && ret < len(op.Buf):
		op.Err = fmt.Errorf("%s: read %d of %d bytes at %d: %w",
			radosbench.ObjectName(q.s.prefix, op.Object), ret, len(op.Buf), op.Offset, io.ErrUnexpectedEOF)
	default:
		op.Err = nil
		if op.Kind == engine.Write {
			q.s.noteWrite(op)
		}
	}
	return op
}

// Close waits for the ops in flight and frees the queue.
func (q *queue) Close() error {
	if q.closed {
		return nil
	}
	q.closed = true
	defer q.s.queues.Done()
	done := make([]*engine.Op, q.aio.depth)
	for q.aio.inFlight() > 0 {
		if _, err := q.Reap(context.Background(), 1, done); err != nil {
			return err
		}
	}
	return q.aio.close()
}
