package mergetest

import (
	"fmt"
	"strings"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
)

// WatchedPool is the pool a Watched session's cluster counts its
// client I/O on.
const WatchedPool = "cbwatched"

// Watched is a session on a make-believe Ceph cluster that is at rest,
// with WatchedWriteOps client writes a second on WatchedPool: a step on
// it is watched as one on a real cluster is.
type Watched struct{ engine.Session }

// WatchedWriteOps is the write rate the cluster of a Watched reports.
const WatchedWriteOps = 123

// DialCluster returns a connection that answers the watch's commands.
func (Watched) DialCluster() (cluster.Conn, []string, error) {
	return watchedConn{}, []string{WatchedPool}, nil
}

type watchedConn struct{}

func (watchedConn) Mon(cmd []byte) ([]byte, error) {
	if strings.Contains(string(cmd), `"status"`) {
		return []byte(`{"fsid":"00000000-0000-4000-8000-00000000cafe","health":{"status":"HEALTH_OK"},"osdmap":{"epoch":5},"pgmap":{"pgs_by_state":[{"state_name":"active+clean","count":32}]}}`), nil
	}
	return []byte(`{"epoch":5,"osds":[{"osd":0,"up":1,"in":1}]}`), nil
}

// Mgr answers pg ls-by-pool with no PGs, so that no OSD is told anything.
func (watchedConn) Mgr(cmd []byte) ([]byte, error) {
	if strings.Contains(string(cmd), `"osd pool stats"`) {
		return fmt.Appendf(nil, `[{"pool_name":%q,"client_io_rate":{"write_op_per_sec":%d}}]`, WatchedPool, WatchedWriteOps), nil
	}
	if strings.Contains(string(cmd), `"osd perf"`) {
		return []byte(`{"osdstats":{"osd_perf_infos":[{"id":0,"perf_stats":{"commit_latency_ms":1,"apply_latency_ms":1}}]}}`), nil
	}
	return []byte(`[]`), nil
}

func (watchedConn) Tell(int, []byte) ([]byte, error) { return []byte(`{}`), nil }
func (watchedConn) Close()                           {}
