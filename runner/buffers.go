package runner

import (
	"errors"
	"fmt"
	"math/bits"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bufferArena holds every I/O buffer of a run in one mapping outside Go's
// heap: a queue of large blocks then neither triggers garbage collections
// nor doubles the heap goal, the collector never scans or preempts a
// goroutine mid-fill.
//
// The mapping is the memory the workload names (spec.BufferMemories), as
// fio's mem= allocates it, because the kind of page is part of what a
// direct I/O costs: the kernel pins each page of an op's buffer, 2 huge
// pages for a 4 MiB op against 1024 small ones, and a 1 MiB direct write
// from one huge page ran four times as many IOPS as from 256 small pages
// on this project's test machine's virtual disk.
type bufferArena struct {
	mapping []byte
	shm     bool // a System V segment, detached rather than unmapped
	base    int  // offset of the first buffer, aligned
	stride  int
	size    int
}

// shmHugeTLB is Linux's SHM_HUGETLB, which x/sys/unix does not name.
const shmHugeTLB = 0o4000

// newBufferArena maps count buffers of size bytes in memory of the kind
// given (spec.BufferMemories; "" is malloc), each starting at a multiple
// of align when align > 1. hugepage is the huge page size of mmaphuge and
// shmhuge, 0 for the system's. Huge pages the system has not reserved are
// an error that says so. filled says that every buffer is about to be
// filled: the kernel then makes the mapping's pages at once, in one call
// rather than a page fault per page (filling 64 MiB of small pages took
// 30 ms of CPU so, against 45 ms faulted in).
func newBufferArena(count, size, align int, memory string, hugepage int, filled bool) (*bufferArena, error) {
	populate := 0
	if filled {
		populate = unix.MAP_POPULATE
	}
	align = max(align, 64) // a cache line, so neighbouring buffers never share one
	stride := (size + align - 1) / align * align
	slack := 0
	if align > unix.Getpagesize() {
		slack = align // mmap aligns to a page only
	}
	length := stride*count + slack
	a := &bufferArena{stride: stride, size: size}
	var err error
	switch memory {
	case "", "malloc", "mmap":
		a.mapping, err = unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|populate)
	case "thp":
		// Not populated: the advice must come before the first touch.
		a.mapping, err = unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err == nil {
			_ = unix.Madvise(a.mapping, unix.MADV_HUGEPAGE) // only a hint: without it, ordinary pages
		}
	case "mmapshared":
		a.mapping, err = unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS|populate)
	case "mmaphuge":
		length = roundUp(length, hugepage)
		flags := unix.MAP_PRIVATE | unix.MAP_ANONYMOUS | unix.MAP_HUGETLB | populate
		if hugepage > 0 {
			flags |= bits.TrailingZeros(uint(hugepage)) << unix.MAP_HUGE_SHIFT
		}
		a.mapping, err = unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, flags)
		err = hugeError(err, length)
	case "shm", "shmhuge":
		flags := unix.IPC_CREAT | 0o600
		if memory == "shmhuge" {
			length = roundUp(length, hugepage)
			flags |= shmHugeTLB
		}
		a.mapping, err = attachShm(length, flags)
		a.shm = true
		if memory == "shmhuge" {
			err = hugeError(err, length)
		}
	default:
		return nil, fmt.Errorf("unknown buffer memory %q", memory) // Validate refuses it first
	}
	if err != nil {
		return nil, fmt.Errorf("allocating %d bytes of buffers (%d of %d bytes) in %s memory: %w", length, count, size, memory, err)
	}
	if rem := int(uintptrOf(a.mapping) % uintptr(align)); rem != 0 {
		a.base = align - rem
	}
	return a, nil
}

// attachShm makes a private System V segment of length bytes and attaches
// it. It is marked for removal at once, so that the kernel frees it when
// it is detached, also when the process is killed.
func attachShm(length, flags int) ([]byte, error) {
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, length, flags)
	if err != nil {
		return nil, err
	}
	m, err := unix.SysvShmAttach(id, 0, 0)
	_, rmErr := unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	if err != nil {
		return nil, err
	}
	if rmErr != nil {
		return nil, errors.Join(rmErr, unix.SysvShmDetach(m))
	}
	return m, nil
}

// hugeError says what a failure to get huge pages means.
func hugeError(err error, length int) error {
	if errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("%w: the system has not reserved %d MiB of free huge pages of that size (sysctl vm.nr_hugepages)", err, (length+1<<20-1)>>20)
	}
	return err
}

// roundUp rounds n up to a multiple of unit (2 MiB when unit is 0, the
// usual huge page size).
func roundUp(n, unit int) int {
	if unit <= 0 {
		unit = 2 << 20
	}
	return (n + unit - 1) / unit * unit
}

// buffer returns buffer i, of count.
func (a *bufferArena) buffer(i int) []byte {
	off := a.base + i*a.stride
	return a.mapping[off : off+a.size : off+a.size]
}

// release unmaps every buffer. Only call it when no op can still touch
// one: an abandoned op's engine may write into its buffer later.
func (a *bufferArena) release() error {
	if a.shm {
		return unix.SysvShmDetach(a.mapping)
	}
	return unix.Munmap(a.mapping)
}

// uintptrOf is the address of b's first byte.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
