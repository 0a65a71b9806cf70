//go:build ceph

package s3

import (
	"errors"
	"fmt"
	"os"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	cbrados "github.com/cephbench/cephbench/engine/rados"
)

var _ engine.ClusterWatcher = (*Session)(nil)

// errNoCephConfig is why an S3 run is not watched on a host without a
// Ceph configuration: the endpoint may be on no Ceph cluster at all.
var errNoCephConfig = errors.New("no Ceph configuration on this host (CEPH_CONF, CEPH_ARGS or /etc/ceph/ceph.conf) to reach the cluster behind the S3 endpoint")

// DialCluster connects to the Ceph cluster of this host's configuration,
// found where `ceph` finds it (cluster.FindConfig), and names the pools
// the buckets of its RGW zones go to (cluster.RGWPools): an S3 target
// does not name its cluster, so the cluster this host administers is
// taken for the endpoint's. It fails, saying so, when there is no
// configuration, or the cluster has no RGW pools.
func (s *Session) DialCluster() (cluster.Conn, []string, error) {
	where, ok := cluster.FindConfig(os.Getenv, func(p string) bool { _, err := os.Stat(p); return err == nil })
	if !ok {
		return nil, nil, errNoCephConfig
	}
	conn, err := cbrados.Connect(cbrados.Target{}, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("the Ceph cluster of %s: %w", where, err)
	}
	c := cluster.NewConn(conn)
	detail, err := c.Mon([]byte(`{"prefix":"osd pool ls","detail":"detail","format":"json"}`))
	var pools []string
	if err == nil {
		pools, err = cluster.RGWPools(detail)
	}
	if err == nil && len(pools) == 0 {
		err = errors.New("it has no RGW pools: the S3 endpoint is not on it")
	}
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("the Ceph cluster of %s: %w", where, err)
	}
	return c, pools, nil
}
