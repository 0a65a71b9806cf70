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
	w   *cluster.Watch
	err error
}

// startWatch starts watching sess's cluster as w says, its samples going
// to pending's tick log if set; a session not on a cluster, or a watch
// turned off, is not watched.
func startWatch(sess engine.Session, w Watch, pending *result.Pending) clusterWatch {
	cw, ok := sess.(engine.ClusterWatcher)
	if !ok || w.Interval <= 0 {
		return clusterWatch{}
	}
	conn, pools, err := cw.DialCluster()
	if err != nil {
		return clusterWatch{err: err}
	}
	var sink func(cluster.Sample)
	if pending != nil {
		sink = pending.Cluster
	}
	return clusterWatch{w: cluster.StartWatch(conn, pools, w.Interval.D(), sink)}
}

// stop ends the watch and returns what it saw, nil for a run not watched.
func (c clusterWatch) stop() *cluster.During {
	if c.w == nil {
		return nil
	}
	return c.w.Stop()
}

// note says why the cluster could not be watched; "" if it was, or was
// not to be.
func (c clusterWatch) note() string {
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
