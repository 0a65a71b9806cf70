package runner

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bufferArena holds every I/O buffer of a run in one anonymous mapping
// outside Go's heap: a queue of large blocks then neither triggers garbage
// collections nor doubles the heap goal, the collector never scans or
// preempts a goroutine mid-fill.
//
// Buffers for direct I/O are transparent huge pages: the kernel pins an
// op's pages, 2 per 4 MiB op instead of 1024. Others are not: a huge page
// comes from the free blocks a virtual machine's balloon reports to its
// host, so its first touch faults in the host too, and filling 68 MiB of
// huge pages for a 10 s write of 4 MiB ops to RADOS took 0.6 s of system
// time, more than a third of the client's.
type bufferArena struct {
	mapping []byte
	base    int // offset of the first buffer, aligned
	stride  int
	size    int
}

// newBufferArena maps count buffers of size bytes, each starting at a
// multiple of align when align > 1 (direct I/O, in huge pages).
func newBufferArena(count, size, align int) (*bufferArena, error) {
	direct := align > 1
	align = max(align, 64) // a cache line, so neighbouring buffers never share one
	stride := (size + align - 1) / align * align
	page := unix.Getpagesize()
	slack := 0
	if align > page {
		slack = align // mmap aligns to a page only
	}
	length := stride*count + slack
	m, err := unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mapping %d buffers of %d bytes: %w", count, size, err)
	}
	if direct {
		_ = unix.Madvise(m, unix.MADV_HUGEPAGE) // only a hint: without it, ordinary pages
	}
	base := 0
	if rem := int(uintptrOf(m) % uintptr(align)); rem != 0 {
		base = align - rem
	}
	return &bufferArena{mapping: m, base: base, stride: stride, size: size}, nil
}

// buffer returns buffer i, of count.
func (a *bufferArena) buffer(i int) []byte {
	off := a.base + i*a.stride
	return a.mapping[off : off+a.size : off+a.size]
}

// release unmaps every buffer. Only call it when no op can still touch
// one: an abandoned op's engine may write into its buffer later.
func (a *bufferArena) release() error { return unix.Munmap(a.mapping) }

// uintptrOf is the address of b's first byte.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
