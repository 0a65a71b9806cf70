//go:build ceph

package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/result"
)

// waitClean waits until every PG of the cluster is active+clean: a pool
// made just now peers first, which a watch would rightly report.
func waitClean(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		st, err := cluster.ParseStatus([]byte(ceph(t, "status", "-f", "json")))
		if err != nil {
			t.Fatal(err)
		}
		clean := 0
		for _, s := range st.PGMap.PGsByState {
			if s.StateName == "active+clean" {
				clean = s.Count
			}
		}
		if clean == st.PGMap.NumPGs {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PGs not all active+clean after 2 minutes: %+v", st.PGMap.PGsByState)
		}
	}
}

// The cluster's view of a steady 24 s write of 4 MiB ops, 16 in flight,
// agrees with cephbench's own: from 12 s on, the mean of the pool's write
// rate the manager reports is within 15% of the client's a few seconds
// earlier (the manager's rate trails: it is the mean of its last
// reports). The watch asks the monitors about once a second, and the
// cluster was at rest. The write is rados load-gen's, paced at 100 MiB/s
// over 16 objects: rados bench's write, unpaced, fills the sandbox's
// 4 GiB OSDs in 16 s (at 400 MB/s and 2 replicas) and BlueStore aborts on
// ENOSPC.
func TestClusterWatchSeesASteadyWrite(t *testing.T) {
	pool := cephPool(t)
	// The manager smooths pool rates over mon_stat_smooth_intervals
	// reports (6 by default): the rate of a paced write is steady
	// enough for that to take nothing off it from 8 s on on an idle
	// machine, and from 12 s on when OSDs loaded by other work report
	// late (the rate then climbed for 15 s).
	waitClean(t)
	results := t.TempDir()
	code, out, errOut := cephbench(t, context.Background(), "rados", "-p", pool, "load-gen", "--num-objects", "16",
		"--min-object-size", "4M", "--max-object-size", "4M", "--min-op-len", "4M", "--max-op-len", "4M", "--max-ops", "16",
		"--read-percent", "0", "--target-throughput", "100M", "--run-length", "24", "--results", results)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r, path := onlyResult(t, results)
	samples, err := result.ClusterSamples(result.TickLogPath(path))
	if err != nil {
		t.Fatal(err)
	}
	d := r.Cluster.During
	t.Logf("%d samples, commands per second %v, events %v, problems %q", d.Samples, d.CommandsPerSecond, d.Events, d.Problems)
	clientAt := map[int]float64{} // MiB/s written in the second ending at T
	var clientLine, clusterLine []string
	for _, s := range r.Series {
		if s.Dur >= 0.5 {
			clientAt[int(s.T+0.5)] = float64(s.Kinds["write"].Bytes) / s.Dur / (1 << 20)
			clientLine = append(clientLine, fmt.Sprintf("%.0f@%.0f", clientAt[int(s.T+0.5)], s.T))
		}
	}
	const lag = 2 // seconds the manager's rate trails the client's
	var clusterSum, clientSum float64
	var n int
	for _, s := range samples {
		if s.Client == nil {
			continue
		}
		mibs := s.Client.WriteBytes / (1 << 20)
		clusterLine = append(clusterLine, fmt.Sprintf("%.0f@%.1f", mibs, s.At))
		sec := int(s.At + 0.5)
		c, ok := clientAt[sec-lag]
		if sec < 12 || !ok {
			continue
		}
		clusterSum, clientSum, n = clusterSum+mibs, clientSum+c, n+1
	}
	t.Logf("client MiB/s by second: %s", strings.Join(clientLine, " "))
	t.Logf("cluster MiB/s by sample: %s", strings.Join(clusterLine, " "))
	if n < 4 {
		t.Fatalf("%d samples from 12 s on to compare", n)
	}
	clusterMean, clientMean := clusterSum/float64(n), clientSum/float64(n)
	t.Logf("from 12 s on: the cluster counted %.1f MiB/s written, the client %.1f MiB/s %d s earlier (%+.1f%%), over %d samples",
		clusterMean, clientMean, lag, 100*(clusterMean/clientMean-1), n)
	if clusterMean < clientMean*0.85 || clusterMean > clientMean*1.15 {
		t.Errorf("the cluster counted %.1f MiB/s, the client %.1f MiB/s: more than 15%% apart", clusterMean, clientMean)
	}
	// A status a sample, and an osd dump when the OSD map changed (at
	// the start, and when another test makes or removes a pool).
	if mon := d.CommandsPerSecond["mon"]; mon == 0 || mon > 1.5 {
		t.Errorf("%.2f monitor commands a second; want about 1", mon)
	}
	// The sandbox is shared: a pool another test makes meanwhile peers,
	// which the watch rightly reports; nothing else may happen.
	for _, e := range d.Events {
		if e.What != "peering" {
			t.Errorf("the cluster was not at rest: %s", e)
		}
	}
	if want := "cluster at rest during the run ("; !d.AtRest() {
		t.Logf("PGs of another test's pool peered: %v", d.Events)
	} else if !strings.Contains(out, want) {
		t.Errorf("the summary lacks %q:\n%s", want, out)
	}
}
