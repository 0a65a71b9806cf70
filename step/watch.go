package step

import (
	"fmt"
	"time"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// Watch says how the cluster under a step's target is watched while the
// step runs, for targets on a Ceph cluster.
type Watch struct {
	// Interval is how often the cluster is sampled; 0 turns the watch
	// off.
	Interval spec.Duration `json:"interval,omitempty"`
}

// DefaultWatch is what the commands that run on Ceph targets watch with
// unless told otherwise: a sample a second, a monitor command each.
var DefaultWatch = Watch{Interval: spec.Duration(time.Second)}

// clusterWatch is the watch of one run, on a connection of its own, or
// why there is none.
type clusterWatch struct {
	conn     cluster.Conn
	pools    []string
	interval time.Duration
	w        *cluster.Watch
	err      error
}

// dialWatch connects to sess's cluster for a watch as w says, before the
// run's gate so that connecting does not delay the run's start; a session
// not on a cluster, or a watch turned off, is not watched.
func dialWatch(sess engine.Session, w Watch) *clusterWatch {
	cw, ok := sess.(engine.ClusterWatcher)
	if !ok || w.Interval <= 0 {
		return &clusterWatch{}
	}
	conn, pools, err := cw.DialCluster()
	return &clusterWatch{conn: conn, pools: pools, interval: w.Interval.D(), err: err}
}

// start starts sampling, the samples going to pending's tick log if set.
func (c *clusterWatch) start(pending *result.Pending) {
	if c.conn == nil {
		return
	}
	var sink func(cluster.Sample)
	if pending != nil {
		sink = pending.Cluster
	}
	c.w = cluster.StartWatch(c.conn, c.pools, c.interval, sink)
}

// stop ends the watch and returns what it saw, nil for a run not watched;
// a watch never started closes its connection.
func (c *clusterWatch) stop() *cluster.During {
	switch {
	case c.w != nil:
		return c.w.Stop()
	case c.conn != nil:
		c.conn.Close()
	}
	return nil
}

// note says why the cluster could not be watched; "" if it was, or was
// not to be.
func (c *clusterWatch) note() string {
	if c.err == nil {
		return ""
	}
	return fmt.Sprintf("the cluster could not be watched during the run: %s", oneLine(c.err.Error()))
}

// minWatchInterval is the shortest interval a watch takes: a sample is
// one command to the monitors and two to the managers.
const minWatchInterval = 100 * time.Millisecond

// Validate refuses an interval the monitors should not be asked at: a
// negative one, or one shorter than minWatchInterval but 0 (off). A nil
// Watch is valid.
func (w *Watch) Validate() error {
	if w == nil || w.Interval == 0 || w.Interval.D() >= minWatchInterval {
		return nil
	}
	return fmt.Errorf("--cluster-interval %s: want 0 (off) or at least %s", w.Interval, spec.Duration(minWatchInterval))
}
