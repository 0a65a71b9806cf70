//go:build ceph

package rados_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/cluster"
	cbrados "github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/internal/cephtest"
)

// watchCostSpan is how long each half of the measurement lasts: ten
// samples, enough to average a sample's burst of commands.
const watchCostSpan = 10 * time.Second

// BenchmarkWatchEverySecond measures what watching the cluster every
// second (--cluster-interval 1s) costs the client: the CPU the process
// spends beyond what the idle watch connection costs, in % of one core,
// and the commands the watch sends per second, by kind. One iteration
// takes 20 s, so run it once, against a sandbox (CEPH_CONF set as
// `cephbench sandbox up` prints it):
//
//	go test -tags ceph,pacific -run '^$' -bench WatchEverySecond -benchtime 1x ./engine/rados/
func BenchmarkWatchEverySecond(b *testing.B) {
	conn := cephtest.Cluster(b)
	name := cephtest.Pool(b, conn, "cbwatch")
	pool, err := cbrados.OpenPool(cbrados.Target{Pool: name})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	set := pool.Objects(nil, nil)

	var core float64
	sent := map[string]float64{}
	runs := 0
	for b.Loop() {
		c, perSecond := watchCost(b, set)
		core += c
		for kind, n := range perSecond {
			sent[kind] += n
		}
		runs++
	}
	b.ReportMetric(core/float64(runs), "%core")
	for _, kind := range []string{"mon", "mgr", "osd"} {
		b.ReportMetric(sent[kind]/float64(runs), kind+"-cmds/s")
	}
}

// watchCost dials a watch connection as a run does, leaves it idle for
// watchCostSpan, then watches the set's pool every second for as long,
// and returns the CPU the watching added, in % of one core, and the
// commands it sent per second by kind.
func watchCost(b *testing.B, set *cbrados.ObjectSet) (float64, map[string]float64) {
	wconn, pools, err := set.DialCluster()
	if err != nil {
		b.Fatal(err)
	}
	idle := coreShare(b, func() { time.Sleep(watchCostSpan) })
	var d *cluster.During
	watching := coreShare(b, func() {
		w := cluster.StartWatch(wconn, pools, time.Second, nil)
		time.Sleep(watchCostSpan)
		d = w.Stop()
	})
	if d.Samples == 0 || d.Unread == d.Samples || len(d.Problems) > 0 {
		b.Fatalf("the watch did not read the cluster: %d samples, %d unread, problems %q", d.Samples, d.Unread, d.Problems)
	}
	b.Logf("idle connection %.2f %%core, watching %.2f %%core, %d samples", idle, watching, d.Samples)
	return watching - idle, d.CommandsPerSecond
}

// coreShare runs f and returns the CPU, user and system, the whole
// process spent meanwhile, in % of one core over f's wall time.
func coreShare(b *testing.B, f func()) float64 {
	start, cpu := time.Now(), processCPU(b)
	f()
	return (processCPU(b) - cpu).Seconds() / time.Since(start).Seconds() * 100
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
