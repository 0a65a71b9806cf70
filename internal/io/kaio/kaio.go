// Package kaio keeps file reads and writes in flight in the kernel, through
// Linux AIO (the system calls libaio wraps) or io_uring, with system calls
// made from Go: no cgo, and neither libaio nor liburing needed to build.
//
// A Queue is driven by one goroutine. Its caller names each op by a slot
// number below the queue's depth, prepares ops with Prep, hands them to the
// kernel in batches (Submit, or Wait, which submits first) and collects
// completions with Wait. Nothing is allocated per op.
package kaio

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The mechanisms, named as fio names its engines.
const (
	LibAIO  = "libaio"
	IOURing = "io_uring"
)

// MaxDepth is the deepest queue New makes: io_uring's largest completion
// ring.
const MaxDepth = 65536

// Completion is a finished op: its slot, and what the kernel returned, the
// number of bytes transferred (fewer than asked at the end of a file) or a
// negated errno.
type Completion struct {
	Slot int
	Res  int64
}

// Queue is a kernel queue of Depth slots. Its methods are not safe for
// concurrent use. The kernel reads from or writes into a prepared op's
// buffer until Wait returns its completion: the queue keeps the buffer
// referenced until then, but the caller must not reuse, free or unmap it.
type Queue interface {
	// Depth is the number of slots, the most ops prepared or in flight.
	Depth() int
	// Batch is how many ops may be prepared between two calls of Submit
	// or Wait.
	Batch() int
	// Prep prepares a read of len(buf) bytes at off on fd into buf, or a
	// write of buf when write is set, in slot. It fails without effect if
	// slot is out of range or already holds an op, or if Batch ops are
	// prepared already.
	Prep(slot, fd int, write bool, buf []byte, off int64) error
	// Pending is the number of ops prepared and not yet submitted.
	Pending() int
	// InFlight is the number of ops prepared and not yet returned by Wait.
	InFlight() int
	// Submit hands every prepared op to the kernel. An op the kernel
	// refuses at once (a read on a write-only descriptor) completes with
	// the error instead. The error is the queue's own failure.
	Submit() error
	// Wait submits the prepared ops, waits until the number of
	// completions there reaches least or timeout passes (never, if
	// negative), and moves up to len(out) of them to out. It may return
	// fewer than least with no error (a signal cut the wait short), so
	// callers loop. Asking for more completions than ops in flight, or
	// than fit in out, is an error.
	Wait(least int, timeout time.Duration, out []Completion) (int, error)
	// Close waits for the ops submitted to complete, drops those
	// prepared and not submitted, and frees the queue. Calling it again
	// does nothing; every other method fails after it.
	Close() error
}

// New returns a queue of depth slots through the named mechanism, LibAIO or
// IOURing. An error says which system call failed, with the errno's name.
func New(mechanism string, depth int) (Queue, error) {
	switch mechanism {
	case LibAIO:
		return NewAIO(depth)
	case IOURing:
		return NewURing(depth)
	}
	return nil, fmt.Errorf("unknown kernel I/O mechanism %q (want %s or %s)", mechanism, LibAIO, IOURing)
}

var (
	errBusy   = errors.New("kaio: slot already holds an op")
	errFull   = errors.New("kaio: batch full: submit before preparing more")
	errClosed = errors.New("kaio: queue closed")
)

func checkDepth(mechanism string, depth int) error {
	if depth < 1 || depth > MaxDepth {
		return fmt.Errorf("%s: queue depth %d outside 1 to %d", mechanism, depth, MaxDepth)
	}
	return nil
}

// checkPrep validates the arguments of a Prep on a queue of len(busy)
// slots.
func checkPrep(busy []bool, slot, fd int, buf []byte) error {
	switch {
	case slot < 0 || slot >= len(busy):
		return fmt.Errorf("kaio: slot %d outside a queue of depth %d", slot, len(busy))
	case busy[slot]:
		return errBusy
	case fd < 0:
		return fmt.Errorf("kaio: invalid file descriptor %d", fd)
	case int64(len(buf)) > maxIO:
		return fmt.Errorf("kaio: %d bytes in one op is over the kernel's %d", len(buf), maxIO)
	}
	return nil
}

// maxIO is the most bytes one read or write moves in Linux (MAX_RW_COUNT);
// it also fits io_uring's 32-bit lengths and results.
const maxIO = 1<<31 - 4096

// checkWait validates the arguments of a Wait.
func checkWait(least, inFlight int, out []Completion) error {
	switch {
	case least > inFlight:
		return fmt.Errorf("kaio: wait for %d completions with %d ops in flight", least, inFlight)
	case least > len(out):
		return fmt.Errorf("kaio: wait for %d completions with room for %d", least, len(out))
	}
	return nil
}

// syscallError names a failed system call and its errno by name, and wraps
// the errno for errors.Is.
func syscallError(call string, e unix.Errno, hint string) error {
	if hint != "" {
		hint = " (" + hint + ")"
	}
	return fmt.Errorf("%s: %s: %w%s", call, unix.ErrnoName(e), e, hint)
}

// abandoned holds the buffers of ops a queue could not wait for when it
// closed: the kernel may still write into them, so they are never freed.
var abandoned struct {
	sync.Mutex
	bufs [][][]byte
}

func abandon(keep [][]byte) {
	abandoned.Lock()
	defer abandoned.Unlock()
	abandoned.bufs = append(abandoned.bufs, keep)
}
