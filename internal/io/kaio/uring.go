package kaio

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The structures of linux/io_uring.h this package uses.

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

// sqe is struct io_uring_sqe; the fields never set here are blank.
type sqe struct {
	opcode   uint8  // opcode
	_        uint8  // flags
	_        uint16 // ioprio
	fd       int32  // fd
	off      uint64 // off
	addr     uint64 // addr
	len      uint32 // len
	_        uint32 // rw_flags
	userData uint64 // user_data
	_        uint16 // buf_index
	_        uint16 // personality
	_        int32  // splice_fd_in
	_        uint64 // addr3
	_        uint64 // __pad2
}

type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// kernelTimespec is struct __kernel_timespec: 64-bit on every machine,
// unlike unix.Timespec on 32-bit ones.
type kernelTimespec struct{ sec, nsec int64 }

type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	pad       uint32
	ts        uint64
}

// Constants of linux/io_uring.h, with the Linux release that added each.
const (
	opRead  = 22 // IORING_OP_READ, 5.6
	opWrite = 23 // IORING_OP_WRITE, 5.6

	setupCQSize      = 1 << 3 // IORING_SETUP_CQSIZE, 5.5
	setupClamp       = 1 << 4 // IORING_SETUP_CLAMP, 5.6
	setupSubmitAll   = 1 << 7 // IORING_SETUP_SUBMIT_ALL, 5.18
	setupCoopTaskrun = 1 << 8 // IORING_SETUP_COOP_TASKRUN, 5.19
	setupTaskrunFlag = 1 << 9 // IORING_SETUP_TASKRUN_FLAG, 5.19

	featSingleMmap = 1 << 0 // IORING_FEAT_SINGLE_MMAP, 5.4
	featExtArg     = 1 << 8 // IORING_FEAT_EXT_ARG, 5.11

	enterGetEvents = 1 << 0 // IORING_ENTER_GETEVENTS
	enterExtArg    = 1 << 3 // IORING_ENTER_EXT_ARG, 5.11

	sqCQOverflow = 1 << 1 // IORING_SQ_CQ_OVERFLOW
	sqTaskrun    = 1 << 2 // IORING_SQ_TASKRUN

	offSQRing = 0          // IORING_OFF_SQ_RING
	offCQRing = 0x8000000  // IORING_OFF_CQ_RING
	offSQEs   = 0x10000000 // IORING_OFF_SQES

	maxSQEntries = 32768 // IORING_MAX_ENTRIES
)

// URing is a Queue on an io_uring instance, with IORING_OP_READ and
// IORING_OP_WRITE. Not safe for concurrent use.
//
// The ring completes ops without interrupting the thread that submitted
// them (IORING_SETUP_COOP_TASKRUN, as fio sets it): their completions
// reach the completion ring when that thread next enters the kernel, which
// Wait makes happen.
type URing struct {
	fd int

	sqRing, cqRing, sqeMem []byte // the mappings
	shared                 bool   // cqRing is sqRing (IORING_FEAT_SINGLE_MMAP)
	sqTail, sqFlags        *uint32
	sqMask                 uint32
	sqes                   []sqe
	cqHead, cqTail         *uint32
	cqMask                 uint32
	cqes                   []cqe

	tail     uint32 // the next sqe's index, ahead of *sqTail by pending
	pending  int    // prepared, not yet taken by the kernel
	inFlight int    // prepared and not yet returned by Wait
	batch    int

	busy []bool // by slot
	keep [][]byte

	ts     kernelTimespec // the wait's timeout and its argument, where
	arg    getEventsArg   // the kernel can read them
	closed bool
}

var _ Queue = (*URing)(nil)

// NewURing sets up an io_uring instance for depth ops in flight. It needs
// Linux 5.11; it fails, naming the errno, where io_uring is missing or
// forbidden (kernel.io_uring_disabled, seccomp filters of containers).
func NewURing(depth int) (*URing, error) {
	if err := checkDepth(IOURing, depth); err != nil {
		return nil, err
	}
	// Older kernels refuse flags they do not know; each of the later ones
	// only saves work, so do without it there.
	const want = setupCQSize | setupClamp | setupSubmitAll | setupCoopTaskrun | setupTaskrunFlag
	var p uringParams
	var fd uintptr
	var e unix.Errno
	for _, flags := range []uint32{want, want &^ (setupCoopTaskrun | setupTaskrunFlag), setupCQSize | setupClamp} {
		p = uringParams{flags: flags, cqEntries: uint32(depth)}
		fd, _, e = unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(min(depth, maxSQEntries)), uintptr(unsafe.Pointer(&p)), 0)
		if e != unix.EINVAL {
			break
		}
	}
	if e != 0 {
		hint := ""
		switch e {
		case unix.ENOSYS:
			hint = "the kernel has no io_uring, or a seccomp filter forbids it"
		case unix.EPERM:
			hint = "io_uring is disabled by sysctl kernel.io_uring_disabled or forbidden by a seccomp filter"
		case unix.ENOMEM:
			hint = "the locked memory limit, ulimit -l, is too low for the rings"
		}
		return nil, syscallError("io_uring: io_uring_setup", e, hint)
	}
	r := &URing{fd: int(fd), busy: make([]bool, depth), keep: make([][]byte, depth)}
	if err := r.mapRings(&p); err != nil {
		r.unmap()
		unix.Close(r.fd)
		return nil, err
	}
	r.batch = int(p.sqEntries)
	r.arg.ts = uint64(uintptr(unsafe.Pointer(&r.ts)))
	return r, nil
}

// mapRings maps the rings p describes and points r into them.
func (r *URing) mapRings(p *uringParams) error {
	if p.features&featExtArg == 0 {
		return fmt.Errorf("io_uring: the kernel cannot time a wait out (IORING_FEAT_EXT_ARG, Linux 5.11)")
	}
	if p.cqEntries < uint32(len(r.busy)) {
		return fmt.Errorf("io_uring: a completion ring of %d entries for a queue of depth %d", p.cqEntries, len(r.busy))
	}
	mmap := func(what string, off int64, size uint32) ([]byte, error) {
		b, err := unix.Mmap(r.fd, off, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return nil, fmt.Errorf("io_uring: mapping the %s: %w", what, err)
		}
		return b, nil
	}
	sqSize := p.sqOff.array + p.sqEntries*4
	cqSize := p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(cqe{}))
	var err error
	if p.features&featSingleMmap != 0 {
		if r.sqRing, err = mmap("rings", offSQRing, max(sqSize, cqSize)); err != nil {
			return err
		}
		r.cqRing, r.shared = r.sqRing, true
	} else {
		if r.sqRing, err = mmap("submission ring", offSQRing, sqSize); err != nil {
			return err
		}
		if r.cqRing, err = mmap("completion ring", offCQRing, cqSize); err != nil {
			return err
		}
	}
	if r.sqeMem, err = mmap("submission entries", offSQEs, p.sqEntries*uint32(unsafe.Sizeof(sqe{}))); err != nil {
		return err
	}

	u32 := func(ring []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&ring[off])) }
	r.sqTail, r.sqFlags = u32(r.sqRing, p.sqOff.tail), u32(r.sqRing, p.sqOff.flags)
	r.sqMask = *u32(r.sqRing, p.sqOff.ringMask)
	r.cqHead, r.cqTail = u32(r.cqRing, p.cqOff.head), u32(r.cqRing, p.cqOff.tail)
	r.cqMask = *u32(r.cqRing, p.cqOff.ringMask)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&r.cqRing[p.cqOff.cqes])), p.cqEntries)
	// Entries are used in ring order, so the indirection array is the
	// identity, written once.
	array := unsafe.Slice(u32(r.sqRing, p.sqOff.array), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.tail = atomic.LoadUint32(r.sqTail)
	return nil
}

// Depth is the number of slots.
func (r *URing) Depth() int { return len(r.busy) }

// Batch is the submission ring's size: the depth, up to io_uring's 32768.
func (r *URing) Batch() int { return r.batch }

// Pending is the number of ops prepared and not taken by the kernel.
func (r *URing) Pending() int { return r.pending }

// InFlight is the number of ops prepared and not returned by Wait.
func (r *URing) InFlight() int { return r.inFlight }

// Prep prepares a read or write in slot; see Queue.
func (r *URing) Prep(slot, fd int, write bool, buf []byte, off int64) error {
	if r.closed {
		return errClosed
	}
	if err := checkPrep(r.busy, slot, fd, buf); err != nil {
		return err
	}
	if r.pending == r.batch {
		return errFull
	}
	op := uint8(opRead)
	if write {
		op = opWrite
	}
	r.sqes[r.tail&r.sqMask] = sqe{
		opcode: op,
		fd:     int32(fd),
		off:    uint64(off),
		// An address the collector cannot see: keep holds the buffer.
		addr:     uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))),
		len:      uint32(len(buf)),
		userData: uint64(slot),
	}
	r.tail++
	r.pending++
	r.inFlight++
	r.busy[slot] = true
	r.keep[slot] = buf
	return nil
}

// Submit hands the prepared ops to the kernel in one io_uring_enter. The
// kernel completes an op it refuses, with the errno, like any other.
func (r *URing) Submit() error {
	if r.closed {
		return errClosed
	}
	for r.pending > 0 {
		if _, err := r.enter(0, 0); err != nil {
			return err
		}
	}
	return nil
}

// Wait submits and reaps in one io_uring_enter; see Queue.
func (r *URing) Wait(least int, timeout time.Duration, out []Completion) (int, error) {
	if r.closed {
		return 0, errClosed
	}
	if err := checkWait(least, r.inFlight, out); err != nil {
		return 0, err
	}
	n := r.reap(out)
	for {
		need := least - n
		// Completions the kernel holds back until this thread enters it
		// (COOP_TASKRUN), or that did not fit in the ring, set a flag.
		held := atomic.LoadUint32(r.sqFlags)&(sqTaskrun|sqCQOverflow) != 0 && n < len(out)
		if r.pending == 0 && need <= 0 && !held {
			return n, nil
		}
		pending := r.pending
		waited, err := r.enter(max(need, 0), timeout)
		if err != nil {
			return n, err
		}
		got := r.reap(out[n:])
		n += got
		switch {
		case waited && n < least: // timed out or interrupted
			return n, nil
		case got == 0 && r.pending == pending: // nothing more to be had now
			return n, nil
		}
	}
}

// enter submits the prepared ops and, if least > 0, waits up to timeout
// for least completions. It reports whether it asked the kernel to wait.
func (r *URing) enter(least int, timeout time.Duration) (waited bool, err error) {
	submit := r.pending
	atomic.StoreUint32(r.sqTail, r.tail)
	ret, e := r.call(submit, least, timeout)
	if e == unix.EAGAIN || e == unix.EBUSY {
		// Out of requests, or completions backed up: only ops in flight
		// completing helps, so wait for them without submitting.
		inKernel := r.inFlight - r.pending
		if inKernel == 0 {
			return false, syscallError("io_uring: io_uring_enter", e, "")
		}
		if least == 0 {
			return false, nil
		}
		submit, least = 0, min(least, inKernel)
		ret, e = r.call(0, least, timeout)
	}
	switch e {
	case 0:
	case unix.EINTR, unix.ETIME:
		return least > 0, nil
	default:
		return false, syscallError("io_uring: io_uring_enter", e, "")
	}
	if ret == 0 && submit > 0 {
		return false, fmt.Errorf("io_uring: io_uring_enter took none of %d ops", submit)
	}
	r.pending -= int(ret)
	return least > 0, nil
}

// call is io_uring_enter: submit entries from the ring, then wait up to
// timeout for least completions. It returns how many entries the kernel
// took, which is all of them unless it refused one.
func (r *URing) call(submit, least int, timeout time.Duration) (uintptr, unix.Errno) {
	if least == 0 {
		// Submitting does not block: the kernel hands ops that cannot
		// start at once to its own workers. The processor stays ours.
		ret, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(submit), 0, enterGetEvents, 0, 0)
		return ret, e
	}
	flags, arg, argSize := uintptr(enterGetEvents), uintptr(0), uintptr(0)
	if timeout >= 0 {
		r.ts = kernelTimespec{sec: int64(timeout / time.Second), nsec: int64(timeout % time.Second)}
		flags |= enterExtArg
		arg, argSize = uintptr(unsafe.Pointer(&r.arg)), unsafe.Sizeof(r.arg)
	}
	ret, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(submit), uintptr(least), flags, arg, argSize)
	return ret, e
}

// reap moves up to len(out) completions from the ring to out.
func (r *URing) reap(out []Completion) int {
	head := *r.cqHead // only this side writes it
	tail := atomic.LoadUint32(r.cqTail)
	n := 0
	for ; head != tail && n < len(out); head, n = head+1, n+1 {
		c := &r.cqes[head&r.cqMask]
		slot := int(c.userData)
		out[n] = Completion{Slot: slot, Res: int64(c.res)}
		r.busy[slot] = false
		r.keep[slot] = nil
	}
	if n > 0 {
		atomic.StoreUint32(r.cqHead, head)
		r.inFlight -= n
	}
	return n
}

// Close waits for every op the kernel took, drops the others and frees
// the ring.
func (r *URing) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	// Ops prepared and never taken: rewind the tail over them.
	r.tail -= uint32(r.pending)
	atomic.StoreUint32(r.sqTail, r.tail)
	r.inFlight -= r.pending
	r.pending = 0
	var err error
	out := make([]Completion, len(r.busy))
	for r.inFlight > 0 {
		if _, err = r.enter(r.inFlight, -1); err != nil {
			break
		}
		r.reap(out)
	}
	r.unmap()
	if cerr := unix.Close(r.fd); err == nil && cerr != nil {
		err = fmt.Errorf("io_uring: closing the ring: %w", cerr)
	}
	if r.inFlight > 0 {
		// Closing the ring cancels what it can in the background; a
		// read already at the device still lands in its buffer.
		abandon(r.keep)
	}
	r.keep = nil
	return err
}

func (r *URing) unmap() {
	if !r.shared && r.cqRing != nil {
		_ = unix.Munmap(r.cqRing) // fails only on a mapping that is not ours
	}
	for _, m := range [][]byte{r.sqeMem, r.sqRing} {
		if m != nil {
			_ = unix.Munmap(m)
		}
	}
}
