//go:build ceph

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/internal/sshtest"
	"github.com/cephbench/cephbench/result"
)

// Four hosts write one pool at once, rados bench style, each under its own
// object names and metadata object: the merged result adds them up
// exactly, and the pool holds nothing of theirs afterwards.
func TestFourHostsWriteOnePoolOverSSH(t *testing.T) {
	conn := cephtest.Cluster(t)
	pool := cephtest.Pool(t, conn, "cbhosts")
	fleet := sshtest.Start(t, 4)
	dir := t.TempDir()
	bin := filepath.Join(dir, "cephbench")
	if out, err := exec.Command("go", "build", "-tags", "ceph,pacific", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// The agents read the cluster's address and key from the target: an
	// ssh login does not pass this process's CEPH_CONF on.
	target := "rados://" + pool + "?conf=" + os.Getenv("CEPH_CONF") + "&keyring=" + os.Getenv("CEPH_KEYRING")
	out := filepath.Join(dir, "rados.json")
	code, text := onHosts(t, bin, bin, fleet, fleet.Aliases(), "bench", "--target", target, "--rw", "write", "--bs", "64K",
		"--workers", "4", "--duration", "3s", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, text)
	}
	wantMergedExactly(t, out, 4, "write")
	ioctx, err := conn.OpenIOContext(pool)
	if err != nil {
		t.Fatal(err)
	}
	defer ioctx.Destroy()
	left := 0
	ioctx.ListObjects(func(string) { left++ })
	if left != 0 {
		t.Errorf("the hosts left %d objects in the pool", left)
	}

	// rados bench on the hosts prints rados bench's table and summary of
	// the hosts' seconds and result added.
	results := filepath.Join(dir, "rados-bench")
	code, text = onHosts(t, bin, bin, fleet, fleet.Aliases()[:2], "rados", "-p", pool, "-c", os.Getenv("CEPH_CONF"), "-k", os.Getenv("CEPH_KEYRING"),
		"bench", "3", "write", "-t", "4", "-b", "64K", "--results", results)
	if code != 0 {
		t.Fatalf("rados bench on 2 hosts: exit %d\n%s", code, text)
	}
	saved, _ := filepath.Glob(filepath.Join(results, "*.json"))
	if len(saved) != 1 {
		t.Fatalf("rados bench on 2 hosts saved %v; want one merged result", saved)
	}
	out = saved[0]
	wantMergedExactly(t, out, 2, "write")
	m, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Maintaining 4 concurrent writes of 65536 bytes", "  sec Cur ops", "Total writes made:      " + strconv.FormatInt(m.Ops["write"].Ops, 10), "Bandwidth (MB/sec):", "Average IOPS:"} {
		if !strings.Contains(text, want) {
			t.Errorf("rados bench on 2 hosts does not print %q:\n%s", want, text)
		}
	}
	left = 0
	ioctx.ListObjects(func(string) { left++ })
	if left != 0 {
		t.Errorf("rados bench on the hosts left %d objects in the pool", left)
	}
}
