//go:build ceph

package rados

/*
#cgo LDFLAGS: -lrados
#include <stdlib.h>
#include "aio.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/radosbench"
)

// reapWait is how long Reap waits for a completion before it checks the
// context again.
const reapWait = 100 * time.Millisecond

// queue is a librados aio queue (aio.c). Not safe for concurrent use.
type queue struct {
	s      *Session
	q      *C.cbq
	depth  int
	ops    []*engine.Op // by slot; nil when free
	free   []int
	pins   []runtime.Pinner // keep each in-flight buffer where C can see it
	oids   [][]byte         // each slot's C oid buffer
	offset time.Duration    // engine.Now() minus CLOCK_MONOTONIC

	slots  []C.int
	rets   []C.int
	ends   []C.int64_t
	closed bool

	// ready becomes readable when completions arrive; Reap waits on it in
	// the Go runtime's poller, so a waiting queue holds no thread and
	// does not make the runtime hand its processor around on every op.
	ready *os.File
	tick  [8]byte
}

// NewQueue returns an aio queue of the given depth on the session's pool.
func (s *Session) NewQueue(depth int) (engine.Queue, error) {
	if depth < 1 {
		return nil, fmt.Errorf("rados: invalid queue depth %d", depth)
	}
	cq := C.cbq_new(C.rados_ioctx_t(s.ioctx.Pointer()), C.int(depth))
	if cq == nil {
		return nil, errors.New("rados: out of memory for the aio queue")
	}
	q := &queue{
		s: s, q: cq, depth: depth,
		ops: make([]*engine.Op, depth), pins: make([]runtime.Pinner, depth),
		oids:  make([][]byte, depth),
		slots: make([]C.int, depth), rets: make([]C.int, depth), ends: make([]C.int64_t, depth),
	}
	q.offset = engine.Now() - time.Duration(C.cbq_now())
	q.ready = os.NewFile(uintptr(C.cbq_eventfd(cq)), "rados completions")
	for i := depth - 1; i >= 0; i-- {
		q.free = append(q.free, i)
		q.oids[i] = unsafe.Slice((*byte)(unsafe.Pointer(C.cbq_oid(cq, C.int(i)))), C.CBQ_OID_MAX)
	}
	s.queues.Add(1)
	return q, nil
}

// Submit starts op asynchronously.
func (q *queue) Submit(op *engine.Op) error {
	if len(q.free) == 0 {
		return fmt.Errorf("rados: queue of depth %d is full", q.depth)
	}
	if len(op.Buf) == 0 {
		return errors.New("rados: empty buffer")
	}
	slot := q.free[len(q.free)-1]
	// The object name goes straight into the slot's C buffer: no
	// allocation per op.
	oid := append(q.oids[slot][:0], q.s.prefix...)
	oid = append(oid, "_object"...)
	oid = strconv.AppendInt(oid, op.Object, 10)
	if len(oid) >= C.CBQ_OID_MAX {
		return fmt.Errorf("rados: object name %q is too long", oid)
	}
	q.oids[slot][len(oid)] = 0

	write := C.int(0)
	if op.Kind == engine.Write {
		write = 1
	}
	q.pins[slot].Pin(&op.Buf[0])
	r := C.cbq_submit(q.q, C.int(slot), write, (*C.char)(unsafe.Pointer(&op.Buf[0])), C.size_t(len(op.Buf)), C.uint64_t(op.Offset))
	if r < 0 {
		q.pins[slot].Unpin()
		return syscall.Errno(-r)
	}
	q.free = q.free[:len(q.free)-1]
	q.ops[slot] = op
	return nil
}

// Reap waits for at least least completed ops (or ctx's end) and returns up
// to len(done) of them, with Err and Completed set.
func (q *queue) Reap(ctx context.Context, least int, done []*engine.Op) (int, error) {
	inFlight := q.depth - len(q.free)
	if least > inFlight {
		return 0, fmt.Errorf("rados: reap of %d ops with only %d in flight", least, inFlight)
	}
	n := 0
	for {
		limit := min(len(done)-n, q.depth)
		if limit <= 0 {
			return n, nil
		}
		got := int(C.cbq_reap(q.q, C.int(limit), &q.slots[0], &q.rets[0], &q.ends[0]))
		for k := range got {
			done[n] = q.complete(int(q.slots[k]), int(q.rets[k]), int64(q.ends[k]))
			n++
		}
		if n >= least {
			return n, nil
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if got == 0 {
			q.wait()
		}
	}
}

// wait blocks until the ring may hold completions, or reapWait passes.
func (q *queue) wait() {
	_ = q.ready.SetReadDeadline(time.Now().Add(reapWait))
	_, _ = q.ready.Read(q.tick[:]) // a timeout or a wake-up: both mean look again
}

func (q *queue) complete(slot, ret int, endNs int64) *engine.Op {
	op := q.ops[slot]
	q.ops[slot] = nil
	q.pins[slot].Unpin()
	q.free = append(q.free, slot)
	op.Completed = time.Duration(endNs) + q.offset
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
	done := make([]*engine.Op, q.depth)
	for q.depth-len(q.free) > 0 {
		if _, err := q.Reap(context.Background(), 1, done); err != nil {
			return err
		}
	}
	C.cbq_free(q.q)
	return q.ready.Close()
}
