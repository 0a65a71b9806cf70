//go:build ceph

package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/internal/cephtest"
)

// Report 003's job files (ioengine=rbd, no size: one pass over the whole
// image) as written there, on an image of the sandbox instead of
// rbd/block-device1: the write, then the reads of what it wrote.
func TestFioReport003RBDJobFiles(t *testing.T) {
	pool := poolFor(t, "rbd")
	tool(t, "rbd", "create", "-p", pool, "block-device1", "--size", "64M")
	dir := t.TempDir()
	for _, job := range []string{"003-write.fio", "003-read.fio", "003-randread.fio"} {
		b, err := os.ReadFile(filepath.Join("../peer/fiojob/testdata", job))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, job)
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), "pool=rbd\n", "pool="+pool+"\n", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, rs := fio(t, path)
		if len(rs) != 1 {
			t.Fatalf("%s: %d results; want 1", job, len(rs))
		}
		r := rs[0]
		kind := r.Kinds()[0]
		if s := r.Ops[kind]; len(r.Ops) != 1 || s.Bytes != 64<<20 || s.Errors != 0 || r.Cluster == nil {
			t.Errorf("%s: %v; want one pass of 64 MiB over the image, no errors, and the cluster's state", job, r.Ops)
		}
		for _, want := range []string{"write-4M: (g=0): rw=", "ioengine=rbd, iodepth=32", "write-4M: (groupid=0, jobs=1): err= 0:",
			"  Description  : [write test with block size of 4M]", "Run status group 0 (all jobs):"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the output lacks %q:\n%s", job, want, out)
			}
		}
	}
	if got := images(t, pool); len(got) != 1 || got[0] != "block-device1" {
		t.Errorf("the pool holds %v; want the user's image alone", got)
	}
}

// Report 000's command line in a directory of a ceph-fuse mount, as the
// report ran it.
func TestFioReport000OnACephFuseMount(t *testing.T) {
	dir := filepath.Join(cephtest.FuseMount(t), fmt.Sprintf("cbfio-%d", rand.Uint32()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	_, rs := fioIn(t, dir, nil, strings.Fields("--rw=rw --bs=1m --size=10M --numjobs=20 --group_reporting --name=test-rw")...)
	if len(rs) != 1 || rs[0].Ops["read"].Bytes+rs[0].Ops["write"].Bytes != 200<<20 {
		t.Fatalf("results %v; want one of 200 MiB", rs)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the job left %d files on the mount", len(entries))
	}
}

// fio's rados engine: one object per clone, written over and over.
func TestFioRadosEngine(t *testing.T) {
	pool := cephPool(t)
	_, rs := fio(t, "--name=obj", "--ioengine=rados", "--pool="+pool, "--clientname=admin", "--rw=write", "--bs=64k", "--size=4M", "--numjobs=2", "--io_size=12M")
	if len(rs) != 1 {
		t.Fatalf("%d results; want 1", len(rs))
	}
	if s := rs[0].Ops["write"]; s.Ops != 384 || s.Errors != 0 {
		t.Errorf("%d writes, %d errors; want 384 (12M per clone, its 4M object written three times) and none", s.Ops, s.Errors)
	}
	if out := tool(t, "rados", "-p", pool, "ls"); strings.TrimSpace(out) != "" {
		t.Errorf("the pool still holds objects:\n%s", out)
	}
}
