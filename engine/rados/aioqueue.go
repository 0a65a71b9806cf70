//go:build ceph

package rados

/*
#cgo LDFLAGS: -lrados
#cgo CXXFLAGS: -std=c++17 -O2
#include "aio.h"
*/
import "C"

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/ceph/go-ceph/rados"

	"github.com/cephbench/cephbench/engine"
)

// aioQueue is the Go side of aio.cc, shared by the engine's queue and
// load-gen's: slots, buffers pinned while C holds them, completion times
// converted to engine.Now, and the eventfd a waiting goroutine parks on.
// Not safe for concurrent use.
type aioQueue struct {
	q      *C.cbq
	depth  int // ops in flight in librados, at most
	slots  int // depth plus the spare ones that may wait staged
	free   []int
	pins   []runtime.Pinner
	oids   [][]byte      // each slot's C oid buffer
	offset time.Duration // engine.Now() minus CLOCK_MONOTONIC

	doneSlots []C.int
	rets      []C.int
	starts    []C.int64_t
	ends      []C.int64_t

	// ready becomes readable when completions arrive; waiting on it in
	// the Go runtime's poller holds no thread and does not make the
	// runtime hand its processor around on every op.
	ready *os.File
	tick  [8]byte
}

// newAIOQueue returns a queue of depth ops in flight, with spare slots
// more for ops that wait staged once stage turns staging on.
func newAIOQueue(ioctx *rados.IOContext, depth, spare int) (*aioQueue, error) {
	if depth < 1 || spare < 0 {
		return nil, fmt.Errorf("rados: invalid queue depth %d+%d", depth, spare)
	}
	cq := C.cbq_new(C.rados_ioctx_t(ioctx.Pointer()), C.int(depth), C.int(spare))
	if cq == nil {
		return nil, errors.New("rados: out of memory for the aio queue")
	}
	n := depth + spare
	a := &aioQueue{
		q: cq, depth: depth, slots: n, pins: make([]runtime.Pinner, n), oids: make([][]byte, n),
		doneSlots: make([]C.int, n), rets: make([]C.int, n), starts: make([]C.int64_t, n), ends: make([]C.int64_t, n),
	}
	a.offset = engine.Now() - time.Duration(C.cbq_now())
	a.ready = os.NewFile(uintptr(C.cbq_eventfd(cq)), "rados completions")
	for i := n - 1; i >= 0; i-- {
		a.free = append(a.free, i)
		a.oids[i] = unsafe.Slice((*byte)(unsafe.Pointer(C.cbq_oid(cq, C.int(i)))), C.CBQ_OID_MAX)
	}
	return a, nil
}

// inFlight counts the ops submitted and not reaped, staged ones included.
func (a *aioQueue) inFlight() int { return a.slots - len(a.free) }

// hint sends rados bench's allocation hint with every write; call it
// before the first submit.
func (a *aioQueue) hint(objectSize, writeSize int64) {
	C.cbq_hint(a.q, C.uint64_t(objectSize), C.uint64_t(writeSize))
}

// stage turns staging on until cutoff (on the engine.Now clock).
func (a *aioQueue) stage(cutoff time.Duration) { C.cbq_stage(a.q, C.int64_t(cutoff-a.offset)) }

// unstage turns staging off; the staged ops come back unissued.
func (a *aioQueue) unstage() { C.cbq_unstage(a.q) }

// aioOp is what submit asks of an object.
type aioOp C.int

const (
	aioRead   aioOp = C.CBQ_READ
	aioWrite  aioOp = C.CBQ_WRITE
	aioRemove aioOp = C.CBQ_REMOVE
)

// submit starts op on the object whose name name appends to the slot's C
// buffer (no allocation per op), and returns the slot. A read fills buf
// at off, a write sends buf to off without copying it (buf must not change
// until the slot is reaped), and a remove takes no buffer.
func (a *aioQueue) submit(name func([]byte) []byte, op aioOp, buf []byte, off int64) (int, error) {
	if len(a.free) == 0 {
		return 0, fmt.Errorf("rados: queue of %d slots is full", a.slots)
	}
	if len(buf) == 0 && op != aioRemove {
		return 0, errors.New("rados: empty buffer")
	}
	slot := a.free[len(a.free)-1]
	oid := name(a.oids[slot][:0])
	if len(oid) >= C.CBQ_OID_MAX {
		return 0, fmt.Errorf("rados: object name %q is too long", oid)
	}
	a.oids[slot][len(oid)] = 0
	var p *C.char
	if len(buf) > 0 {
		a.pins[slot].Pin(&buf[0])
		p = (*C.char)(unsafe.Pointer(&buf[0]))
	}
	if r := C.cbq_submit(a.q, C.int(slot), C.int(op), p, C.size_t(len(buf)), C.uint64_t(off)); r < 0 {
		a.pins[slot].Unpin()
		return 0, syscall.Errno(-r)
	}
	a.free = a.free[:len(a.free)-1]
	return slot, nil
}

// reaped is a finished op: its slot, bytes or -errno (or notIssued), and
// when it started and ended on the engine.Now clock.
type reaped struct {
	slot, ret  int
	start, end time.Duration
}

// notIssued is the ret of a staged op that never started.
const notIssued = C.CBQ_NOT_ISSUED

// reap hands up to limit finished ops to done, without waiting, and
// returns how many.
func (a *aioQueue) reap(limit int, done func(reaped)) int {
	limit = min(limit, a.inFlight())
	if limit <= 0 {
		return 0
	}
	got := int(C.cbq_reap(a.q, C.int(limit), &a.doneSlots[0], &a.rets[0], &a.starts[0], &a.ends[0]))
	for k := range got {
		r := reaped{slot: int(a.doneSlots[k]), ret: int(a.rets[k]), end: time.Duration(a.ends[k]) + a.offset}
		if a.starts[k] != 0 {
			r.start = time.Duration(a.starts[k]) + a.offset
		}
		a.pins[r.slot].Unpin()
		a.free = append(a.free, r.slot)
		done(r)
	}
	return got
}

// wait blocks until completions may have arrived, or until deadline.
func (a *aioQueue) wait(deadline time.Time) {
	_ = a.ready.SetReadDeadline(deadline)
	_, _ = a.ready.Read(a.tick[:]) // a wake-up or the deadline: both mean look again
}

// close frees the queue; every op must have been reaped.
func (a *aioQueue) close() error {
	C.cbq_free(a.q)
	return a.ready.Close()
}

// removeDepth is how many removes removeAll keeps in flight.
const removeDepth = 64

// removeAll removes count objects, the i-th named by what name appends to
// b, with removeDepth aio removes in flight. It goes on past failures
// until ctx ends; an object already gone is not a failure. It returns an
// error counting the failures, wrapping the first, joined with ctx's.
func removeAll(ctx context.Context, ioctx *rados.IOContext, count int, name func(i int, b []byte) []byte) error {
	// As many more staged: the next remove starts from the callback of
	// the last, and this goroutine wakes once per batch of completions.
	a, err := newAIOQueue(ioctx, removeDepth, removeDepth)
	if err != nil {
		return err
	}
	a.stage(1 << 62)
	var first error
	failed := 0
	fail := func(oid []byte, err error) {
		if failed == 0 {
			first = fmt.Errorf("removing %s: %w", oid, err)
		}
		failed++
	}
	check := func(r reaped) {
		if r.ret < 0 && syscall.Errno(-r.ret) != syscall.ENOENT {
			oid := a.oids[r.slot]
			fail(oid[:max(bytes.IndexByte(oid, 0), 0)], syscall.Errno(-r.ret))
		}
	}
	for i := 0; ; {
		for ; i < count && a.inFlight() < a.slots && ctx.Err() == nil; i++ {
			if _, err := a.submit(func(b []byte) []byte { return name(i, b) }, aioRemove, nil, 0); err != nil {
				fail(name(i, nil), err)
			}
		}
		if a.inFlight() == 0 {
			break
		}
		if a.reap(a.slots, check) == 0 {
			a.wait(time.Now().Add(time.Second))
		}
	}
	if err := a.close(); err != nil {
		return err
	}
	if failed > 1 {
		first = fmt.Errorf("%d objects not removed, the first: %w", failed, first)
	}
	return errors.Join(first, ctx.Err())
}
