//go:build ceph

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
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
// agrees with cephbench's own, over the whole run: the pool's write
// counters grow by exactly the bytes the client wrote (its measured
// writes and load-gen's fill), and the watch's samples of the manager's
// write rate, added up over the run, come to a part of them. That part
// depends on how late the manager's trailing rate catches up, which a
// loaded machine delays, and a trailing mean over uneven reports can
// run ahead of the bytes for a while, so it is bounded loosely: above
// a twentieth (the watch read the pool's rate, in bytes) and below
// twice the whole (in bytes, not KiB, and of no other pool). The watch
// asks the monitors about once a second, and the cluster was at rest.
// The write is rados load-gen's, paced at 100 MiB/s over 16 objects:
// rados bench's write, unpaced, fills the sandbox's 4 GiB OSDs in 16 s
// (at 400 MB/s and 2 replicas) and BlueStore aborts on ENOSPC.
func TestClusterWatchSeesASteadyWrite(t *testing.T) {
	pool := cephPool(t)
	waitClean(t)
	before := poolWrites(t, pool)
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
	w := r.Ops["write"]
	if w.Ops == 0 || w.Errors != 0 || len(r.Errors) != 0 {
		t.Fatalf("writes %+v, errors %v; want writes and no error", w, r.Errors)
	}
	const fill = 16 * 4 << 20 // load-gen's objects, written whole before the measured writes
	client := w.Bytes + fill
	// Beyond the client's bytes, the pool counts the run's write-ahead
	// record: a few writes of under a KiB each, each counted as a KiB.
	const records = 64 << 10
	counted := settledPoolWrites(t, []string{pool}, before, client)
	t.Logf("the cluster counted %d bytes in %d writes to the pool, the client wrote %d bytes in %d writes (%d measured, %d of fill)",
		counted.bytes, counted.ops, client, w.Ops+16, w.Bytes, fill)
	if counted.bytes < client || counted.bytes > client+records {
		t.Errorf("the cluster counted %d bytes written to the pool, the client wrote %d (%+d)", counted.bytes, client, counted.bytes-client)
	}
	if counted.ops < w.Ops+16 {
		t.Errorf("the cluster counted %d writes to the pool, the client made %d", counted.ops, w.Ops+16)
	}
	var line []string
	for _, s := range samples {
		if s.Client != nil {
			line = append(line, fmt.Sprintf("%.0f@%.1f", s.Client.WriteBytes/(1<<20), s.At))
		}
	}
	t.Logf("cluster MiB/s by sample: %s", strings.Join(line, " "))
	watched := watchedWriteBytes(samples)
	t.Logf("the watch's samples add up to %.0f bytes written (%.0f%% of the cluster's count)", watched, 100*watched/float64(counted.bytes))
	if watched < float64(client)/20 || watched > 2*float64(counted.bytes) {
		t.Errorf("the watch's samples add up to %.0f bytes written to the pool; want between a twentieth of the client's %d and twice the cluster's count, %d",
			watched, client, counted.bytes)
	}
	// A status a sample, and an osd dump when the OSD map changed (at
	// the start, and each time another test makes or removes a pool: the
	// package's tests run beside the other packages', whose pools come
	// and go every few seconds). Three a second would be a watch that
	// asks more than it should.
	if mon := d.CommandsPerSecond["mon"]; mon == 0 || mon > 3 {
		t.Errorf("%.2f monitor commands a second; want 1 and an osd dump for each change of the OSD map", mon)
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

// writes is what the cluster counted written to pools: client write ops
// and their bytes (each op's rounded up to a KiB).
type writes struct{ ops, bytes int64 }

// poolWrites returns the write counters of pools, summed, as `ceph df
// detail` gives them: totals since each pool was made, which the
// manager updates as the OSDs report, some seconds behind.
func poolWrites(t *testing.T, pools ...string) writes {
	t.Helper()
	b, err := exec.Command("ceph", "df", "detail", "-f", "json").Output()
	if err != nil {
		t.Fatalf("ceph df detail: %v", err)
	}
	var df struct {
		Pools []struct {
			Name  string `json:"name"`
			Stats struct {
				Wr      int64 `json:"wr"`
				WrBytes int64 `json:"wr_bytes"`
			} `json:"stats"`
		} `json:"pools"`
	}
	if err := json.Unmarshal(b, &df); err != nil {
		t.Fatalf("ceph df detail: %v\n%s", err, b)
	}
	var w writes
	for _, p := range df.Pools {
		if slices.Contains(pools, p.Name) {
			w.ops, w.bytes = w.ops+p.Stats.Wr, w.bytes+p.Stats.WrBytes
		}
	}
	return w
}

// settledPoolWrites returns what pools' write counters grew by since
// before, once they count at least want bytes more: the OSDs report to
// the manager every few seconds, later on a loaded machine, so it waits
// up to two minutes for them, then returns what they count.
func settledPoolWrites(t *testing.T, pools []string, before writes, want int64) writes {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		now := poolWrites(t, pools...)
		grown := writes{now.ops - before.ops, now.bytes - before.bytes}
		if grown.bytes >= want || time.Now().After(deadline) {
			return grown
		}
	}
}

// watchedWriteBytes adds up the write rates of a watch's samples, each
// held until the next sample (the last for its interval): the bytes the
// watch saw written.
func watchedWriteBytes(samples []cluster.Sample) float64 {
	var sum float64
	for i, s := range samples {
		if s.Client == nil {
			continue
		}
		held := s.Every
		if i+1 < len(samples) {
			held = samples[i+1].At - s.At
		}
		sum += s.Client.WriteBytes * held
	}
	return sum
}
