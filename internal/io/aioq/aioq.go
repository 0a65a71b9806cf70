// Package aioq is the Go side of the queue core (aioq.h) that cephbench's
// asynchronous Ceph engines share: a backend in C or C++ starts ops and
// reports completions from its library's callbacks; Queue hands out slots,
// pins the buffers C holds, converts the core's timestamps to the
// engine.Now clock, and waits for completions on the core's eventfd in the
// Go runtime's poller, which holds no OS thread while it waits.
package aioq

/*
#include "aioq.h"

static aioq *aioq_new_from(int depth, int spare, void *issue, void *ctx)
{
	return aioq_new(depth, spare, (aioq_issue_fn)issue, ctx);
}

// Every function of the header, compiled into this package too: the Go
// build cache rebuilds a backend's C code (which includes the header from
// here) only when this package's output changes, so any change to the
// header must change it.
__attribute__((used)) static void *aioq_every_function[] = {
	(void *)aioq_now, (void *)aioq_fifo_push, (void *)aioq_fifo_pop, (void *)aioq_finish_locked,
	(void *)aioq_next_staged_locked, (void *)aioq_issue, (void *)aioq_complete, (void *)aioq_free,
	(void *)aioq_new, (void *)aioq_eventfd, (void *)aioq_name, (void *)aioq_stage,
	(void *)aioq_unstage, (void *)aioq_submit, (void *)aioq_reap,
};
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/cephbench/cephbench/engine"
)

// Op is what a slot's op does.
type Op C.int

// The ops a backend may be asked for.
const (
	Read   Op = C.AIOQ_READ
	Write  Op = C.AIOQ_WRITE
	Remove Op = C.AIOQ_REMOVE
)

// NotIssued is the Ret of a staged op that never started: the cutoff
// passed, or staging ended, first.
const NotIssued = C.AIOQ_NOT_ISSUED

// NameMax bounds a slot's object name, its terminating NUL included.
const NameMax = C.AIOQ_NAME_MAX

// Reaped is a finished op: its slot, bytes or -errno (or NotIssued), and
// when it started and ended on the engine.Now clock (Start zero when not
// issued).
type Reaped struct {
	Slot, Ret  int
	Start, End time.Duration
}

// Queue is a queue of Depth ops in flight and, once Stage is called,
// Slots-Depth more that wait staged. Not safe for concurrent use.
type Queue struct {
	q      *C.aioq
	depth  int
	slots  int
	free   []int
	pins   []runtime.Pinner
	names  [][]byte      // each slot's C name buffer
	offset time.Duration // engine.Now() minus CLOCK_MONOTONIC

	doneSlots []C.int
	rets      []C.int
	starts    []C.int64_t
	ends      []C.int64_t

	ready *os.File // the core's eventfd
	tick  [8]byte
}

// New returns a queue of depth ops in flight and spare more slots for
// staged ops, over a backend: issue is its C aioq_issue_fn and ctx the
// context it is called with, both owned by the caller and valid until
// Close returns.
func New(depth, spare int, issue, ctx unsafe.Pointer) (*Queue, error) {
	if depth < 1 || spare < 0 {
		return nil, fmt.Errorf("aioq: invalid queue depth %d+%d", depth, spare)
	}
	cq := C.aioq_new_from(C.int(depth), C.int(spare), issue, ctx)
	if cq == nil {
		return nil, errors.New("aioq: out of memory or file descriptors for the queue")
	}
	n := depth + spare
	q := &Queue{
		q: cq, depth: depth, slots: n, pins: make([]runtime.Pinner, n), names: make([][]byte, n),
		doneSlots: make([]C.int, n), rets: make([]C.int, n), starts: make([]C.int64_t, n), ends: make([]C.int64_t, n),
	}
	q.offset = clockOffset()
	q.ready = os.NewFile(uintptr(C.aioq_eventfd(cq)), "aioq completions")
	for i := n - 1; i >= 0; i-- {
		q.free = append(q.free, i)
		q.names[i] = unsafe.Slice((*byte)(unsafe.Pointer(C.aioq_name(cq, C.int(i)))), NameMax)
	}
	return q, nil
}

// clockOffset is engine.Now minus CLOCK_MONOTONIC as C reads it: both are
// the same clock, so the offset is the reading of the narrowest of a few
// samples, off by half a cgo call at most.
func clockOffset() time.Duration {
	narrowest, offset := time.Duration(1<<63-1), time.Duration(0)
	for range 5 {
		before := engine.Now()
		c := time.Duration(C.aioq_now())
		after := engine.Now()
		if after-before < narrowest {
			narrowest, offset = after-before, before+(after-before)/2-c
		}
	}
	return offset
}

// Depth is how many ops may be in flight in the backend.
func (q *Queue) Depth() int { return q.depth }

// Slots is Depth plus the slots for staged ops.
func (q *Queue) Slots() int { return q.slots }

// InFlight counts the ops submitted and not reaped, staged ones included.
func (q *Queue) InFlight() int { return q.slots - len(q.free) }

// Stage turns staging on until cutoff (on the engine.Now clock); a cutoff
// beyond the C clock's range means none.
func (q *Queue) Stage(cutoff time.Duration) {
	c := cutoff - q.offset
	if q.offset < 0 && c < cutoff { // overflowed past the largest time
		c = math.MaxInt64
	}
	C.aioq_stage(q.q, C.int64_t(c))
}

// Unstage turns staging off; the staged ops come back NotIssued.
func (q *Queue) Unstage() { C.aioq_unstage(q.q) }

// Submit starts op on a free slot, or stages it, and returns the slot.
// name appends the object's name to the slot's C buffer (no allocation per
// op); it may be nil for a backend that names nothing. A read fills buf at
// off, a write sends buf (which must not change until the slot is
// reaped), and a remove takes no buffer.
func (q *Queue) Submit(name func([]byte) []byte, op Op, buf []byte, off int64) (int, error) {
	if len(q.free) == 0 {
		return 0, fmt.Errorf("aioq: queue of %d slots is full", q.slots)
	}
	if len(buf) == 0 && op != Remove {
		return 0, errors.New("aioq: empty buffer")
	}
	slot := q.free[len(q.free)-1]
	if name != nil {
		n := name(q.names[slot][:0])
		if len(n) >= NameMax {
			return 0, fmt.Errorf("aioq: object name %q is too long", n)
		}
		q.names[slot][len(n)] = 0
	}
	var p *C.char
	if len(buf) > 0 {
		q.pins[slot].Pin(&buf[0])
		p = (*C.char)(unsafe.Pointer(&buf[0]))
	}
	if r := C.aioq_submit(q.q, C.int(slot), C.int(op), p, C.size_t(len(buf)), C.uint64_t(off)); r < 0 {
		q.pins[slot].Unpin()
		return 0, syscall.Errno(-r)
	}
	q.free = q.free[:len(q.free)-1]
	return slot, nil
}

// Name is the object name of the op last submitted on slot.
func (q *Queue) Name(slot int) []byte {
	n := q.names[slot]
	return n[:max(bytes.IndexByte(n, 0), 0)]
}

// Reap hands up to limit finished ops to done, without waiting, and
// returns how many.
func (q *Queue) Reap(limit int, done func(Reaped)) int {
	limit = min(limit, q.InFlight())
	if limit <= 0 {
		return 0
	}
	got := int(C.aioq_reap(q.q, C.int(limit), &q.doneSlots[0], &q.rets[0], &q.starts[0], &q.ends[0]))
	for k := range got {
		r := Reaped{Slot: int(q.doneSlots[k]), Ret: int(q.rets[k]), End: time.Duration(q.ends[k]) + q.offset}
		if q.starts[k] != 0 {
			r.Start = time.Duration(q.starts[k]) + q.offset
		}
		q.pins[r.Slot].Unpin()
		q.free = append(q.free, r.Slot)
		done(r)
	}
	return got
}

// Wait blocks until completions may have arrived, or until deadline.
func (q *Queue) Wait(deadline time.Time) {
	_ = q.ready.SetReadDeadline(deadline)
	_, _ = q.ready.Read(q.tick[:]) // a wake-up or the deadline: both mean look again
}

// Close frees the queue; every op must have been reaped. Closing it again
// does nothing.
func (q *Queue) Close() error {
	if q.q == nil {
		return nil
	}
	if n := q.InFlight(); n > 0 {
		return fmt.Errorf("aioq: closing a queue with %d ops in flight", n)
	}
	C.aioq_free(q.q)
	q.q = nil
	return q.ready.Close()
}
