package step

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
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

// flagCluster is a session on a cluster that keeps its OSD map flags and
// config keys, and says, on each status, which scrub flags were set.
type flagCluster struct {
	engine.Session
	mu         sync.Mutex
	flags      map[string]bool
	keys       map[string]string
	seenDuring map[string]bool
	closed     atomic.Int64
}

func (c *flagCluster) DialCluster() (cluster.Conn, []string, error) {
	return flagConn{c}, []string{"cbwatch"}, nil
}

type flagConn struct{ c *flagCluster }

func (f flagConn) Mon(b []byte) ([]byte, error) {
	var cmd struct{ Prefix, Key, Val string }
	if err := json.Unmarshal(b, &cmd); err != nil {
		return nil, err
	}
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	switch cmd.Prefix {
	case "status":
		for fl := range c.flags {
			c.seenDuring[fl] = true
		}
		return []byte(`{"health":{"status":"HEALTH_OK"},"osdmap":{"epoch":5},"pgmap":{"pgs_by_state":[{"state_name":"active+clean","count":32}]}}`), nil
	case "osd dump":
		var set []string
		for fl := range c.flags {
			set = append(set, fl)
		}
		return json.Marshal(map[string]any{"epoch": 5, "flags": strings.Join(set, ","), "osds": []any{}})
	case "osd set":
		c.flags[cmd.Key] = true
	case "osd unset":
		delete(c.flags, cmd.Key)
	case "config-key set":
		c.keys[cmd.Key] = cmd.Val
	case "config-key get":
		return []byte(c.keys[cmd.Key]), nil
	case "config-key rm":
		delete(c.keys, cmd.Key)
	case "config-key ls":
		keys := []string{}
		for k := range c.keys {
			keys = append(keys, k)
		}
		return json.Marshal(keys)
	}
	return nil, nil
}

func (f flagConn) Mgr([]byte) ([]byte, error)       { return []byte(`[]`), nil }
func (f flagConn) Tell(int, []byte) ([]byte, error) { return nil, errors.New("no OSD") }
func (f flagConn) Close()                           { f.c.closed.Add(1) }

// A quiesced run interrupted midway still clears the flags it set, once
// the watch has stopped, and its result says what it set.
func TestAnInterruptedQuiescedRunRestoresTheFlags(t *testing.T) {
	c := &flagCluster{flags: map[string]bool{"sortbitwise": true}, keys: map[string]string{}, seenDuring: map[string]bool{}}
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seenDuring["noscrub"] || !c.seenDuring["nodeep-scrub"] {
		t.Errorf("flags seen during the run: %v", c.seenDuring)
	}
	if c.flags["noscrub"] || c.flags["nodeep-scrub"] || !c.flags["sortbitwise"] || len(c.keys) != 0 {
		t.Errorf("after the run: flags %v, config keys %v", c.flags, c.keys)
	}
	if q := res.Cluster.Quiesced; q == nil || len(q.Set) != 2 {
		t.Errorf("result's quiesced %+v", res.Cluster.Quiesced)
	}
	if !strings.Contains(summary.String(), "  --quiesce set noscrub, nodeep-scrub for the run\n  cluster at rest during the run") {
		t.Errorf("summary:\n%s", summary.String())
	}
	if c.closed.Load() > 1 {
		t.Errorf("the connection closed %d times", c.closed.Load())
	}
}
