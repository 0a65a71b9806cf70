//go:build ceph

package rbd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ceph/go-ceph/rados"
	"github.com/ceph/go-ceph/rbd"

	cbrados "github.com/cephbench/cephbench/engine/rados"
)

// clientKey is the image metadata naming the client that last opened an
// image cephbench created: "HOST PID CLIENT_ID". A process killed with
// the image open leaves its watch on it, which makes the image impossible
// to remove until the OSDs time it out (osd_client_watch_timeout, 30 s by
// default); the cleanup ends that watch at once when this names it and
// the process is gone.
const clientKey = "cephbench.client"

// watchTimeout bounds how long the cleanup waits for a watch it cannot
// prove stale to end: past osd_client_watch_timeout's default of 30 s,
// and librbd's own wait for a lock owner to answer.
const watchTimeout = 75 * time.Second

// client is clientKey's value for this process and session.
func (s *Session) client() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s %d %d", host, os.Getpid(), s.conn.GetInstanceID())
}

// removeImage removes an image cephbench created. It first ends the watch
// a cephbench process of this host that is gone left on it (the OSDs are
// told to refuse that client for an hour, which librbd would otherwise do
// itself after waiting for it to answer), then removes the image, waiting
// up to watchTimeout while it is in use: a live run's watch keeps the
// image, and the error says it is in use.
func removeImage(conn *rados.Conn, ioctx *rados.IOContext, name string) error {
	deadline := time.Now().Add(watchTimeout)
	for {
		if err := releaseStaleWatch(conn, ioctx, name); err != nil {
			return err
		}
		err := rbd.RemoveImage(ioctx, name)
		switch {
		case err == nil, errors.Is(err, rbd.ErrNotFound):
			return nil
		case cbrados.Errno(err) != syscall.EBUSY:
			return fmt.Errorf("removing image %s: %w", name, err)
		case time.Now().After(deadline):
			return fmt.Errorf("removing image %s: it is in use (watched) %v after cleanup started: %w", name, watchTimeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// releaseStaleWatch blocklists the client that clientKey names, if it
// watches the image and its process, on this host, is gone. A client
// without the right to blocklist leaves the watch to time out.
func releaseStaleWatch(conn *rados.Conn, ioctx *rados.IOContext, name string) error {
	img, err := rbd.OpenImageReadOnly(ioctx, name, rbd.NoSnapshot)
	if err != nil {
		return nil // gone meanwhile: the next remove says
	}
	defer img.Close()
	v, err := img.GetMetadata(clientKey)
	if err != nil {
		return nil
	}
	host, _ := os.Hostname()
	f := strings.Fields(v)
	if len(f) != 3 || f[0] != host {
		return nil
	}
	pid, perr := strconv.Atoi(f[1])
	id, ierr := strconv.ParseInt(f[2], 10, 64)
	if perr != nil || ierr != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
		return nil // alive, or not ours to judge
	}
	watchers, err := img.ListWatchers()
	if err != nil {
		return fmt.Errorf("listing the watchers of image %s: %w", name, err)
	}
	for _, w := range watchers {
		if w.Id != id {
			continue
		}
		cmd, _ := json.Marshal(map[string]any{"prefix": "osd blocklist", "blocklistop": "add", "addr": w.Addr})
		_, _, _ = conn.MonCommand(cmd) // refused without the right: the watch times out
	}
	return nil
}
