//go:build ceph

package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceph/go-ceph/cephfs"

	_ "github.com/cephbench/cephbench/engine/cephfs"
	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/result"
)

func TestRunBuiltInPlanOnCephFS(t *testing.T) {
	m := cephtest.MountCephFS(t)
	dir := fmt.Sprintf("/cbplan-%d", rand.Uint32())
	runPlanOn(t, "cephfs://"+dir, 2)
	if _, err := m.Statx(dir, cephfs.StatxMode, 0); err == nil {
		t.Errorf("the directory %s the plan created is still there", dir)
	}
}

// Report 000 ran one fio job on a CephFS mount, on an RBD image (with a
// filesystem, mounted) and on a local disk, and compared the figures by
// hand:
//
//	fio --rw=rw --bs=1m --size=10M --numjobs=20 --group_reporting --name=test-rw
//
// The same job with cephbench, natively on each: libcephfs, librbd, and a
// local directory. Each prints its figures; each moves the job's 200 MiB,
// half reads and half writes; each leaves nothing behind.
func TestReport000SameJobOnCephFSRBDAndALocalDirectory(t *testing.T) {
	m := cephtest.MountCephFS(t)
	pool := poolFor(t, "rbd")
	dir := fmt.Sprintf("/cb000-%d", rand.Uint32())
	local := t.TempDir()
	for _, target := range []string{"cephfs://" + dir, "rbd://" + pool + "/job000?create=true", local} {
		out := t.TempDir() + "/result.json"
		code, stdout, stderr := cephbench(t, context.Background(), "bench", "--target", target, "--name", "test-rw",
			"--rw", "rw", "--bs", "1M", "--size", "10M", "--workers", "20", "--total", "200M", "--quiet", "-o", out)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", target, code, stdout, stderr)
		}
		t.Logf("%s:\n%s", target, stdout)
		r, err := result.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		read, write := r.Ops["read"], r.Ops["write"]
		if read.Bytes+write.Bytes != 200<<20 || read.Ops == 0 || write.Ops == 0 || read.Errors+write.Errors != 0 {
			t.Errorf("%s: read %d bytes, wrote %d, %d errors; want 200 MiB in all, of both, and no errors",
				target, read.Bytes, write.Bytes, read.Errors+write.Errors)
		}
		if !strings.Contains(stdout, "read ") || !strings.Contains(stdout, "write ") {
			t.Errorf("%s: the summary lacks the read and write figures:\n%s", target, stdout)
		}
	}
	if _, err := m.Statx(dir, cephfs.StatxMode, 0); err == nil {
		t.Errorf("%s is still on CephFS", dir)
	}
	if got := images(t, pool); len(got) != 0 {
		t.Errorf("the pool still holds %v", got)
	}
	if entries, _ := os.ReadDir(local); len(entries) != 0 {
		t.Errorf("the local directory still holds %d entries", len(entries))
	}
}

// A path on a CephFS mounted by ceph-fuse is an ordinary directory to the
// file engine, as report 000 used it: the same job there.
func TestFileEngineOnACephFuseMount(t *testing.T) {
	dir := filepath.Join(cephtest.FuseMount(t), fmt.Sprintf("cbfuse-%d", rand.Uint32()))
	out := filepath.Join(t.TempDir(), "result.json")
	code, stdout, stderr := cephbench(t, context.Background(), "bench", "--target", dir, "--rw", "randrw", "--bs", "64K",
		"--size", "4M", "--workers", "4", "--iodepth", "4", "--total", "32M", "--verify", "--quiet", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if read, write := r.Ops["read"], r.Ops["write"]; read.Bytes+write.Bytes != 32<<20 || read.Errors+write.Errors != 0 {
		t.Errorf("read %d bytes, wrote %d, %d errors (%v); want 32 MiB, verified", read.Bytes, write.Bytes, read.Errors+write.Errors, r.Errors)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still on the mount: %v", dir, err)
	}
}

// An OSD stopped in the middle of writes to CephFS files; direct, since
// libcephfs would otherwise absorb them in its cache.
func TestDisruptiveCephFSSurvivesAStoppedOSD(t *testing.T) {
	cephtest.MountCephFS(t)
	stopped := stopAnOSD(t, 2*time.Second)
	checkStall(t, stopped, "write", "bench", "--target", fmt.Sprintf("cephfs:///cbstall-%d", rand.Uint32()),
		"--rw", "randwrite", "--bs", "4K", "--size", "16M", "--iodepth", "8", "--duration", "8s", "--direct", "--quiet")
}

func TestCephFSBadInput(t *testing.T) {
	cephtest.MountCephFS(t)
	dir := fmt.Sprintf("/cbbad-%d", rand.Uint32())
	cases := map[string][]string{
		"no such file system": {"bench", "--target", "cephfs://no-such-fs" + dir, "--rw", "write", "--size", "1M"},
		"nothing to read":     {"bench", "--target", "cephfs://" + dir, "--rw", "read"},
		"unknown option":      {"bench", "--target", "cephfs://" + dir + "?pool=x", "--rw", "write", "--size", "1M"},
	}
	for name, args := range cases {
		code, out, errOut := cephbench(t, context.Background(), append(args, "--results", t.TempDir())...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != ExitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], "cephbench: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a one-line error and exit %d", name, code, out, errOut, ExitUsage)
		}
	}
}
