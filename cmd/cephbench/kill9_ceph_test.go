//go:build ceph

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/ceph/go-ceph/cephfs"
	"github.com/ceph/go-ceph/rados"
	"github.com/ceph/go-ceph/rbd"
	"github.com/minio/minio-go/v7"

	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/internal/failpoint"
	"github.com/cephbench/cephbench/internal/killtest"
)

// A pool's objects whose names start with one of prefixes (all with
// none), each with the digest of its data.
func listObjects(t *testing.T, ioctx *rados.IOContext, digest bool, prefixes ...string) killtest.Items {
	items := killtest.Items{}
	err := ioctx.ListObjects(func(oid string) {
		if len(prefixes) > 0 && !hasAnyPrefix(oid, prefixes) {
			return
		}
		items[oid] = ""
		if digest {
			buf := make([]byte, 1<<20)
			n, err := ioctx.Read(oid, buf, 0)
			if err != nil {
				t.Errorf("reading %s: %v", oid, err)
			}
			items[oid] = killtest.Digest(buf[:max(n, 0)])
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// killPool is a fresh pool of the sandbox, open.
func killPool(t *testing.T) (string, *rados.IOContext) {
	conn := cephtest.Cluster(t)
	pool := cephtest.Pool(t, conn, "cbkill")
	ioctx, err := conn.OpenIOContext(pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ioctx.Destroy)
	return pool, ioctx
}

func putObjects(t *testing.T, ioctx *rados.IOContext, objects map[string]string) {
	for name, data := range objects {
		if err := ioctx.WriteFull(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
}

// kill -9 of rados load-gen while it creates its objects, and of a rados
// bench style write while it measures, while it removes its objects and
// while it saves its result, and of the cleanup after one: cephbench
// cleanup leaves only the pool's other objects, unchanged, among them
// objects named like another run's.
func TestKill9RadosThenCleanup(t *testing.T) {
	t.Parallel()
	pool, ioctx := killPool(t)
	putObjects(t, ioctx, map[string]string{
		"benchmark_data_other":                  "named like ours",
		"benchmark_data_otherhost_7_object0":    "another rados bench run's object",
		"cephbench_loadgen_other_1_000001_obj0": "another load-gen's",
		"notes":                                 "a user's object",
	})
	bin := buildFailpoints(t, "ceph", "pacific")
	list := func(t *testing.T, digest bool) killtest.Items { return listObjects(t, ioctx, digest) }
	write := func(bound ...string) []string {
		return append([]string{"bench", "--target", "rados://" + pool, "--rw", "write", "--bs", "4k", "--workers", "4", "--iodepth", "8",
			"--quiet"}, bound...)
	}
	killtest.Run(t, killtest.Config{
		Bin: bin, Target: "rados://" + pool, Foreign: list(t, true), Kills: 5, List: list,
		Phases: []killtest.Phase{
			// Its write record is in the pool before the first object.
			{Name: "layout (load-gen)", Args: []string{"rados", "-p", pool, "load-gen", "--num-objects", "1000",
				"--min-object-size", "16K", "--max-object-size", "16K", "--min-op-len", "4K", "--max-op-len", "4K",
				"--max-ops", "16", "--run-length", "10"}, Point: failpoint.Layout, Hits: 500},
			{Name: "mid-run", Args: write("--duration", "10s"), Point: failpoint.Measure, Hits: 500, Saved: true},
			{Name: "removal", Args: write("--ops", "400"), Point: failpoint.Remove, Hits: 400, Saved: true, Cleanup: true},
			{Name: "save", Args: write("--ops", "100"), Point: failpoint.Save, Hits: 1, Empty: true, Saved: true},
		},
	})
}

// kill -9 of a run on an image it creates, while it lays the image out,
// while it measures and as it removes the image: cephbench cleanup
// leaves only the pool's other images, unchanged, among them one named
// like a host's share of the target (IMAGE-HOST) that cephbench did not
// make.
func TestKill9RBDThenCleanup(t *testing.T) {
	t.Parallel()
	pool, ioctx := killPool(t)
	if err := rbd.PoolInit(ioctx, false); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"img-other", "other"} {
		if err := rbd.CreateImage(ioctx, name, 1<<20, rbd.NewRbdImageOptions()); err != nil {
			t.Fatal(err)
		}
		img, err := rbd.OpenImage(ioctx, name, rbd.NoSnapshot)
		if err != nil {
			t.Fatal(err)
		}
		_, err = img.WriteAt([]byte("a user's image "+name), 4096)
		if err := errors.Join(err, img.Close()); err != nil {
			t.Fatal(err)
		}
	}
	bin := buildFailpoints(t, "ceph", "pacific")
	list := func(t *testing.T, digest bool) killtest.Items { return listImages(t, ioctx, digest) }
	target := "rbd://" + pool + "/img"
	run := func(rw, bs string, bound ...string) []string {
		return append([]string{"bench", "--target", target + "?create=true", "--size", "8M", "--rw", rw, "--bs", bs, "--iodepth", "8",
			"--quiet"}, bound...)
	}
	killtest.Run(t, killtest.Config{
		Bin: bin, Target: target, Foreign: list(t, true), Kills: 5, List: list,
		Phases: []killtest.Phase{
			// 8 layout writes of 1 MiB each.
			{Name: "layout", Args: run("randread", "4k", "--duration", "10s"), Point: failpoint.Layout, Hits: 8},
			{Name: "mid-run", Args: run("randwrite", "64k", "--duration", "10s"), Point: failpoint.Measure, Hits: 300, Saved: true},
			// One image: the run stops as it starts to remove it.
			{Name: "removal", Args: run("randwrite", "64k", "--ops", "100"), Point: failpoint.Remove, Hits: 1, Saved: true},
		},
	})
}

// A pool's images, each with the digest of its first megabyte, its
// objects cephbench names ("cephbench_..." records), and the objects
// images are made of, so that a removal that leaves some shows.
func listImages(t *testing.T, ioctx *rados.IOContext, digest bool) killtest.Items {
	items := listObjects(t, ioctx, digest, "cephbench_", "rbd_data.", "rbd_header.", "rbd_id.", "rbd_object_map.")
	names, err := rbd.GetImageNames(ioctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		items["image "+name] = ""
		if !digest {
			continue
		}
		img, err := rbd.OpenImageReadOnly(ioctx, name, rbd.NoSnapshot)
		if err != nil {
			items["image "+name] = err.Error() // listed, but half removed
			continue
		}
		buf := make([]byte, 1<<20)
		n, _ := img.ReadAt(buf, 0)
		img.Close()
		items["image "+name] = killtest.Digest(buf[:n])
	}
	return items
}

// kill -9 of an S3 write while it writes before measuring (--ramp), while
// it measures and while it removes its objects, under a prefix of a
// bucket that holds other objects, one named like ours, next to another
// bucket; and of a write to a bucket it creates: cephbench cleanup leaves
// only the other objects and the other bucket, unchanged, and removes the
// bucket it made.
func TestKill9S3ThenCleanup(t *testing.T) {
	t.Parallel()
	c := cephtest.RGW(t)
	ctx := context.Background()
	bucket, other, made := cephtest.Bucket(t, c, "cbkill"), cephtest.Bucket(t, c, "cbkill-other"), cephtest.Bucket(t, c, "cbkill-made")
	for _, b := range []string{bucket, other} {
		if err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for key, data := range map[string]string{
		bucket + "/pfx/benchmark_data_other":  "named like ours",
		bucket + "/pfx/notes":                 "a user's object",
		bucket + "/benchmark_data_outside":    "beside the prefix",
		other + "/benchmark_data_x_1_object0": "in another bucket",
	} {
		b, k, _ := strings.Cut(key, "/")
		if _, err := c.PutObject(ctx, b, k, strings.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bin := buildFailpoints(t, "ceph", "pacific")
	list := func(t *testing.T, digest bool) killtest.Items { return listBuckets(t, c, digest, bucket, other, made) }
	write := func(target string, extra ...string) []string {
		return append([]string{"bench", "--target", target, "--rw", "write", "--bs", "4k", "--workers", "4", "--iodepth", "4", "--quiet"}, extra...)
	}
	target := "s3://" + bucket + "/pfx"
	killtest.Run(t, killtest.Config{
		Bin: bin, Target: target, Foreign: list(t, true), Kills: 5, List: list,
		Phases: []killtest.Phase{
			// Ramp hit 1 comes before the first object is written.
			{Name: "ramp", Args: write(target, "--ramp", "1m", "--duration", "10s"), Point: failpoint.Ramp, Hits: 200, Empty: true},
			{Name: "mid-run", Args: write(target, "--duration", "10s"), Point: failpoint.Measure, Hits: 200, Saved: true},
			// Objects go a thousand to a delete request: the keys of 1500
			// take two, and the run stops anywhere in the first or second.
			{Name: "removal", Args: write(target, "--ops", "1500"), Point: failpoint.Remove, Hits: 1500, Saved: true},
		},
	})
	// Beyond the moments of each phase above: that the bucket goes.
	killtest.Run(t, killtest.Config{
		Bin: bin, Target: "s3://" + made, Foreign: list(t, true), Kills: 2, List: list,
		Phases: []killtest.Phase{
			{Name: "mid-run, in a bucket it made", Args: write("s3://"+made, "--duration", "10s"), Point: failpoint.Measure, Hits: 200, Saved: true},
		},
	})
}

// Buckets that exist among names, and their objects, each with the
// digest of its data.
func listBuckets(t *testing.T, c *minio.Client, digest bool, names ...string) killtest.Items {
	ctx := context.Background()
	items := killtest.Items{}
	for _, b := range names {
		if ok, err := c.BucketExists(ctx, b); err != nil || !ok {
			continue
		}
		items["bucket "+b] = ""
		for obj := range c.ListObjects(ctx, b, minio.ListObjectsOptions{Recursive: true}) {
			if obj.Err != nil {
				continue // a bucket removed while it is listed
			}
			key := b + "/" + obj.Key
			items[key] = ""
			if !digest {
				continue
			}
			r, err := c.GetObject(ctx, b, obj.Key, minio.GetObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			items[key] = killtest.Digest(data)
		}
	}
	return items
}

// kill -9 of a run on a CephFS directory that holds a user's files, while
// it lays out its files, while it measures and while it removes them:
// cephbench cleanup, which first evicts the killed run's MDS session (it
// holds the files' capabilities, which anyone else would wait a minute
// for), leaves only the user's files, unchanged, among them ones named
// like cephbench's.
func TestKill9CephFSThenCleanup(t *testing.T) {
	t.Parallel()
	m := cephtest.MountCephFS(t)
	dir := fmt.Sprintf("/cbkill-%d", rand.Uint32())
	for name, data := range map[string]string{
		"cephbench.99.dat":    "a user's file, named like a worker's",
		"notes.txt":           "a user's file",
		"sub/cephbench.0.dat": "in a directory below",
	} {
		p := path.Join(dir, name)
		if err := errors.Join(m.MakeDirs(path.Dir(p), 0o755), writeCephFS(m, p, data)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { removeCephFSTree(m, dir) })
	bin := buildFailpoints(t, "ceph", "pacific")
	list := func(t *testing.T, digest bool) killtest.Items { return listCephFS(t, m, dir, digest) }
	bench := func(rw, size, workers string, bound ...string) []string {
		return append([]string{"bench", "--target", "cephfs://" + dir, "--rw", rw, "--bs", "64k", "--size", size, "--workers", workers,
			"--quiet"}, bound...)
	}
	killtest.Run(t, killtest.Config{
		Bin: bin, Target: "cephfs://" + dir, Foreign: list(t, true), Kills: 5, List: list,
		Phases: []killtest.Phase{
			// 16 layout writes of 1 MiB a worker.
			{Name: "layout", Args: bench("randread", "32M", "2", "--duration", "10s"), Point: failpoint.Layout, Hits: 16},
			{Name: "mid-run", Args: bench("randwrite", "4M", "2", "--duration", "10s"), Point: failpoint.Measure, Hits: 300, Saved: true},
			// 8 files, then their directory.
			{Name: "removal", Args: bench("randwrite", "256k", "8", "--ops", "100"), Point: failpoint.Remove, Hits: 8, Saved: true},
		},
	})
}

func writeCephFS(m *cephfs.MountInfo, p, data string) error {
	f, err := m.Open(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(data))
	return errors.Join(err, f.Close())
}

// A CephFS directory's files, by path under it (directories end in "/"),
// each with the digest of its first megabyte and its cephbench mark.
func listCephFS(t *testing.T, m *cephfs.MountInfo, root string, digest bool) killtest.Items {
	items := killtest.Items{}
	var walk func(rel string)
	walk = func(rel string) {
		d, err := m.OpenDir(path.Join(root, rel))
		if err != nil {
			return // gone while a run removes it
		}
		defer d.Close()
		for {
			e, err := d.ReadDir()
			if err != nil || e == nil {
				return
			}
			name := path.Join(rel, e.Name())
			switch {
			case e.Name() == "." || e.Name() == "..":
			case e.DType() == cephfs.DTypeDir:
				items[name+"/"] = ""
				walk(name)
			case digest:
				items[name] = digestCephFS(t, m, path.Join(root, name))
			default:
				items[name] = ""
			}
		}
	}
	walk("")
	return items
}

func digestCephFS(t *testing.T, m *cephfs.MountInfo, p string) string {
	f, err := m.Open(p, os.O_RDONLY, 0)
	if err != nil {
		t.Errorf("reading %s: %v", p, err)
		return ""
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n, _ := f.ReadAt(buf, 0)
	mark, _ := m.GetXattr(p, "user.cephbench")
	return killtest.Digest(append(buf[:max(n, 0)], mark...))
}

// removeCephFSTree removes what the test made under dir.
func removeCephFSTree(m *cephfs.MountInfo, dir string) {
	for name := range listCephFS(nil, m, dir, false) {
		if !strings.HasSuffix(name, "/") {
			_ = m.Unlink(path.Join(dir, name))
		}
	}
	_ = m.RemoveDir(path.Join(dir, "sub"))
	_ = m.RemoveDir(dir)
}
