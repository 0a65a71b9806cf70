//go:build ceph

package cephfs

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/ceph/go-ceph/cephfs"
)

// clientKey is the session metadata a session's mount carries:
// "HOST:PID". A process killed while mounted leaves its MDS session and
// the capabilities it held on its files, so that anyone else touching
// them waits until the MDS gives up on it (a minute, or five); the
// cleanup evicts such a session at once when this names a process of
// this host that is gone.
const clientKey = "cephbench"

// clientOptions are the Ceph options that name this process in the MDS
// session of a mount made from the connection; they take effect only if
// set before it connects.
func clientOptions() map[string]string {
	host, _ := os.Hostname()
	return map[string]string{"client_metadata": fmt.Sprintf("%s=%s:%d", clientKey, host, os.Getpid())}
}

// mdsSession is what the MDS's "session ls" says of a client.
type mdsSession struct {
	ID       int64          `json:"id"`
	Metadata map[string]any `json:"client_metadata"` // strings, and the client's features as objects
}

// evictDeadClients evicts from the file system's MDSs the sessions of
// cephbench processes of this host that are gone. Only sessions that
// clientKey names are candidates, so a live client, or another program's,
// is never evicted. A client without the right to list or evict sessions
// leaves them to time out: the cleanup then waits on them.
func evictDeadClients(m *cephfs.MountInfo) {
	out, _, err := m.MdsCommand("*", [][]byte{[]byte(`{"prefix": "session ls", "format": "json"}`)})
	if err != nil {
		return
	}
	var sessions []mdsSession
	if json.Unmarshal(out, &sessions) != nil {
		return
	}
	host, _ := os.Hostname()
	for _, s := range sessions {
		v, _ := s.Metadata[clientKey].(string)
		h, p, ok := strings.Cut(v, ":")
		pid, err := strconv.Atoi(p)
		if !ok || h != host || err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		cmd, _ := json.Marshal(map[string]any{"prefix": "client evict", "filters": []string{"id=" + strconv.FormatInt(s.ID, 10)}})
		_, _, _ = m.MdsCommand("*", [][]byte{cmd}) // refused without the right: the session times out
	}
}
