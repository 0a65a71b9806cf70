//go:build ceph

package main

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/cephbench/cephbench/internal/cephtest"
)

// kill -9 of "cephbench rados bench -p POOL 60 write" once its objects
// exist, then "cephbench rados cleanup -p POOL", rados' own form: the
// write records of the killed run are used as "cephbench cleanup
// rados://POOL" uses them, although no metadata object records the write,
// and the pool's other objects stay unchanged, among them one named like
// another rados bench run's.
func TestRadosCleanupAfterKill9(t *testing.T) {
	t.Parallel()
	pool, ioctx := killPool(t)
	putObjects(t, ioctx, map[string]string{
		"benchmark_data_otherhost_7_object0": "another rados bench run's object",
		"notes":                              "a user's object",
	})
	list := func(digest bool) map[string]string { return listObjects(t, ioctx, digest) }
	cleanupAfterKill9(t, list, func(bin string) *exec.Cmd {
		return exec.Command(bin, "rados", "bench", "-p", pool, "60", "write", "-b", "64K", "-t", "4")
	}, "rados", "cleanup", "-p", pool)
}

// kill -9 of "cephbench s3 bench --put" once its objects exist, then
// "cephbench s3 cleanup s3://BUCKET": as for rados cleanup, the killed
// run's write record is used, and the bucket's other objects stay.
func TestS3CleanupAfterKill9(t *testing.T) {
	t.Parallel()
	c := cephtest.RGW(t)
	ctx := context.Background()
	bucket := cephtest.Bucket(t, c, "cbcleanrec")
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	for key, data := range map[string]string{
		"benchmark_data_otherhost_7_object0": "another run's object",
		"notes":                              "a user's object",
	} {
		if _, err := c.PutObject(ctx, bucket, key, strings.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(digest bool) map[string]string { return listBuckets(t, c, digest, bucket) }
	cleanupAfterKill9(t, list, func(bin string) *exec.Cmd {
		return exec.Command(bin, "s3", "bench", "--put", "--obj-size", "4K", "--duration", "60s", "s3://"+bucket)
	}, "s3", "cleanup", "s3://"+bucket)
}

// cleanupAfterKill9 starts the write start gives with the built binary,
// kills it with SIGKILL once list shows an object of it, runs the
// cleanup of args, and checks that list shows what it showed before the
// write, the same (with digest, each object's data too).
func cleanupAfterKill9(t *testing.T, list func(digest bool) map[string]string, start func(bin string) *exec.Cmd, args ...string) {
	foreign := list(true)
	_, bin := buildWithCeph(t)
	run := start(bin)
	run.Dir = t.TempDir()
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Process.Kill(); run.Wait() })
	ours := func(items map[string]string) (n int) {
		for name := range items {
			if _, ok := foreign[name]; !ok && strings.HasPrefix(path.Base(name), "benchmark_data_") {
				n++
			}
		}
		return n
	}
	waitFor(t, "object of the run", func() bool { return ours(list(false)) > 0 })
	if err := run.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	run.Wait()
	t.Logf("killed with %d objects of the run", ours(list(false)))

	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if left := list(true); !maps.Equal(left, foreign) {
		t.Errorf("after %s (%s) the target holds %v; want only %v", strings.Join(args, " "), strings.TrimSpace(string(out)), left, foreign)
	}
}

// Each form of cleanup, while a rados bench of this host writes to the
// pool, leaves that run's record and objects (even --prefix
// benchmark_data), and names the run; the run, stopped, removes them.
func TestCleanupLeavesALiveRadosRun(t *testing.T) {
	t.Parallel()
	pool, ioctx := killPool(t)
	_, bin := buildWithCeph(t)
	run := exec.Command(bin, "rados", "bench", "-p", pool, "60", "write", "-b", "4K", "-t", "2", "--max-objects", "50000")
	run.Dir = t.TempDir()
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Process.Kill(); run.Wait() })
	host, _ := os.Hostname()
	pid := strconv.Itoa(run.Process.Pid)
	waitFor(t, "object of the run", func() bool {
		return len(listObjects(t, ioctx, false, "benchmark_data_")) > 0 && len(listObjects(t, ioctx, false, "cephbench_writing_")) > 0
	})
	for _, args := range [][]string{
		{"cleanup", "rados://" + pool},
		{"rados", "cleanup", "-p", pool},
		{"rados", "cleanup", "-p", pool, "--prefix", "benchmark_data"},
	} {
		before := listObjects(t, ioctx, false)
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		after := listObjects(t, ioctx, false)
		for name := range before {
			if _, ok := after[name]; !ok {
				t.Errorf("%s removed %s of the live run", strings.Join(args, " "), name)
			}
		}
		if want := "skipped: run " + pid + " on " + host + " is still running"; !strings.Contains(string(out), want) {
			t.Errorf("%s said %q; want %q", strings.Join(args, " "), out, want)
		}
	}
	if err := run.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	run.Wait()
	if left := listObjects(t, ioctx, false); len(left) != 0 {
		t.Errorf("after the run ended the pool holds %v", left)
	}
}
