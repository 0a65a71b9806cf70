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
// CEPH_CONF names, on its RGW zone's bucket pools: the cluster counts
// the writes landing in the zone's data pool (made by the run's first
// object) at a rate near the client's, the result keeps the samples in
// its tick log, and the summary says which cluster and pools were
// watched. bench on an s3:// target is watched the same way.
func TestS3BenchWatchesTheRGWPools(t *testing.T) {
	c := cephtest.RGW(t)
	cephtest.Cluster(t)
	bucket := cephtest.Bucket(t, c, "cbwatch")
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
	if !slices.Contains(d.Pools, "default.rgw.buckets.data") || !slices.Contains(d.Pools, "default.rgw.buckets.index") || d.FSID == "" {
		t.Errorf("watched cluster %q, pools %q; want the default zone's bucket pools", d.FSID, d.Pools)
	}
	if want := "watched cluster " + d.FSID + ", client I/O of pools default.rgw.buckets.data, default.rgw.buckets.index"; !strings.Contains(out, want) {
		t.Errorf("the summary lacks %q:\n%s", want, out)
	}
	samples, err := result.ClusterSamples(result.TickLogPath(r.Path))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) < 12 {
		t.Fatalf("%d cluster samples in the tick log of a 16 s run", len(samples))
	}
	// The manager's rates of a pool made during the run start some
	// seconds late, and trail: compare from 8 s on, with wide bounds (the
	// manager's rate is a trailing mean, and an S3 put is more than
	// its data on the wire).
	client := float64(r.Ops["put"].Bytes) / r.ElapsedSeconds / (1 << 20)
	var sum, peakOps float64
	var n int
	var line []string
	for _, s := range samples {
		if s.Client == nil {
			continue
		}
		line = append(line, fmt.Sprintf("%.0f MiB/s %.0f op/s@%.0f", s.Client.WriteBytes/(1<<20), s.Client.WriteOps, s.At))
		if s.At >= 8 {
			sum, n, peakOps = sum+s.Client.WriteBytes/(1<<20), n+1, max(peakOps, s.Client.WriteOps)
		}
	}
	t.Logf("client %.1f MiB/s, %.0f puts/s; cluster by sample: %s", client, float64(r.Ops["put"].Ops)/r.ElapsedSeconds, strings.Join(line, ", "))
	if n < 4 {
		t.Fatalf("%d samples with pool rates from 8 s on", n)
	}
	if mean := sum / float64(n); mean < client*0.5 || mean > client*1.5 {
		t.Errorf("the cluster counted %.1f MiB/s written to the RGW pools from 8 s on, the client put %.1f MiB/s: want within half of it", mean, client)
	}
	if puts := float64(r.Ops["put"].Ops) / r.ElapsedSeconds; peakOps < puts {
		t.Errorf("the cluster counted at most %.0f write ops/s on the RGW pools for %.0f puts/s: want at least one a put", peakOps, puts)
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
