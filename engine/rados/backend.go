//go:build ceph

package rados

/*
#cgo LDFLAGS: -lrados
#cgo CFLAGS: -I${SRCDIR}/../../internal/io/aioq
#cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR}/../../internal/io/aioq
#include "backend.h"

static void *cbrados_issue_fn(void) { return (void *)cbrados_issue; }
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/ceph/go-ceph/rados"

	"github.com/cephbench/cephbench/internal/failpoint"
	"github.com/cephbench/cephbench/internal/io/aioq"
)

// aioQueue is the queue core (internal/io/aioq) over the librados backend
// (aio.cc), shared by the engine's queues (rados bench's objects and
// load-gen's) and removeAll. Not safe for concurrent use.
type aioQueue struct {
	*aioq.Queue
	backend *C.cbrados
}

// newAIOQueue returns a queue on ioctx's pool of depth ops in flight, with
// spare slots more for ops that wait staged once Stage turns staging on.
func newAIOQueue(ioctx *rados.IOContext, depth, spare int) (*aioQueue, error) {
	b := C.cbrados_new(C.rados_ioctx_t(ioctx.Pointer()), C.int(max(depth+spare, 1)))
	if b == nil {
		return nil, errors.New("rados: out of memory for the aio queue")
	}
	q, err := aioq.New(depth, spare, C.cbrados_issue_fn(), unsafe.Pointer(b))
	if err != nil {
		C.cbrados_free(b)
		return nil, fmt.Errorf("rados: %w", err)
	}
	return &aioQueue{Queue: q, backend: b}, nil
}

// hint sends rados bench's allocation hint with every write; call it
// before the first submit.
func (a *aioQueue) hint(objectSize, writeSize int64) {
	C.cbrados_hint(a.backend, C.uint64_t(objectSize), C.uint64_t(writeSize))
}

// close frees the queue, then its backend; every op must have been
// reaped.
func (a *aioQueue) close() error {
	if err := a.Queue.Close(); err != nil {
		return err
	}
	return a.freeBackend()
}

// closer is the Closed hook of an engine queue on a: once the queue core
// is freed it frees the backend, and it tells queues the queue is closed.
func (a *aioQueue) closer(queues *sync.WaitGroup) func(freed bool) error {
	return func(freed bool) error {
		defer queues.Done()
		if !freed {
			return nil
		}
		return a.freeBackend()
	}
}

// freeBackend frees the backend of a queue already closed.
func (a *aioQueue) freeBackend() error {
	C.cbrados_free(a.backend)
	return nil
}

// removeDepth is how many removes removeAll keeps in flight.
const removeDepth = 64

// removeAll removes count objects, the i-th named by what name appends to
// b, with removeDepth aio removes in flight. It goes on past failures
// until ctx ends, or until a remove times out: the cluster is not
// answering, and every remove left would wait as long. An object already
// gone is not a failure. It returns an error counting the failures and
// the removes not tried, wrapping the first failure, joined with ctx's.
func removeAll(ctx context.Context, ioctx *rados.IOContext, count int, name func(i int, b []byte) []byte) error {
	// As many more staged: the next remove starts from the callback of
	// the last, and this goroutine wakes once per batch of completions.
	a, err := newAIOQueue(ioctx, removeDepth, removeDepth)
	if err != nil {
		return err
	}
	a.Stage(1 << 62)
	var first error
	failed := 0
	fail := func(oid []byte, err error) {
		if failed == 0 {
			first = fmt.Errorf("removing %s: %w", oid, err)
		}
		failed++
	}
	timedOut := false
	check := func(r aioq.Reaped) {
		if errno := syscall.Errno(-r.Ret); r.Ret < 0 && errno != syscall.ENOENT {
			fail(a.Name(r.Slot), errno)
			timedOut = timedOut || errno == syscall.ETIMEDOUT
		}
	}
	i := 0
	for {
		for ; i < count && a.InFlight() < a.Slots() && ctx.Err() == nil && !timedOut; i++ {
			failpoint.Hit(failpoint.Remove)
			if _, err := a.Submit(func(b []byte) []byte { return name(i, b) }, aioq.Remove, nil, 0); err != nil {
				fail(name(i, nil), err)
			}
		}
		if a.InFlight() == 0 {
			break
		}
		if a.Reap(a.Slots(), check) == 0 {
			a.Wait(time.Now().Add(time.Second))
		}
	}
	if err := a.close(); err != nil {
		return err
	}
	if failed > 1 {
		first = fmt.Errorf("%d objects not removed, the first: %w", failed, first)
	}
	if timedOut && i < count {
		first = fmt.Errorf("%w; %d more not tried, as a remove timed out", first, count-i)
	}
	return errors.Join(first, ctx.Err())
}
