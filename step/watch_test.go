package step

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/cluster/clustertest"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
)

// watchedCluster is a session on a cluster, whose watch connects to mon
// or fails with dialErr.
type watchedCluster struct {
	engine.Session
	mon     *clustertest.Monitor
	dialErr error
}

func (c *watchedCluster) DialCluster() (cluster.Conn, []string, error) {
	if c.dialErr != nil {
		return nil, nil, c.dialErr
	}
	return c.mon, []string{"cbwatch"}, nil
}

// What a status says of a cluster at rest and of one deep scrubbing.
const (
	cleanStatus = `{"health":{"status":"HEALTH_OK"},"osdmap":{"epoch":5},"pgmap":{"pgs_by_state":[{"state_name":"active+clean","count":32}]}}`
	scrubStatus = `{"health":{"status":"HEALTH_OK"},"osdmap":{"epoch":5},"pgmap":{"pgs_by_state":[{"state_name":"active+clean","count":30},{"state_name":"active+clean+scrubbing+deep","count":2}]}}`
)

// atRest is a cluster whose managers count no client I/O and no OSD
// latency, and whose pool has no PGs, so that no OSD is told anything.
func atRest() *clustertest.Monitor {
	m := clustertest.New("sortbitwise").Script("status", clustertest.Reply(cleanStatus))
	for _, prefix := range []string{"osd pool stats", "osd perf", "pg ls-by-pool"} {
		m.Script(prefix, clustertest.Reply(`[]`))
	}
	return m
}

// scrubbing is a cluster at rest whose PGs deep scrub from its third
// status on.
func scrubbing() *clustertest.Monitor {
	return atRest().Script("status", func(asked int) ([]byte, error) {
		if asked > 2 {
			return []byte(scrubStatus), nil
		}
		return []byte(cleanStatus), nil
	})
}

func watchedRun(t *testing.T, c *watchedCluster, watch Watch) (*result.Result, string) {
	t.Helper()
	w := spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 100, BlockSize: 4096,
		Workers: 1, QueueDepth: 1, Duration: spec.Duration(2 * time.Second),
	}
	sess, err := engine.Open(context.Background(), &w)
	if err != nil {
		t.Fatal(err)
	}
	c.Session = sess
	save := filepath.Join(t.TempDir(), "r.json")
	var summary strings.Builder
	if _, err := RunOn(context.Background(), c, Step{Name: "watched", Workload: w, Save: save, Watch: watch}, Output{Summary: &summary},
		runner.Options{}, func() error { return sess.Close(context.Background()) }); err != nil {
		t.Fatal(err)
	}
	loaded, err := result.Load(save)
	if err != nil {
		t.Fatal(err)
	}
	return loaded, summary.String()
}

// A step on a cluster watches it during the run: the result says what it
// did, the tick log holds the samples, the summary says it, and the
// watch's connection is closed.
func TestAStepWatchesTheClusterDuringItsRun(t *testing.T) {
	c := &watchedCluster{mon: scrubbing()}
	res, summary := watchedRun(t, c, Watch{Interval: spec.Duration(200 * time.Millisecond)})
	if res.Cluster == nil || res.Cluster.During == nil {
		t.Fatalf("no cluster.during in %+v", res.Cluster)
	}
	d := res.Cluster.During
	if d.Samples < 5 || d.IntervalSeconds != 0.2 || len(d.Events) != 1 || d.Events[0].What != "deep scrub" || d.Events[0].PGs != 2 {
		t.Errorf("during %+v; want about 10 samples and a deep scrub on 2 PGs", d)
	}
	samples, err := result.ClusterSamples(filepath.Join(filepath.Dir(res.Path), res.TickLog))
	if err != nil || len(samples) != d.Samples {
		t.Errorf("the tick log holds %d samples (%v); the result counts %d", len(samples), err, d.Samples)
	}
	if !strings.Contains(summary, "  cluster NOT AT REST during the run: deep scrub on 2 PGs from ") {
		t.Errorf("summary:\n%s", summary)
	}
	for deadline := time.Now().Add(10 * time.Second); c.mon.Closed() != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the watch's connection closed %d times", c.mon.Closed())
		}
	}
}

// A watch turned off sends nothing; one that cannot connect is a note.
func TestAWatchOffOrUnreachable(t *testing.T) {
	c := &watchedCluster{mon: atRest()}
	res, _ := watchedRun(t, c, Watch{})
	if c.mon.Asked("status") != 0 || (res.Cluster != nil && res.Cluster.During != nil) {
		t.Errorf("a watch turned off sent %d statuses, during %+v", c.mon.Asked("status"), res.Cluster)
	}
	c = &watchedCluster{dialErr: errors.New("connecting to the Ceph cluster: timed out")}
	res, _ = watchedRun(t, c, DefaultWatch)
	if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, "the cluster could not be watched during the run: connecting to the Ceph cluster: timed out") {
		t.Errorf("notes %q", res.Notes)
	}
}

func TestWatchIntervalsTheMonitorsShouldNotBeAskedAtAreRefused(t *testing.T) {
	for _, c := range []struct {
		d  time.Duration
		ok bool
	}{{0, true}, {time.Second, true}, {100 * time.Millisecond, true}, {10 * time.Millisecond, false}} {
		err := (&Watch{Interval: spec.Duration(c.d)}).Validate()
		if (err == nil) != c.ok {
			t.Errorf("%v: %v", c.d, err)
		}
	}
}

// A step refused at its gate closes the connection its watch had made.
func TestAStepRefusedAtItsGateClosesItsWatchsConnection(t *testing.T) {
	w := spec.Workload{Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 100, BlockSize: 4096,
		Workers: 1, QueueDepth: 1, Duration: spec.Duration(time.Second)}
	sess, err := engine.Open(context.Background(), &w)
	if err != nil {
		t.Fatal(err)
	}
	c := &watchedCluster{Session: sess, mon: atRest()}
	refuse := Output{Hooks: Hooks{Gate: func(context.Context) error { return errors.New("the coordinator is gone") }}}
	if _, err := RunOn(context.Background(), c, Step{Name: "gated", Workload: w, Watch: DefaultWatch}, refuse, runner.Options{},
		func() error { return sess.Close(context.Background()) }); err == nil {
		t.Fatal("a step refused at its gate ran")
	}
	if c.mon.Closed() != 1 || c.mon.Asked("status") != 0 {
		t.Errorf("the watch's connection closed %d times, %d statuses asked", c.mon.Closed(), c.mon.Asked("status"))
	}
}

// A quiesced run interrupted midway still clears the flags it set, once
// the watch has stopped, and its result says what it set.
func TestAnInterruptedQuiescedRunRestoresTheFlags(t *testing.T) {
	// The cluster says, on each status, which flags were set.
	var mu sync.Mutex
	seenDuring := map[string]bool{}
	mon := atRest()
	mon.Script("status", func(int) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range mon.Flags() {
			seenDuring[f] = true
		}
		return []byte(cleanStatus), nil
	})
	c := &watchedCluster{mon: mon}
	w := spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 100, BlockSize: 4096,
		Workers: 1, QueueDepth: 1, Duration: spec.Duration(30 * time.Second),
	}
	sess, err := engine.Open(context.Background(), &w)
	if err != nil {
		t.Fatal(err)
	}
	c.Session = sess
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var summary strings.Builder
	watch := Watch{Interval: spec.Duration(200 * time.Millisecond), Quiesce: true}
	res, err := RunOn(ctx, c, Step{Name: "quiesced", Workload: w, Watch: watch}, Output{Summary: &summary},
		runner.Options{}, func() error { return sess.Close(context.Background()) })
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !seenDuring["noscrub"] || !seenDuring["nodeep-scrub"] {
		t.Errorf("flags seen during the run: %v", seenDuring)
	}
	if flags := mon.Flags(); !slices.Equal(flags, []string{"sortbitwise"}) || len(mon.Keys()) != 0 {
		t.Errorf("after the run: flags %v, config keys %v", flags, mon.Keys())
	}
	if q := res.Cluster.Quiesced; q == nil || len(q.Set) != 2 {
		t.Errorf("result's quiesced %+v", res.Cluster.Quiesced)
	}
	if !strings.Contains(summary.String(), "  --quiesce set noscrub, nodeep-scrub for the run\n  cluster at rest during the run") {
		t.Errorf("summary:\n%s", summary.String())
	}
	if mon.Closed() > 1 {
		t.Errorf("the connection closed %d times", mon.Closed())
	}
}
