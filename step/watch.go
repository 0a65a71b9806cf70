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
	// Quiesce sets the scrub flags (cluster.QuiesceFlags) for the run,
	// whether or not the cluster is sampled.
	Quiesce bool `json:"quiesce,omitempty"`
}

// DefaultWatch is what the commands that run on Ceph targets watch with
// unless told otherwise: a sample a second, a monitor command each.
var DefaultWatch = Watch{Interval: spec.Duration(time.Second)}

// clusterWatch is the watch of one run and its quiescing, on a
// connection of its own, or why there is none.
type clusterWatch struct {
	conn     *cluster.Shared // the watch's and the quiescing's: the watch may close it while the flags are restored
	pools    []string
	interval time.Duration
	w        *cluster.Watch
	err      error // why there is no connection
	// quiesce is the run's hold on the scrub flags, once taken;
	// quiesceErr is why it could not be, and the run must not start;
	// restoreErr is why the flags could not be restored.
	quiesce                *cluster.Quiesce
	quiesceErr, restoreErr error
}

// dialWatch connects to sess's cluster for a watch and quiescing as w
// says, before the run's gate so that connecting does not delay the run's
// start; a session not on a cluster, or a watch turned off and not
// quiescing, is not watched.
func dialWatch(sess engine.Session, w Watch) *clusterWatch {
	cw, ok := sess.(engine.ClusterWatcher)
	if !ok || (w.Interval <= 0 && !w.Quiesce) {
		return &clusterWatch{}
	}
	conn, pools, err := cw.DialCluster()
	c := &clusterWatch{pools: pools, interval: w.Interval.D(), err: err}
	if err != nil {
		if w.Quiesce {
			c.quiesceErr = fmt.Errorf("--quiesce: %w", err)
		}
		return c
	}
	c.conn = cluster.Share(conn)
	if w.Quiesce {
		if c.quiesce, err = cluster.NewQuiescer(c.conn).Quiesce(); err != nil {
			c.quiesceErr = fmt.Errorf("--quiesce: %w", err)
		}
	}
	return c
}

// start starts sampling, the samples going to pending's tick log if set,
// then to hook if set.
func (c *clusterWatch) start(pending *result.Pending, hook func(cluster.Sample)) {
	if c.conn == nil || c.interval <= 0 {
		return
	}
	sink := hook
	if pending != nil {
		sink = func(s cluster.Sample) {
			pending.Cluster(s)
			if hook != nil {
				hook(s)
			}
		}
	}
	c.w = cluster.StartWatch(c.conn.Hold(), c.pools, c.interval, sink)
}

// stop ends the watch, then restores the scrub flags, and returns what
// the watch saw, nil for a run not watched.
func (c *clusterWatch) stop() *cluster.During {
	var during *cluster.During
	if c.w != nil {
		during = c.w.Stop()
		during.Pools = c.pools
	}
	if c.quiesce != nil {
		c.restoreErr = c.quiesce.Restore()
	}
	if c.conn != nil {
		c.conn.Close()
	}
	return during
}

// quiesced is what quiescing did, nil for a run not quiesced.
func (c *clusterWatch) quiesced() *cluster.Quiesced {
	if c.quiesce == nil {
		return nil
	}
	return &c.quiesce.Quiesced
}

// notes say why the cluster could not be watched, or its flags restored.
func (c *clusterWatch) notes() []string {
	var n []string
	if c.err != nil && c.interval > 0 {
		n = append(n, fmt.Sprintf("the cluster could not be watched during the run: %s", oneLine(c.err.Error())))
	}
	if c.restoreErr != nil {
		n = append(n, fmt.Sprintf("--quiesce could not restore the scrub flags (run cephbench cleanup on the target): %s", oneLine(c.restoreErr.Error())))
	}
	return n
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
