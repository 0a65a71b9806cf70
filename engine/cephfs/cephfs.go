//go:build ceph

package cephfs

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/ceph/go-ceph/cephfs"
	"github.com/ceph/go-ceph/rados"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	cbrados "github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/failpoint"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/workload"
)

// markAttr is the extended attribute on the files cephbench lays out, as
// with the file engine: the block size of the verifiable data the file
// holds, or "0" when blocks of several sizes may be mixed in it.
const markAttr = "user.cephbench"

func init() {
	engine.Register("cephfs", engine.Typed(Open), engine.Description{
		Syntax: "cephfs://[FS]/PATH", Layout: engine.Blocks, Kind: engine.KindSharedFilesystem,
		Cleaner: func(_ context.Context, t spec.Target, _ *writeahead.Judge) error { return cleanKept(t) },
		// Each host works in a directory of its own under the target's,
		// which the session creates and removes.
		Share: func(w *spec.Workload, host string) error {
			w.Target.Location = engine.InSubdirectory(w.Target.Location, host)
			return nil
		},
	})
}

// Target is a parsed cephfs:// location.
type Target struct {
	Conn cbrados.Target // the connection options, without a pool
	FS   string         // the file system's name; "" for the default
	Dir  string         // an absolute path in it
}

// ParseTarget parses "[FS]/PATH?conf=...&id=...&name=...&keyring=...&cluster=...".
func ParseTarget(location string) (Target, error) {
	loc, query, _ := strings.Cut(location, "?")
	fs, dir, ok := strings.Cut(loc, "/")
	if !ok {
		return Target{}, engine.Usagef("cephfs target %q: want cephfs://[FS]/PATH", location)
	}
	t := Target{FS: fs, Dir: path.Clean("/" + dir)}
	q, err := url.ParseQuery(query)
	if err != nil {
		return Target{}, engine.Usagef("cephfs target %q: %v", location, err)
	}
	t.Conn, err = cbrados.ParseConn("cephfs", q)
	return t, err
}

// Session is a directory of per-worker files on a mounted CephFS. Do and
// Geometry are safe for concurrent use; Close is called once, after every
// op has finished.
type Session struct {
	conn    *rados.Conn
	mount   *cephfs.MountInfo
	target  Target
	files   []*cephfs.File
	created []string // files, then directories, this session made
	keep    bool
	geo     engine.Geometry
	// bound is the op timeout on the calls that wait on the MDS: Sync's
	// and Close's.
	bound *bound
}

var (
	_ engine.ClusterReporter = (*Session)(nil)
	_ engine.ClusterWatcher  = (*Session)(nil)
	_ engine.Syncer          = (*Session)(nil)
)

// file is one worker's file as found before Open.
type file struct {
	path   string
	exists bool
	size   int64
	ours   bool  // it carries markAttr
	markBS int64 // the block size markAttr records, 0 if mixed
}

// Open mounts the file system and opens (creating and laying out where
// needed) one file per worker under the target's directory. It refuses
// with an *engine.UsageError, before any I/O: an unknown file system; a
// path that is not a directory; a workload that writes to a file cephbench
// did not write, without Force; a file to create without a size.
func Open(ctx context.Context, w *spec.Workload) (*Session, error) {
	t, err := ParseTarget(w.Target.Location)
	if err != nil {
		return nil, err
	}
	t.Conn.Options = clientOptions()
	conn, err := cbrados.Connect(t.Conn, w.OpTimeout.D())
	if err != nil {
		return nil, err
	}
	s := &Session{conn: conn, target: t, keep: w.Keep}
	fail := func(err error) (*Session, error) {
		s.keep = false // nothing of a failed Open is kept
		return nil, errors.Join(err, s.Close(ctx))
	}
	if s.mount, err = cephfs.CreateFromRados(conn); err != nil {
		return fail(fmt.Errorf("cephfs: %w", err))
	}
	// What bounds each libcephfs call: the mount, client_mount_timeout
	// (15 s, set by Connect); reads and writes of the workers' files, the
	// OSDs' answer within rados_osd_op_timeout (the op timeout), which the
	// mount's client takes from the connection; fsync and everything
	// Close does (close, unlink, rmdir, unmount) wait on the MDS, which
	// has no client-side timeout, so bound gives them the op timeout from
	// Go. Open's own calls (stat, mkdir, open, the layout) are bounded by
	// nothing but the MDS.
	s.bound = &bound{mount: s.mount, timeout: w.OpTimeout.D()}
	if s.bound.timeout <= 0 {
		s.bound.timeout = cbrados.DefaultOpTimeout
	}
	if t.FS != "" {
		if err := s.mount.SelectFilesystem(t.FS); err != nil {
			return fail(fmt.Errorf("cephfs: selecting file system %s: %w", t.FS, err))
		}
	}
	if err := s.mount.Mount(); err != nil {
		if cbrados.Errno(err) == syscall.ENOENT {
			return fail(engine.Usagef("no CephFS file system %q to mount", t.FS))
		}
		return fail(fmt.Errorf("mounting CephFS %s: %w", fsName(t.FS), err))
	}
	if st, err := s.mount.Statx(t.Dir, cephfs.StatxMode, 0); err == nil && st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return fail(engine.Usagef("%s on CephFS is not a directory", t.Dir))
	}

	bs := int64(w.BlockSize)
	files := make([]file, w.Workers)
	size := int64(w.FileSize)
	for i := range files {
		f, err := s.inspect(path.Join(t.Dir, fmt.Sprintf("cephbench.%d.dat", i)))
		if err != nil {
			return fail(err)
		}
		switch {
		case f.exists && !f.ours && w.Writes() && !w.Force:
			return fail(engine.Usagef("%s exists on CephFS and holds data cephbench did not write; pass --force to overwrite it", f.path))
		case !f.exists && w.FileSize == 0:
			return fail(engine.Usagef("%s does not exist: file size needed to create it (--size)", f.path))
		case w.FileSize == 0 && (i == 0 || f.size < size):
			size = f.size // the smallest of the existing files
		}
		files[i] = f
	}
	if size < bs {
		return fail(engine.Usagef("the files in %s hold %d bytes, less than one %s block", t.Dir, size, w.BlockSize))
	}
	s.geo = engine.Geometry{Layout: engine.Blocks, Files: len(files), Size: size - size%bs}
	// Only now, with the workload checked, does anything change on CephFS.
	if err := s.makeDir(t.Dir); err != nil {
		return fail(err)
	}
	for i, f := range files {
		cf, err := s.prepare(ctx, w, f, int64(i), size)
		if err != nil {
			return fail(err)
		}
		s.files = append(s.files, cf)
	}
	return s, nil
}

func fsName(fs string) string {
	if fs == "" {
		return "(default file system)"
	}
	return fs
}

// makeDir creates dir and its missing parents, remembering the ones it
// made; a path that exists must be a directory.
func (s *Session) makeDir(dir string) error {
	st, err := s.mount.Statx(dir, cephfs.StatxMode, 0)
	switch {
	case err == nil && st.Mode&syscall.S_IFMT != syscall.S_IFDIR:
		return engine.Usagef("%s on CephFS is not a directory", dir)
	case err == nil:
		return nil
	case cbrados.Errno(err) != syscall.ENOENT:
		return fmt.Errorf("cephfs: %s: %w", dir, err)
	}
	if parent := path.Dir(dir); parent != dir {
		if err := s.makeDir(parent); err != nil {
			return err
		}
	}
	if err := s.mount.MakeDir(dir, 0o755); err != nil {
		return fmt.Errorf("cephfs: creating %s: %w", dir, err)
	}
	s.created = append(s.created, dir)
	// Marked, so that a cleanup after a kept run knows it made it.
	if err := s.mount.SetXattr(dir, markAttr, []byte("dir"), cephfs.XattrDefault); err != nil {
		return fmt.Errorf("cephfs: marking %s: %w", dir, err)
	}
	return nil
}

// inspect looks at a worker's file without changing anything.
func (s *Session) inspect(p string) (file, error) {
	f := file{path: p}
	st, err := s.mount.Statx(p, cephfs.StatxMode|cephfs.StatxSize, 0)
	switch {
	case cbrados.Errno(err) == syscall.ENOENT:
		return f, nil
	case err != nil:
		return f, fmt.Errorf("cephfs: %s: %w", p, err)
	case st.Mode&syscall.S_IFMT != syscall.S_IFREG:
		return f, engine.Usagef("%s on CephFS is not a regular file", p)
	}
	f.exists, f.size = true, int64(st.Size)
	if v, err := s.mount.GetXattr(p, markAttr); err == nil {
		f.ours = true
		f.markBS, _ = strconv.ParseInt(string(v), 10, 64)
	}
	return f, nil
}

// prepare opens f, creating it if missing, and lays out what the
// workload needs: the whole file when it is new or when verified reads
// would meet blocks of another size, the part beyond its end when it is
// shorter than size.
func (s *Session) prepare(ctx context.Context, w *spec.Workload, f file, id, size int64) (*cephfs.File, error) {
	bs := int64(w.BlockSize)
	flags := os.O_RDWR
	if !w.Writes() && f.exists && size <= f.size && !(f.ours && w.Verify && f.markBS != bs) {
		flags = os.O_RDONLY
	}
	if !f.exists {
		flags |= os.O_CREATE | os.O_EXCL
	}
	if w.Direct {
		flags |= syscall.O_DIRECT // libcephfs then bypasses its object cache
	}
	cf, err := s.mount.Open(f.path, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cephfs: opening %s: %w", f.path, err)
	}
	if !f.exists {
		s.created = append(s.created, f.path)
	}
	var from int64 = -1 // nothing to lay out
	switch {
	case !f.exists, f.ours && w.Verify && f.markBS != bs:
		from = 0
	case f.size < size:
		from = f.size - f.size%bs // rewrite a partial last block whole
	}
	ours := f.ours || !f.exists
	mark := func(bs int64) error {
		return cf.SetXattr(markAttr, []byte(strconv.FormatInt(bs, 10)), cephfs.XattrDefault)
	}
	err = nil
	switch {
	case from >= 0:
		if ours {
			err = mark(0) // until the layout completes, the block size is unknown
		}
		if err == nil {
			err = workload.LayOut(ctx, cf, id, bs, from, size, 4)
		}
		if err == nil {
			err = cf.Fsync(cephfs.SyncAll)
		}
		if err == nil && ours && (from == 0 || f.markBS == bs) {
			err = mark(bs)
		}
	case f.ours && w.Writes() && f.markBS != bs:
		err = mark(0) // this run's blocks will sit among blocks of another size
	}
	if err != nil {
		cf.Close()
		return nil, fmt.Errorf("cephfs: laying out %s: %w", f.path, err)
	}
	return cf, nil
}

// ClusterSnapshot records the cluster's state over the session's
// connection.
func (s *Session) ClusterSnapshot() (*cluster.Snapshot, error) { return cluster.Collect(s.conn) }

// DialCluster connects anew to the session's cluster, for a watch of the
// file system's metadata and data pools (`ceph fs ls`).
func (s *Session) DialCluster() (cluster.Conn, []string, error) {
	conn, err := cbrados.Connect(s.target.Conn, 0)
	if err != nil {
		return nil, nil, err
	}
	c := cluster.NewConn(conn)
	fs, err := c.Mon([]byte(`{"prefix":"fs ls","format":"json"}`))
	var pools []string
	if err == nil {
		pools, err = cluster.FSPools(fs, s.target.FS)
	}
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("ceph fs ls: %w", err)
	}
	return c, pools, nil
}

// Geometry returns the Blocks layout: one file per worker.
func (s *Session) Geometry() engine.Geometry { return s.geo }

// Do executes op with a blocking libcephfs call. A read or write of a
// file whose capabilities the session holds (its own workers' files)
// waits on the OSDs alone, and librados' op timeout (rados_osd_op_timeout,
// which the mount's client shares with the connection) bounds it: it then
// fails with ETIMEDOUT.
func (s *Session) Do(ctx context.Context, op *engine.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f := s.files[op.File]
	if op.Kind == engine.Write {
		_, err := f.WriteAt(op.Buf, op.Offset)
		if err != nil {
			return cbrados.ErrnoOf(err)
		}
		return nil
	}
	n, err := f.ReadAt(op.Buf, op.Offset)
	switch {
	case err != nil && n < len(op.Buf):
		return fmt.Errorf("%s at %d: %w", s.target.Dir, op.Offset, cbrados.ErrnoOf(err))
	case n < len(op.Buf):
		return fmt.Errorf("%s at %d: read %d of %d bytes", s.target.Dir, op.Offset, n, len(op.Buf))
	}
	return nil
}

// Sync fsyncs file through libcephfs: the MDS and OSDs hold what was
// written. It waits on the MDS, so the op timeout bounds it from here.
func (s *Session) Sync(_ context.Context, file int) error {
	return s.bound.call("fsync", func() error { return s.files[file].Fsync(cephfs.SyncAll) })
}

// Close closes the files, removes the files and directories the session
// created unless it keeps them, and unmounts. It never removes what it
// did not create, nor a directory it made that now holds something else.
// Each of these waits on the MDS and is bounded by the op timeout: after
// one times out, the mount is aborted and what is left is not removed
// (cephbench cleanup removes it later).
func (s *Session) Close(context.Context) error {
	if s.bound == nil { // the mount was never made
		s.conn.Shutdown()
		return nil
	}
	b := s.bound
	var err error
	for _, f := range s.files {
		err = errors.Join(err, b.call("closing a file", f.Close))
	}
	s.files = nil
	if !s.keep {
		for i := len(s.created) - 1; i >= 0 && !b.aborted.Load(); i-- {
			err = errors.Join(err, b.call("removing "+s.created[i], func() error { return s.remove(s.created[i]) }))
		}
		if b.aborted.Load() {
			err = errors.Join(err, fmt.Errorf("cephfs: what the run created in %s was not all removed, as the mount was aborted", s.target.Dir))
		}
	}
	if b.stuck.Load() {
		// A libcephfs call still runs on this mount: releasing it, or the
		// connection its client shares, would pull them from under it.
		return err
	}
	if s.mount.IsMounted() {
		err = errors.Join(err, b.call("unmounting", s.mount.Unmount))
	}
	if b.stuck.Load() {
		return err
	}
	err = errors.Join(err, s.mount.Release())
	s.conn.Shutdown()
	return err
}

// remove removes p, a file or directory the session created, unless it
// is gone, or a directory that now holds something else.
func (s *Session) remove(p string) error {
	failpoint.Hit(failpoint.Remove)
	st, err := s.mount.Statx(p, cephfs.StatxMode, 0)
	switch {
	case err != nil:
		return nil
	case st.Mode&syscall.S_IFMT == syscall.S_IFDIR:
		if e := s.mount.RemoveDir(p); e != nil && cbrados.Errno(e) != syscall.ENOTEMPTY {
			return fmt.Errorf("cephfs: removing %s: %w", p, e)
		}
	default:
		if e := s.mount.Unlink(p); e != nil {
			return fmt.Errorf("cephfs: removing %s: %w", p, e)
		}
	}
	return nil
}

// cleanKept removes what kept or killed runs left in the target's
// directory: the per-worker files cephbench laid out (they carry its
// mark), in it and in the marked directories under it (each host's of a
// run on several hosts), then the directories it made, if they are
// empty. Nothing unmarked is touched.
func cleanKept(target spec.Target) error {
	t, err := ParseTarget(target.Location)
	if err != nil {
		return err
	}
	conn, err := cbrados.Connect(t.Conn, 0)
	if err != nil {
		return err
	}
	defer conn.Shutdown()
	released := cbrados.ReleaseKilledQuiesce(conn)
	m, err := cephfs.CreateFromRados(conn)
	if err != nil {
		return errors.Join(released, err)
	}
	defer m.Release()
	if t.FS != "" {
		if err := m.SelectFilesystem(t.FS); err != nil {
			return errors.Join(released, err)
		}
	}
	if err := m.Mount(); err != nil {
		return errors.Join(released, err)
	}
	defer m.Unmount()
	// First: a killed run's session holds its files' capabilities, and
	// looking at them would wait for the MDS to give up on it.
	evictDeadClients(m)
	errs := cleanDir(m, t.Dir)
	for dir := t.Dir; dir != "/" && marked(m, dir); dir = path.Dir(dir) {
		if err := m.RemoveDir(dir); err != nil {
			break // not empty: what is there now is not ours to remove
		}
	}
	return errors.Join(released, errs)
}

func marked(m *cephfs.MountInfo, p string) bool {
	_, err := m.GetXattr(p, markAttr)
	return err == nil
}

// cleanDir removes the marked per-worker files in dir (cephbench.N.dat),
// and in each marked directory under it (where each host of a run on
// several hosts works) the same, then that directory if it is empty.
func cleanDir(m *cephfs.MountInfo, dir string) error {
	d, err := m.OpenDir(dir)
	if cbrados.Errno(err) == syscall.ENOENT {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cephfs: listing %s: %w", dir, err)
	}
	var files, dirs []string
	for {
		e, err := d.ReadDir()
		if err != nil || e == nil {
			break
		}
		p := path.Join(dir, e.Name())
		switch {
		case e.DType() == cephfs.DTypeDir && e.Name() != "." && e.Name() != "..":
			dirs = append(dirs, p)
		case e.DType() == cephfs.DTypeReg && workerFile(e.Name()):
			files = append(files, p)
		}
	}
	d.Close()
	var errs error
	for _, p := range files {
		if marked(m, p) {
			errs = errors.Join(errs, m.Unlink(p))
		}
	}
	for _, p := range dirs {
		if !marked(m, p) {
			continue
		}
		errs = errors.Join(errs, cleanDir(m, p))
		if err := m.RemoveDir(p); err != nil && cbrados.Errno(err) != syscall.ENOTEMPTY {
			errs = errors.Join(errs, err)
		}
	}
	return errs
}

// workerFile reports whether name is how a session names a worker's
// file: cephbench.N.dat.
func workerFile(name string) bool {
	n, ok := strings.CutPrefix(name, "cephbench.")
	n, dat := strings.CutSuffix(n, ".dat")
	return ok && dat && n != "" && strings.Trim(n, "0123456789") == ""
}
