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
// image, and the error says it is in use. A watch that outlives its
// blocklisted client by staleGrace is removed with the image's header.
// recorded is the client the image's creation record names ("" if none),
// for an image killed before it named its own.
func removeImage(conn *rados.Conn, ioctx *rados.IOContext, name, recorded string) error {
	deadline := time.Now().Add(watchTimeout)
	blocklisted := map[string]bool{}
	var staleSince time.Time
	for {
		stale, err := releaseStaleWatch(conn, ioctx, name, recorded, blocklisted)
		switch {
		case err != nil:
			return err
		case !stale:
			staleSince = time.Time{}
		case staleSince.IsZero():
			staleSince = time.Now()
		case time.Since(staleSince) > staleGrace:
			if err := dropObjects(ioctx, name); err != nil {
				return err
			}
		}
		err = rbd.RemoveImage(ioctx, name)
		switch {
		case err == nil, errors.Is(err, rbd.ErrNotFound):
			return nil
		case cbrados.Errno(err) != syscall.EBUSY:
			return fmt.Errorf("removing image %s: %w", name, err)
		case time.Now().After(deadline):
			return fmt.Errorf("removing image %s: it is in use (watched%s) %v after cleanup started: %w", name, describeWatchers(ioctx, name), watchTimeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// staleGrace is how long a blocklisted client's watch may stay listed on
// an image before the cleanup takes it for one the OSD will not end: a
// client killed while its watch request was in flight can leave the
// watch recorded on the header with nothing on the OSD to time it out or
// drop it for the blocklist (the OSD normally drops a blocklisted client's
// watch within a second; this allows for a slow map update).
const staleGrace = 10 * time.Second

// dropObjects removes an image's data objects, its object map and last
// its header (which removes the watches recorded on it) with plain rados
// deletes, for librbd's removal to finish: only for an image whose sole
// watcher is a dead cephbench client, blocklisted. An image with
// snapshots or its data in another pool is left to librbd.
func dropObjects(ioctx *rados.IOContext, name string) error {
	img, err := rbd.OpenImageReadOnly(ioctx, name, rbd.NoSnapshot)
	if err != nil {
		return nil // gone meanwhile: the next remove says
	}
	id, err := img.GetId()
	info, serr := img.Stat()
	snaps, nerr := img.GetSnapshotNames()
	img.Close()
	if err := errors.Join(err, serr, nerr); err != nil {
		return fmt.Errorf("image %s: %w", name, err)
	}
	if len(snaps) > 0 || info.Block_name_prefix != "rbd_data."+id {
		return nil
	}
	var objects []string
	err = ioctx.ListObjects(func(oid string) {
		if strings.HasPrefix(oid, info.Block_name_prefix+".") {
			objects = append(objects, oid)
		}
	})
	if err != nil {
		return fmt.Errorf("listing the objects of image %s: %w", name, err)
	}
	// The header last: a cleanup killed before it finds the image as it
	// was, and does this again.
	for _, oid := range append(objects, "rbd_object_map."+id, "rbd_header."+id) {
		if err := ioctx.Delete(oid); err != nil && !errors.Is(err, rados.ErrNotFound) {
			return fmt.Errorf("removing %s of image %s: %w", oid, name, err)
		}
	}
	return nil
}

// releaseStaleWatch blocklists the client that clientKey names (or else
// recorded), if it watches the image and its process, on this host, is
// gone, once per address in blocklisted. It reports whether that client,
// blocklisted, is all that watches the image. A client without the right
// to blocklist leaves the watch to time out.
func releaseStaleWatch(conn *rados.Conn, ioctx *rados.IOContext, name, recorded string, blocklisted map[string]bool) (bool, error) {
	img, err := rbd.OpenImageReadOnly(ioctx, name, rbd.NoSnapshot)
	if err != nil {
		return false, nil // gone meanwhile: the next remove says
	}
	defer img.Close()
	v, err := img.GetMetadata(clientKey)
	if err != nil {
		v = recorded
	}
	host, _ := os.Hostname()
	f := strings.Fields(v)
	if len(f) != 3 || f[0] != host {
		return false, nil
	}
	pid, perr := strconv.Atoi(f[1])
	id, ierr := strconv.ParseInt(f[2], 10, 64)
	if perr != nil || ierr != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
		return false, nil // alive, or not ours to judge
	}
	watchers, err := img.ListWatchers()
	if err != nil {
		return false, fmt.Errorf("listing the watchers of image %s: %w", name, err)
	}
	stale := len(watchers) > 0
	for _, w := range watchers {
		if w.Id != id {
			stale = false
			continue
		}
		if blocklisted[w.Addr] {
			continue
		}
		cmd, _ := json.Marshal(map[string]any{"prefix": "osd blocklist", "blocklistop": "add", "addr": w.Addr})
		_, _, err := conn.MonCommand(cmd)
		blocklisted[w.Addr] = err == nil // refused without the right: the watch times out
		stale = stale && err == nil
	}
	return stale, nil
}

// describeWatchers names the clients watching an image and the client its
// record names, for an error that says who keeps it.
func describeWatchers(ioctx *rados.IOContext, name string) string {
	img, err := rbd.OpenImageReadOnly(ioctx, name, rbd.NoSnapshot)
	if err != nil {
		return ""
	}
	defer img.Close()
	recorded, _ := img.GetMetadata(clientKey)
	watchers, _ := img.ListWatchers()
	var ws []string
	for _, w := range watchers {
		ws = append(ws, fmt.Sprintf("client.%d at %s", w.Id, w.Addr))
	}
	return fmt.Sprintf(" by %s; its record names %q", strings.Join(ws, ", "), recorded)
}
