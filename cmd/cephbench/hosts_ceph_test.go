//go:build ceph

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ceph/go-ceph/rbd"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/internal/sshtest"
	"github.com/cephbench/cephbench/report/htmlreport"
	"github.com/cephbench/cephbench/result"
)

// buildWithCeph builds the binary with its Ceph engines.
func buildWithCeph(t *testing.T) (dir, bin string) {
	t.Helper()
	dir = t.TempDir()
	return dir, goBuild(t, dir, "ceph,pacific")
}

// Four hosts write one pool at once, rados bench style, each under its own
// object names and metadata object: the merged result adds them up
// exactly, and the pool holds nothing of theirs afterwards.
func TestFourHostsWriteOnePoolOverSSH(t *testing.T) {
	conn := cephtest.Cluster(t)
	pool := cephtest.Pool(t, conn, "cbhosts")
	fleet := sshtest.Start(t, 4)
	dir, bin := buildWithCeph(t)
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
	wantClusterCharts(t, out)
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

// wantClusterCharts checks that the merged result at path keeps the
// first host's watch of the cluster: what the cluster did, its samples in
// the merged tick log, and the HTML report's cluster charts.
func wantClusterCharts(t *testing.T, path string) {
	t.Helper()
	m, err := result.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := result.ClusterSamples(result.TickLogPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if m.Cluster == nil || m.Cluster.During == nil || len(samples) < 2 || len(samples) != m.Cluster.During.Samples {
		t.Fatalf("merged result: cluster %+v, %d samples in its tick log; want the first host's watch", m.Cluster, len(samples))
	}
	// The samples are a live watch's: the OSDs' own queue latency is read
	// each second. (The manager's pool rate may not show a 3 s write yet
	// on a loaded machine: its OSDs report late.)
	if !slices.ContainsFunc(samples[1:], func(s cluster.Sample) bool { return len(s.OSDQueue) > 0 }) {
		t.Errorf("no sample of the merged tick log read the OSDs' queue latency: %+v", samples)
	}
	set, err := aggregate.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := htmlreport.Write(&page, set, "hosts"); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"cluster-ops", "cluster-mibs", "cluster-pgs"} {
		if !strings.Contains(page.String(), `data-chart="`+kind+`"`) {
			t.Errorf("the merged result's HTML report has no %s chart", kind)
		}
	}
}

// Three hosts share one image that exists, each writing only its own third
// of it: what each wrote lies at the start of its region, block for block
// its ops, and the merged result adds them up exactly. An image cephbench
// did not create is shared only with --force: the other hosts are its
// watchers, so its being in use cannot be checked.
func TestHostsShareOneImageOverSSH(t *testing.T) {
	conn := cephtest.Cluster(t)
	pool := cephtest.Pool(t, conn, "cbshared")
	fleet := sshtest.Start(t, 3)
	dir, bin := buildWithCeph(t)
	ioctx, err := conn.OpenIOContext(pool)
	if err != nil {
		t.Fatal(err)
	}
	defer ioctx.Destroy()
	const bs, region = 64 << 10, 4 << 20
	if err := rbd.CreateImage(ioctx, "shared", 3*region, rbd.NewRbdImageOptions()); err != nil {
		t.Fatal(err)
	}
	defer rbd.RemoveImage(ioctx, "shared")
	target := "rbd://" + pool + "/shared?conf=" + os.Getenv("CEPH_CONF") + "&keyring=" + os.Getenv("CEPH_KEYRING")
	args := []string{"bench", "--target", target, "--rw", "write", "--bs", "64K", "--iodepth", "4", "--total", "2M", "--shared-image"}

	code, text := onHosts(t, bin, bin, fleet, fleet.Aliases(), append(args, "--results", dir)...)
	if code != 2 || !strings.Contains(text, "--force") || strings.Count(strings.TrimSpace(text), "\n") > 0 {
		t.Errorf("an image cephbench did not create, shared without --force: exit %d\n%s", code, text)
	}
	out := filepath.Join(dir, "shared.json")
	code, text = onHosts(t, bin, bin, fleet, fleet.Aliases(), append(args, "--force", "-o", out)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, text)
	}
	wantMergedExactly(t, out, 3, "write")
	m, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := rbd.OpenImageReadOnly(ioctx, "shared", rbd.NoSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	buf := make([]byte, bs)
	for k, h := range m.Hosts {
		written := h.Ops["write"].Ops
		for b := int64(0); b < region/bs; b++ {
			if _, err := img.ReadAt(buf, int64(k)*region+b*bs); err != nil {
				t.Fatal(err)
			}
			if zero := !slices.ContainsFunc(buf, func(c byte) bool { return c != 0 }); zero != (b >= written) {
				t.Errorf("host %d of 3 wrote %d blocks; block %d of its region is written: %v", k+1, written, b, !zero)
			}
		}
	}
}
