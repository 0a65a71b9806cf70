//go:build ceph

package rados

/*
#cgo LDFLAGS: -lrados
#include "aio.h"
*/
import "C"

import (
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

// aioQueue is the Go side of aio.c, shared by the engine's queue and
// load-gen's: slots, buffers pinned while C holds them, completion times
// converted to engine.Now, and the eventfd a waiting goroutine parks on.
// Not safe for concurrent use.
type aioQueue struct {
	q      *C.cbq
	depth  int
	free   []int
	pins   []runtime.Pinner
	oids   [][]byte      // each slot's C oid buffer
	offset time.Duration // engine.Now() minus CLOCK_MONOTONIC

	slots []C.int
	rets  []C.int
	ends  []C.int64_t

	// ready becomes readable when completions arrive; waiting on it in
	// the Go runtime's poller holds no thread and does not make the
	// runtime hand its processor around on every op.
	ready *os.File
	tick  [8]byte
}

func newAIOQueue(ioctx *rados.IOContext, depth int) (*aioQueue, error) {
	if depth < 1 {
		return nil, fmt.Errorf("rados: invalid queue depth %d", depth)
	}
	cq := C.cbq_new(C.rados_ioctx_t(ioctx.Pointer()), C.int(depth))
	if cq == nil {
		return nil, errors.New("rados: out of memory for the aio queue")
	}
	a := &aioQueue{
		q: cq, depth: depth, pins: make([]runtime.Pinner, depth), oids: make([][]byte, depth),
		slots: make([]C.int, depth), rets: make([]C.int, depth), ends: make([]C.int64_t, depth),
	}
	a.offset = engine.Now() - time.Duration(C.cbq_now())
	a.ready = os.NewFile(uintptr(C.cbq_eventfd(cq)), "rados completions")
	for i := depth - 1; i >= 0; i-- {
		a.free = append(a.free, i)
		a.oids[i] = unsafe.Slice((*byte)(unsafe.Pointer(C.cbq_oid(cq, C.int(i)))), C.CBQ_OID_MAX)
	}
	return a, nil
}

func (a *aioQueue) inFlight() int { return a.depth - len(a.free) }

// submit starts a read or write of buf at off on the object whose name
// name appends to the slot's C buffer (no allocation per op), and returns
// the slot.
func (a *aioQueue) submit(name func([]byte) []byte, write bool, buf []byte, off int64) (int, error) {
	if len(a.free) == 0 {
		return 0, fmt.Errorf("rados: queue of depth %d is full", a.depth)
	}
	if len(buf) == 0 {
		return 0, errors.New("rados: empty buffer")
	}
	slot := a.free[len(a.free)-1]
	oid := name(a.oids[slot][:0])
	if len(oid) >= C.CBQ_OID_MAX {
		return 0, fmt.Errorf("rados: object name %q is too long", oid)
	}
	a.oids[slot][len(oid)] = 0
	w := C.int(0)
	if write {
		w = 1
	}
	a.pins[slot].Pin(&buf[0])
	if r := C.cbq_submit(a.q, C.int(slot), w, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), C.uint64_t(off)); r < 0 {
		a.pins[slot].Unpin()
		return 0, syscall.Errno(-r)
	}
	a.free = a.free[:len(a.free)-1]
	return slot, nil
}

// reap hands up to limit completions to done (slot, bytes or -errno, end
// time), without waiting, and returns how many.
func (a *aioQueue) reap(limit int, done func(slot, ret int, end time.Duration)) int {
	limit = min(limit, a.inFlight())
	if limit <= 0 {
		return 0
	}
	got := int(C.cbq_reap(a.q, C.int(limit), &a.slots[0], &a.rets[0], &a.ends[0]))
	for k := range got {
		slot := int(a.slots[k])
		a.pins[slot].Unpin()
		a.free = append(a.free, slot)
		done(slot, int(a.rets[k]), time.Duration(a.ends[k])+a.offset)
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
