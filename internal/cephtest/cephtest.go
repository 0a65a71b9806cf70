//go:build ceph

// Package cephtest is what the Ceph engines' tests share: a connection to
// the test run's cluster and pools that last one test.
package cephtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"

	"github.com/ceph/go-ceph/cephfs"
	"github.com/ceph/go-ceph/rados"

	cbrados "github.com/cephbench/cephbench/engine/rados"
)

// Cluster connects to the test run's sandbox cluster, or skips the test
// or benchmark: the project's test command (scripts/test.sh) always
// starts one.
func Cluster(t testing.TB) *rados.Conn {
	t.Helper()
	if os.Getenv("CEPH_CONF") == "" {
		t.Skip("no cluster: CEPH_CONF is unset (scripts/test.sh starts a sandbox cluster and sets it)")
	}
	conn, err := cbrados.Connect(cbrados.Target{}, 0)
	if err != nil {
		t.Fatalf("connecting to the sandbox: %v", err)
	}
	t.Cleanup(conn.Shutdown)
	return conn
}

// Pool makes a pool named after prefix that is removed when the test or
// benchmark ends.
func Pool(t testing.TB, conn *rados.Conn, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, rand.Uint32())
	if err := conn.MakePool(name); err != nil {
		t.Fatalf("creating pool %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := conn.DeletePool(name); err != nil {
			t.Errorf("removing pool %s: %v", name, err)
		}
	})
	return name
}

// MountCephFS mounts the test run's default CephFS, or skips the test when
// the cluster has none (scripts/test.sh starts its sandbox with an MDS).
// It is unmounted when the test ends.
func MountCephFS(t *testing.T) *cephfs.MountInfo {
	t.Helper()
	m, err := cephfs.CreateFromRados(Cluster(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Mount(); err != nil {
		t.Skipf("the cluster has no CephFS to mount (scripts/test.sh starts its sandbox with an MDS): %v", err)
	}
	t.Cleanup(func() {
		_ = m.Unmount()
		_ = m.Release()
	})
	return m
}

// FuseMount mounts the test run's CephFS with ceph-fuse, as a client
// host of its own would, until the test ends, and returns the mount
// point; it skips the test where ceph-fuse cannot mount.
func FuseMount(t *testing.T) string {
	t.Helper()
	MountCephFS(t) // skips without a file system
	if _, err := exec.LookPath("ceph-fuse"); err != nil {
		t.Skip("ceph-fuse is not installed (scripts/install-deps.sh installs it)")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("ceph-fuse", "-c", os.Getenv("CEPH_CONF"), "--id", "admin", mnt).CombinedOutput(); err != nil {
		t.Skipf("ceph-fuse cannot mount here (no /dev/fuse, or not root): %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("unmounting %s: %v\n%s", mnt, err, out)
		}
	})
	return mnt
}
