//go:build ceph

package cephfs

/*
#cgo LDFLAGS: -lcephfs
#cgo CPPFLAGS: -D_FILE_OFFSET_BITS=64
#include <cephfs/libcephfs.h>
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/ceph/go-ceph/cephfs"
)

// abortGrace is how long a libcephfs call that ran past the op timeout
// gets to return once the mount's MDS sessions are aborted, before it is
// left blocked in its thread.
const abortGrace = 10 * time.Second

// bound keeps the libcephfs calls that wait on the MDS from holding a
// run's end forever. libcephfs has no timeout of its own on an MDS
// request (client_mount_timeout bounds the mount alone), and an MDS
// whose journal cannot reach the OSDs never answers: rmdir, unlink,
// close, fsync's capability flush and unmount then wait for good. A call
// through bound that runs past the op timeout aborts the mount
// (ceph_abort_conn: its MDS requests fail with ENOTCONN, its OSD writes
// are cancelled, and every later call fails at once); if even then it
// does not return within abortGrace, it is left blocked in its thread
// and the session is given up: nothing more is asked of libcephfs, and
// the process exits with the thread still blocked.
type bound struct {
	mount   *cephfs.MountInfo
	timeout time.Duration
	abort   sync.Once
	aborted atomic.Bool // the mount was aborted: later calls fail at once
	stuck   atomic.Bool // a call never returned: the mount must not be released
}

// call runs f, what names it, within the op timeout, as bound says. It
// returns f's error, or one wrapping ETIMEDOUT when f ran past the op
// timeout.
func (b *bound) call(what string, f func() error) error {
	if b.stuck.Load() {
		return fmt.Errorf("cephfs: %s: not tried, as an earlier call is left blocked", what)
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	timer := time.NewTimer(b.timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
	}
	// Aborting can itself wait on the MDS (an unmount in progress closes
	// its sessions first), so it is not waited for either.
	go b.abortMount()
	timer.Reset(abortGrace)
	select {
	case <-done:
		return fmt.Errorf("cephfs: %s: no answer within %s (the MDS or the OSDs are not answering); the mount was aborted: %w", what, b.timeout, syscall.ETIMEDOUT)
	case <-timer.C:
		b.stuck.Store(true)
		return fmt.Errorf("cephfs: %s: no answer within %s, nor %s after aborting the mount; it is left blocked: %w", what, b.timeout, abortGrace, syscall.ETIMEDOUT)
	}
}

// abortMount aborts the mount's MDS sessions and cancels its OSD writes,
// once: the calls waiting on them return, and later calls fail with
// ENOTCONN.
func (b *bound) abortMount() {
	b.abort.Do(func() {
		b.aborted.Store(true)
		C.ceph_abort_conn(mountPointer(b.mount))
	})
}

// mountPointer is the libcephfs handle inside go-ceph's MountInfo, its one
// field: go-ceph (v0.34) has no call for ceph_abort_conn.
func mountPointer(m *cephfs.MountInfo) *C.struct_ceph_mount_info {
	return *(**C.struct_ceph_mount_info)(unsafe.Pointer(m))
}
