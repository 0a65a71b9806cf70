package step

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
)

// scrubbingCluster is a session on a cluster whose PGs deep scrub from
// its third status on; its watch's connection counts its commands and
// whether it was closed.
type scrubbingCluster struct {
	engine.Session
	dialErr  error
	statuses atomic.Int64
	closed   atomic.Int64
}

func (c *scrubbingCluster) DialCluster() (cluster.Conn, []string, error) {
	if c.dialErr != nil {
		return nil, nil, c.dialErr
	}
	return scrubConn{c}, []string{"cbwatch"}, nil
}

// scrubConn is a scrubbingCluster's watch's connection.
type scrubConn struct{ c *scrubbingCluster }

func (s scrubConn) Mon(cmd []byte) ([]byte, error) {
	c := s.c
	switch {
	case strings.Contains(string(cmd), `"status"`) && c.statuses.Add(1) > 2:
		return []byte(`{"health":{"status":"HEALTH_OK"},"osdmap":{"epoch":5},"pgmap":{"pgs_by_state":[{"state_name":"active+clean","count":30},{"state_name":"active+clean+scrubbing+deep","count":2}]}}`), nil
	case strings.Contains(string(cmd), `"status"`):
		return []byte(`{"health":{"status":"HEALTH_OK"},"osdmap":{"epoch":5},"pgmap":{"pgs_by_state":[{"state_name":"active+clean","count":32}]}}`), nil
	}
	return []byte(`{"epoch":5,"osds":[{"osd":0,"up":1,"in":1}]}`), nil
}

// Mgr answers pg ls-by-pool with no PGs, so no OSD is told anything.
func (s scrubConn) Mgr([]byte) ([]byte, error) { return []byte(`[]`), nil }
func (s scrubConn) Tell(int, []byte) ([]byte, error) {
	return nil, errors.New("no OSD")
}
func (s scrubConn) Close() { s.c.closed.Add(1) }

func watchedRun(t *testing.T, c *scrubbingCluster, watch Watch) (*result.Result, string) {
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
	c := &scrubbingCluster{}
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
	for deadline := time.Now().Add(10 * time.Second); c.closed.Load() != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the watch's connection closed %d times", c.closed.Load())
		}
	}
}

// A watch turned off sends nothing; one that cannot connect is a note.
func TestAWatchOffOrUnreachable(t *testing.T) {
	c := &scrubbingCluster{}
	res, _ := watchedRun(t, c, Watch{})
	if c.statuses.Load() != 0 || (res.Cluster != nil && res.Cluster.During != nil) {
		t.Errorf("a watch turned off sent %d statuses, during %+v", c.statuses.Load(), res.Cluster)
	}
	c = &scrubbingCluster{dialErr: errors.New("connecting to the Ceph cluster: timed out")}
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
	c := &scrubbingCluster{Session: sess}
	refuse := Output{Hooks: Hooks{Gate: func(context.Context) error { return errors.New("the coordinator is gone") }}}
	if _, err := RunOn(context.Background(), c, Step{Name: "gated", Workload: w, Watch: DefaultWatch}, refuse, runner.Options{},
		func() error { return sess.Close(context.Background()) }); err == nil {
		t.Fatal("a step refused at its gate ran")
	}
	if c.closed.Load() != 1 || c.statuses.Load() != 0 {
		t.Errorf("the watch's connection closed %d times, %d statuses asked", c.closed.Load(), c.statuses.Load())
	}
}
