//go:build ceph

package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/result"
)

// A steady S3 put run through the sandbox's radosgw watches the cluster
// CEPH_CONF names, on its RGW zone's bucket pools: over the whole run,
// the pools count at least the bytes and ops the client put (more from
// RGW's own writes, and from other tests sharing the sandbox's zone),
// and the watch's samples of their rates add up to a part of that count
// (loosely bounded: how late the manager's trailing rate catches up
// depends on the machine's load); the result keeps the samples in its
// tick log, and the summary says which cluster and pools were watched.
// bench on an s3:// target is watched the same way.
func TestS3BenchWatchesTheRGWPools(t *testing.T) {
	c := cephtest.RGW(t)
	cephtest.Cluster(t)
	bucket := cephtest.Bucket(t, c, "cbwatch")
	pools := []string{"default.rgw.buckets.data", "default.rgw.buckets.index"}
	before := poolWrites(t, pools...)
	results := t.TempDir()
	code, out, errOut := cephbench(t, context.Background(), "s3", "bench", "--put", "--obj-size", "256K",
		"--concurrent", "8", "--duration", "16s", "--results", results, "-q", "s3://"+bucket)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	rs := s3Results(t, results)
	if len(rs) != 1 || rs[0].Cluster == nil || rs[0].Cluster.During == nil {
		t.Fatalf("want one result with the cluster watched:\n%s", out)
	}
	r, d := rs[0], rs[0].Cluster.During
	if !slices.Equal(d.Pools, pools) || d.FSID == "" {
		t.Errorf("watched cluster %q, pools %q; want the default zone's bucket pools", d.FSID, d.Pools)
	}
	if want := "watched cluster " + d.FSID + ", client I/O of pools default.rgw.buckets.data, default.rgw.buckets.index"; !strings.Contains(out, want) {
		t.Errorf("the summary lacks %q:\n%s", want, out)
	}
	samples, err := result.ClusterSamples(result.TickLogPath(r.Path))
	if err != nil {
		t.Fatal(err)
	}
	put := r.Ops["put"]
	if put.Ops == 0 || put.Errors != 0 {
		t.Fatalf("puts %+v; want puts and no error", put)
	}
	counted := settledPoolWrites(t, pools, before, put.Bytes)
	t.Logf("the cluster counted %d bytes in %d writes to the RGW pools, the client put %d bytes in %d puts", counted.bytes, counted.ops, put.Bytes, put.Ops)
	if counted.bytes < put.Bytes || counted.ops < put.Ops {
		t.Errorf("the cluster counted %d bytes in %d writes to the RGW pools, the client put %d bytes in %d puts: want at least as many",
			counted.bytes, counted.ops, put.Bytes, put.Ops)
	}
	var line []string
	for _, s := range samples {
		if s.Client != nil {
			line = append(line, fmt.Sprintf("%.0f MiB/s %.0f op/s@%.0f", s.Client.WriteBytes/(1<<20), s.Client.WriteOps, s.At))
		}
	}
	t.Logf("cluster by sample: %s", strings.Join(line, ", "))
	watched := watchedWriteBytes(samples)
	t.Logf("the watch's samples add up to %.0f bytes written (%.0f%% of the cluster's count)", watched, 100*watched/float64(counted.bytes))
	if watched < float64(put.Bytes)/20 || watched > 2*float64(counted.bytes) {
		t.Errorf("the watch's samples add up to %.0f bytes written to the RGW pools; want between a twentieth of the client's %d and twice the cluster's count, %d",
			watched, put.Bytes, counted.bytes)
	}

	benchDir := t.TempDir()
	out = filepath.Join(benchDir, "bench.json")
	code, text, errOut := cephbench(t, context.Background(), "bench", "--target", "s3://"+bucket+"/bench", "--rw", "write", "--bs", "64K",
		"--workers", "2", "--duration", "3s", "-o", out)
	if code != 0 {
		t.Fatalf("bench on s3: exit %d\n%s\n%s", code, text, errOut)
	}
	b, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if b.Cluster == nil || b.Cluster.During == nil || !slices.Contains(b.Cluster.During.Pools, "default.rgw.buckets.data") {
		t.Errorf("bench on an s3:// target: cluster %+v; want the RGW pools watched", b.Cluster)
	}
}

// Without a Ceph configuration on the host, an S3 run is not watched and
// says why in a note, not an error; --cluster-interval 0 says nothing;
// --quiesce, which cannot be honoured, refuses to run.
func TestS3BenchWithoutACephConfigurationIsNotWatched(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbnowatch")
	t.Setenv("CEPH_CONF", "")
	t.Setenv("CEPH_ARGS", "")
	t.Chdir(t.TempDir())
	if where, found := cluster.FindConfig(os.Getenv, func(p string) bool { _, err := os.Stat(p); return err == nil }); found {
		t.Skipf("this host has a Ceph configuration without CEPH_CONF: %s", where)
	}
	run := func(args ...string) (*result.Result, string) {
		t.Helper()
		results := t.TempDir()
		args = append(append([]string{"s3", "bench", "--put", "--obj-size", "64K", "--concurrent", "2", "--duration", "1s", "-q", "--results", results}, args...), "s3://"+bucket)
		code, out, errOut := cephbench(t, context.Background(), args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		rs := s3Results(t, results)
		if len(rs) != 1 {
			t.Fatalf("%d results", len(rs))
		}
		return rs[0], out
	}
	r, out := run()
	const note = "the cluster could not be watched during the run: no Ceph configuration on this host"
	if (r.Cluster != nil && r.Cluster.During != nil) || !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, note) }) || !strings.Contains(out, note) {
		t.Errorf("cluster %+v, notes %q; want no watch and the note %q in the result and the summary:\n%s", r.Cluster, r.Notes, note, out)
	}
	if r, _ = run("--cluster-interval", "0"); slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "watched") }) {
		t.Errorf("--cluster-interval 0: notes %q; want none about the watch", r.Notes)
	}
	code, out, errOut := cephbench(t, context.Background(), "s3", "bench", "--put", "--duration", "1s", "--quiesce", "--results", t.TempDir(), "s3://"+bucket)
	if code == 0 || !strings.Contains(errOut, "--quiesce: no Ceph configuration on this host") {
		t.Errorf("--quiesce without a configuration: exit %d\n%s\n%s", code, out, errOut)
	}
}
