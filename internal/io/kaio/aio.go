package kaio

import (
	"errors"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// iocb is struct iocb of linux/aio_abi.h; the fields never set here are
// blank. The ABI swaps aio_key and aio_rw_flags on big-endian machines;
// both stay zero, so one layout fits all.
type iocb struct {
	data   uint64 // aio_data
	_      uint32 // aio_key
	_      uint32 // aio_rw_flags
	opcode uint16 // aio_lio_opcode
	_      int16  // aio_reqprio
	fildes uint32 // aio_fildes
	buf    uint64 // aio_buf
	nbytes uint64 // aio_nbytes
	offset int64  // aio_offset
	_      uint64 // aio_reserved2
	_      uint32 // aio_flags
	_      uint32 // aio_resfd
}

// ioEvent is struct io_event of linux/aio_abi.h.
type ioEvent struct {
	data uint64
	obj  uint64
	res  int64
	res2 int64
}

// Opcodes of linux/aio_abi.h.
const (
	iocbCmdPread  = 0
	iocbCmdPwrite = 1
)

// AIO is a Queue on a Linux AIO context (io_setup, io_submit,
// io_getevents, io_destroy). Not safe for concurrent use.
type AIO struct {
	ctx uintptr // aio_context_t

	iocbs  []iocb // by slot
	busy   []bool // by slot
	keep   [][]byte
	queued []*iocb // prepared, not submitted, in order; cap = depth

	events []ioEvent
	// refused holds the completions of ops io_submit refused, for the
	// next Wait to return before any of the kernel's.
	refused  []Completion
	inFlight int // prepared and not yet returned by Wait
	inKernel int // submitted and not yet reaped

	ts     unix.Timespec // the wait's timeout, where the kernel can read it
	closed bool
}

var _ Queue = (*AIO)(nil)

// NewAIO sets up a Linux AIO context for depth ops in flight. Every
// context counts against the system-wide fs.aio-max-nr.
func NewAIO(depth int) (*AIO, error) {
	if err := checkDepth(LibAIO, depth); err != nil {
		return nil, err
	}
	q := &AIO{
		iocbs:   make([]iocb, depth),
		busy:    make([]bool, depth),
		keep:    make([][]byte, depth),
		queued:  make([]*iocb, 0, depth),
		events:  make([]ioEvent, depth),
		refused: make([]Completion, 0, depth),
	}
	_, _, e := unix.Syscall(unix.SYS_IO_SETUP, uintptr(depth), uintptr(unsafe.Pointer(&q.ctx)), 0)
	if e != 0 {
		hint := ""
		switch e {
		case unix.EAGAIN:
			hint = "the system-wide limit of AIO requests, sysctl fs.aio-max-nr, is reached"
		case unix.ENOSYS:
			hint = "the kernel has no AIO support, or a seccomp filter forbids it"
		}
		return nil, syscallError("libaio: io_setup", e, hint)
	}
	return q, nil
}

// Depth is the number of slots.
func (q *AIO) Depth() int { return len(q.iocbs) }

// Batch is the depth: every op may be prepared before one io_submit.
func (q *AIO) Batch() int { return len(q.iocbs) }

// Pending is the number of ops prepared and not submitted.
func (q *AIO) Pending() int { return len(q.queued) }

// InFlight is the number of ops prepared and not returned by Wait.
func (q *AIO) InFlight() int { return q.inFlight }

// Prep prepares a read or write in slot; see Queue.
func (q *AIO) Prep(slot, fd int, write bool, buf []byte, off int64) error {
	if q.closed {
		return errClosed
	}
	if err := checkPrep(q.busy, slot, fd, buf); err != nil {
		return err
	}
	op := uint16(iocbCmdPread)
	if write {
		op = iocbCmdPwrite
	}
	cb := &q.iocbs[slot]
	*cb = iocb{
		data:   uint64(slot),
		opcode: op,
		fildes: uint32(fd),
		// An address the collector cannot see: keep holds the buffer.
		buf:    uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))),
		nbytes: uint64(len(buf)),
		offset: off,
	}
	q.busy[slot] = true
	q.keep[slot] = buf
	q.queued = append(q.queued, cb)
	q.inFlight++
	return nil
}

// Submit hands the prepared ops to the kernel with as few io_submit calls
// as it takes. io_submit stops at an op it refuses and reports only that
// op's errno: the op completes with it, and the rest go in the next call.
// Ops left when the kernel runs out of requests wait for the next Submit
// or Wait, once some have completed.
func (q *AIO) Submit() error {
	if q.closed {
		return errClosed
	}
	for len(q.queued) > 0 {
		// io_submit does the I/O itself on files without async support,
		// so it may block: an ordinary system call lets the runtime run
		// other goroutines meanwhile.
		r, _, e := unix.Syscall(unix.SYS_IO_SUBMIT, q.ctx, uintptr(len(q.queued)), uintptr(unsafe.Pointer(&q.queued[0])))
		switch {
		case e == unix.EINTR:
			continue
		case e == unix.EAGAIN && q.inKernel > 0:
			return nil
		case e != 0:
			q.refuseFirst(e)
			r = 1
		default:
			q.inKernel += int(r)
		}
		q.queued = q.queued[:copy(q.queued, q.queued[r:])]
	}
	return nil
}

// refuseFirst completes the first queued op with errno e.
func (q *AIO) refuseFirst(e unix.Errno) {
	slot := int(q.queued[0].data)
	q.refused = append(q.refused, Completion{Slot: slot, Res: -int64(e)})
}

// Wait submits, then reaps; see Queue.
func (q *AIO) Wait(least int, timeout time.Duration, out []Completion) (int, error) {
	if q.closed {
		return 0, errClosed
	}
	if err := checkWait(least, q.inFlight, out); err != nil {
		return 0, err
	}
	if err := q.Submit(); err != nil {
		return 0, err
	}
	n := copy(out, q.refused)
	q.refused = q.refused[:copy(q.refused, q.refused[n:])]
	for i := range n {
		q.release(out[i].Slot)
	}
	if n == len(out) || q.inKernel == 0 {
		return n, nil
	}
	got, err := q.getevents(max(least-n, 0), timeout, out[n:])
	return n + got, err
}

// getevents reaps up to len(out) completions, waiting up to timeout for
// least of them.
func (q *AIO) getevents(least int, timeout time.Duration, out []Completion) (int, error) {
	nr := min(len(out), q.inKernel)
	// Ops io_submit left queued (EAGAIN) cannot complete yet, and the
	// kernel refuses a min_nr above nr.
	least = min(least, nr)
	ev := uintptr(unsafe.Pointer(&q.events[0]))
	var r uintptr
	var e unix.Errno
	if least == 0 {
		// A zero timeout returns at once: no need to give the processor
		// up for the call.
		q.ts = unix.Timespec{}
		r, _, e = unix.RawSyscall6(unix.SYS_IO_GETEVENTS, q.ctx, 0, uintptr(nr), ev, uintptr(unsafe.Pointer(&q.ts)), 0)
	} else {
		tsp := uintptr(0) // no timeout
		if timeout >= 0 {
			q.ts = unix.NsecToTimespec(int64(timeout))
			tsp = uintptr(unsafe.Pointer(&q.ts))
		}
		r, _, e = unix.Syscall6(unix.SYS_IO_GETEVENTS, q.ctx, uintptr(least), uintptr(nr), ev, tsp, 0)
	}
	switch e {
	case 0:
	case unix.EINTR:
		return 0, nil
	default:
		return 0, syscallError("libaio: io_getevents", e, "")
	}
	n := int(r)
	for i, ev := range q.events[:n] {
		slot := int(ev.data)
		out[i] = Completion{Slot: slot, Res: ev.res}
		q.release(slot)
	}
	q.inKernel -= n
	return n, nil
}

// release frees the slot of an op Wait returns.
func (q *AIO) release(slot int) {
	q.busy[slot] = false
	q.keep[slot] = nil
	q.inFlight--
}

// Close waits for every op submitted, then destroys the context.
func (q *AIO) Close() error {
	if q.closed {
		return nil
	}
	q.closed = true
	var err error
	out := make([]Completion, len(q.iocbs))
	for q.inKernel > 0 && err == nil {
		_, err = q.getevents(q.inKernel, -1, out)
	}
	// io_destroy too waits for what is left in flight.
	if _, _, e := unix.Syscall(unix.SYS_IO_DESTROY, q.ctx, 0, 0); e != 0 {
		err = errors.Join(err, syscallError("libaio: io_destroy", e, ""))
		if q.inKernel > 0 {
			abandon(q.keep)
		}
	}
	q.keep, q.queued, q.refused = nil, nil, nil
	return err
}
