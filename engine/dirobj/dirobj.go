// Package dirobj is the "dirobj" engine: an object store in a local
// directory, one file per object. It is the default target when there is no
// cluster, and it mirrors rados bench: a write names its objects
// "benchmark_data_<host>_<pid>_object<N>", a kept write records them in the
// file "benchmark_last_metadata", and later seq or rand reads in the same
// directory read those objects. Importing the package registers the scheme;
// the target is "dirobj://DIR" with DIR relative or absolute.
//
// Files are not synced: like rados bench against an OSD, a write completes
// when the store has the data, here the page cache (or the device, with
// direct I/O).
package dirobj

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/failpoint"
	"github.com/cephbench/cephbench/internal/io/sysio"
	"github.com/cephbench/cephbench/internal/peer/radosbench"
	"github.com/cephbench/cephbench/spec"
)

// MetadataName is the file in which a kept write session records its
// objects, as rados bench's metadata object of the same name does.
const MetadataName = "benchmark_last_metadata"

// directAlignment is what O_DIRECT needs of buffers, offsets and lengths
// on every filesystem this runs on.
const directAlignment = 4096

func init() {
	engine.Register("dirobj", engine.Typed(Open), engine.Description{
		Syntax: "dirobj://DIR", Layout: engine.Objects, LocalPath: true, DirectFallback: true,
		Cleaner: func(_ context.Context, t spec.Target, j *writeahead.Judge) error { return Cleanup(t.Location, j) },
		// Each host's objects go in a directory of its own, which the
		// session creates and removes.
		Share: func(w *spec.Workload, host string) error {
			w.Target.Location = engine.InSubdirectory(w.Target.Location, host)
			return nil
		},
	})
}

// Metadata describes the objects of the last kept write in a directory.
type Metadata struct {
	// Prefix names the objects: Prefix + "_object" + N.
	Prefix string `json:"prefix"`
	// Objects is one more than the highest object number: random writes
	// may have left some numbers below it unused.
	Objects int64 `json:"objects"`
	// ObjectSize and OpSize are in bytes: the size of each object and of
	// the writes that made it.
	ObjectSize int64 `json:"object_size"`
	OpSize     int64 `json:"op_size"`
}

// ReadMetadata returns the metadata of the last kept write in dir. ok is
// false, with a nil error, when there is none; a file that is not valid
// metadata is an error.
func ReadMetadata(dir string) (m Metadata, ok bool, err error) {
	path := filepath.Join(dir, MetadataName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Metadata{}, false, nil
	}
	if err != nil {
		return Metadata{}, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Metadata{}, false, fmt.Errorf("%s is not cephbench object metadata: %w", path, err)
	}
	if m.Prefix == "" || strings.ContainsRune(m.Prefix, '/') || m.Objects < 0 || m.ObjectSize <= 0 || m.OpSize <= 0 {
		return Metadata{}, false, fmt.Errorf("%s is not cephbench object metadata: want a file name as prefix, objects >= 0 and sizes > 0; it has prefix %q, objects %d, object_size %d, op_size %d",
			path, m.Prefix, m.Objects, m.ObjectSize, m.OpSize)
	}
	return m, true, nil
}

// Cleanup removes what cephbench wrote and left in dir: the objects of
// every write record there (a killed run's, or a kept run's that made its
// directory), then each record; the objects of the last kept write, then
// its metadata file, as rados cleanup does; the same in each
// subdirectory, where the hosts of a run on several hosts write; and dir
// itself if a record says cephbench made it and it is now empty. It
// removes only files a record or the metadata names, and does nothing
// when dir holds neither; a record whose run j does not judge ended stays,
// with its files.
func Cleanup(dir string, j *writeahead.Judge) error {
	names, err := listNames(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	createdDir, err := cleanRecords(dir, names, j)
	if err != nil {
		return err
	}
	if err := cleanMetadata(dir); err != nil {
		return err
	}
	for _, name := range names {
		sub := filepath.Join(dir, name)
		if fi, err := os.Lstat(sub); err == nil && fi.IsDir() && holdsOurs(sub) {
			if err := Cleanup(sub, j); err != nil {
				return err
			}
		}
	}
	if createdDir {
		if err := os.Remove(dir); err != nil && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
			return err
		}
	}
	return nil
}

// holdsOurs reports whether dir holds a write record or kept metadata.
func holdsOurs(dir string) bool {
	names, _ := listNames(dir)
	for _, n := range names {
		if n == MetadataName || writeahead.IsName(n) {
			return true
		}
	}
	return false
}

// cleanRecords removes the objects of each write record among names (the
// files in dir), then the record, and reports whether one says its
// session made dir, leaving those whose run j does not judge ended. An
// empty record is a run killed while writing it, before any object.
func cleanRecords(dir string, names []string, j *writeahead.Judge) (createdDir bool, err error) {
	for _, name := range names {
		if !writeahead.IsName(name) {
			continue
		}
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return createdDir, err
		}
		if len(b) > 0 {
			r, err := writeahead.Decode(name, b)
			if err != nil {
				return createdDir, err
			}
			fi, err := os.Stat(path)
			if err != nil {
				return createdDir, err
			}
			if !j.Ended(r, fi.ModTime()) {
				continue
			}
			createdDir = createdDir || r.CreatedDir
			if err := removeNames(dir, names, r.Owns); err != nil {
				return createdDir, err // the record stays for a second Cleanup
			}
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return createdDir, err
		}
	}
	return createdDir, nil
}

// cleanMetadata removes the objects of the last kept write in dir, then
// its metadata file.
func cleanMetadata(dir string) error {
	m, ok, err := ReadMetadata(dir)
	if err != nil || !ok {
		return err
	}
	names, err := objectNames(dir, m.Prefix)
	if err != nil {
		return err
	}
	if err := removeNames(dir, names, func(string) bool { return true }); err != nil {
		// Keep the metadata, so a second Cleanup can finish the job.
		return err
	}
	if err := os.Remove(filepath.Join(dir, MetadataName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// removeNames removes the files among names in dir that match says are
// to go; one already gone is not an error.
func removeNames(dir string, names []string, match func(string) bool) error {
	var errs []error
	for _, name := range names {
		if !match(name) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Session is an open object directory. Geometry, Do and DirectFallback are
// safe for concurrent use; Close is called once, after the last Do.
type Session struct {
	dir    string
	prefix string
	base   string // the path of object N is base + N
	geo    engine.Geometry
	// objectSize and opSize are recorded in the metadata; a write of a
	// whole object replaces the file.
	objectSize int64
	opSize     int64
	keep       bool
	writes     bool
	direct     bool
	fallback   atomic.Bool
	// preexisting are the objects named like this session's that were
	// there at Open: Close never removes them.
	preexisting map[string]bool
	// createdDirs are the directories Open created, deepest first.
	createdDirs []string
	// record is the path of the write record Open put in dir before any
	// object, "" if it put none (a read, or objects another record names).
	record string
}

var (
	_ engine.Session          = (*Session)(nil)
	_ engine.BufferedFallback = (*Session)(nil)
)

// Open opens the directory w.Target.Location for w. A workload that only
// reads opens the objects of the last kept write there; one that also
// reads and finds such objects reads and writes them; a write-only
// workload writes objects of its own. The directory is created when the
// workload writes. Every error is an *engine.UsageError.
func Open(_ context.Context, w *spec.Workload) (*Session, error) {
	if w.Target.Location == "" {
		return nil, engine.Usagef("dirobj: no directory given (want dirobj://DIR)")
	}
	dir := filepath.Clean(w.Target.Location)
	s := &Session{
		dir:        dir,
		prefix:     radosbench.ObjectPrefix(os.Getpid()),
		objectSize: int64(w.EffectiveObjectSize()),
		opSize:     int64(w.BlockSize),
		keep:       w.Keep,
		writes:     w.Writes(),
		direct:     w.Direct,
		geo:        engine.Geometry{Layout: engine.Objects},
	}
	if w.Direct {
		s.geo.Alignment = directAlignment
	}

	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return nil, engine.Usagef("dirobj: %s is not a directory", w.Target.Location)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, engine.Usagef("dirobj: %v", err)
	}
	exists := err == nil

	if w.Reads() && exists {
		m, ok, err := ReadMetadata(dir)
		if err != nil {
			return nil, engine.Usagef("dirobj: %v", err)
		}
		if ok {
			if int64(w.BlockSize) > m.ObjectSize {
				return nil, engine.Usagef("dirobj: the objects in %s are %s, smaller than the block size %s",
					w.Target.Location, spec.Size(m.ObjectSize), w.BlockSize)
			}
			s.prefix, s.objectSize, s.opSize = m.Prefix, m.ObjectSize, m.OpSize
			s.geo.ObjectCount, s.geo.ObjectSize = m.Objects, m.ObjectSize
		}
	}
	if exists {
		names, err := objectNames(dir, s.prefix)
		if err != nil {
			return nil, engine.Usagef("dirobj: %v", err)
		}
		s.preexisting = make(map[string]bool, len(names))
		for _, n := range names {
			s.preexisting[n] = true
		}
	}
	if !s.writes && (s.geo.ObjectCount == 0 || len(s.preexisting) == 0) {
		return nil, engine.Usagef("no objects to read in %s: run a write first (with keep)", w.Target.Location)
	}
	if !exists {
		s.createdDirs = missingDirs(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, engine.Usagef("dirobj: %v", err)
		}
	}
	s.base = filepath.Join(dir, s.prefix) + "_object"
	if s.writes {
		if err := s.writeRecord(); err != nil {
			return nil, errors.Join(engine.Usagef("dirobj: %v", err), s.Close(context.Background()))
		}
	}
	return s, nil
}

// writeRecord puts the session's write record in its directory, before
// any object, unless a record of its objects is there already (an earlier
// kept write's, whose objects it reads and writes).
func (s *Session) writeRecord() error {
	r := writeahead.Record{Stem: s.prefix + "_object", CreatedDir: len(s.createdDirs) > 0}.Mine()
	path := filepath.Join(s.dir, r.Name())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	s.record = path
	_, err = f.Write(r.Encode())
	return errors.Join(err, f.Close())
}

// dropRecord removes the session's write record, once nothing it names
// is left or the metadata names it.
func (s *Session) dropRecord() error {
	if s.record == "" {
		return nil
	}
	if err := os.Remove(s.record); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	s.record = ""
	return nil
}

// Prefix is the name prefix of the objects the session reads and writes:
// "benchmark_data_<host>_<pid>" for a new write, the recorded one for a
// session that opened the objects of an earlier write.
func (s *Session) Prefix() string { return s.prefix }

// Geometry reports the Objects layout and, for sessions that read the
// objects of an earlier write, how many there are.
func (s *Session) Geometry() engine.Geometry { return s.geo }

// DirectFallback reports whether the workload asked for direct I/O and the
// filesystem refused O_DIRECT, so that ops ran buffered instead.
func (s *Session) DirectFallback() bool { return s.fallback.Load() }

// Do reads or writes len(op.Buf) bytes at op.Offset in object op.Object.
// A write of a whole object at offset 0 replaces the object; other writes
// create it if needed and write in place. A read past the end of the
// object fails with io.ErrUnexpectedEOF, a read of a missing object with
// ENOENT. Do returns ctx's error if ctx is done before the op starts; a
// started op runs to the end.
func (s *Session) Do(ctx context.Context, op *engine.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if op.Object < 0 {
		return fmt.Errorf("dirobj: invalid object number %d", op.Object)
	}
	path := s.base + strconv.FormatInt(op.Object, 10)
	if op.Kind == engine.Write {
		flags := unix.O_WRONLY | unix.O_CREAT
		if op.Offset == 0 && int64(len(op.Buf)) == s.objectSize {
			flags |= unix.O_TRUNC
		}
		fd, err := s.openObject(path, flags)
		if err != nil {
			return err
		}
		err = sysio.PwriteFull(fd, op.Buf, op.Offset, false)
		if cerr := unix.Close(fd); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			return &fs.PathError{Op: "write", Path: path, Err: err}
		}
		return nil
	}
	fd, err := s.openObject(path, unix.O_RDONLY)
	if err != nil {
		return err
	}
	err = sysio.PreadFull(fd, op.Buf, op.Offset, false)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	_ = unix.Close(fd) // a read-only descriptor has nothing to flush
	if err != nil {
		return &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return nil
}

// sysOpen is open(2); tests replace it to play a filesystem without
// O_DIRECT.
var sysOpen = unix.Open

// openObject opens path with O_DIRECT when the workload asked for it and
// the filesystem has it. Filesystems without it fail the open with EINVAL;
// after the first such failure the session stops trying.
func (s *Session) openObject(path string, flags int) (int, error) {
	flags |= unix.O_CLOEXEC
	if s.direct && !s.fallback.Load() {
		fd, err := openRetry(path, flags|unix.O_DIRECT)
		if err != unix.EINVAL {
			return fd, wrapOpen(path, err)
		}
		s.fallback.Store(true)
	}
	fd, err := openRetry(path, flags)
	return fd, wrapOpen(path, err)
}

func openRetry(path string, flags int) (int, error) {
	for {
		fd, err := sysOpen(path, flags, 0o644)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func wrapOpen(path string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: "open", Path: path, Err: err}
}

// Close, with keep, records this session's objects in the metadata file
// when the workload wrote; without keep it removes the objects this
// session created. Either way it removes the directories Open created if
// they are empty. Objects that were there at Open always stay.
func (s *Session) Close(ctx context.Context) error {
	names, err := objectNames(s.dir, s.prefix)
	if err != nil {
		return err
	}
	if s.keep && s.writes && len(names) > 0 {
		if err := s.writeMetadata(names); err != nil || len(s.createdDirs) > 0 {
			// A record saying the directory is cephbench's stays, for
			// the cleanup to remove the directory too.
			return err
		}
		return s.dropRecord() // the metadata names the objects now
	}
	if !s.keep {
		if err := s.removeCreated(ctx, names); err != nil {
			return err
		}
	}
	if err := s.dropRecord(); err != nil {
		return err
	}
	for _, d := range s.createdDirs {
		err := os.Remove(d)
		switch {
		case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
			return nil // someone else's files are there now
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return err
		}
	}
	return nil
}

// removeCreated removes the objects among names that were not there at
// Open.
func (s *Session) removeCreated(ctx context.Context, names []string) error {
	for _, name := range names {
		if s.preexisting[name] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("dirobj: cleanup of %s interrupted: %w", s.dir, err)
		}
		failpoint.Hit(failpoint.Remove)
		if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func (s *Session) writeMetadata(names []string) error {
	var count int64
	for _, name := range names {
		n, _ := radosbench.ObjectNumber(name, s.prefix)
		count = max(count, n+1)
	}
	b, err := json.Marshal(Metadata{Prefix: s.prefix, Objects: count, ObjectSize: s.objectSize, OpSize: s.opSize})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.dir, MetadataName), append(b, '\n'), 0o644)
}

// objectNames lists the files in dir that are objects named with prefix.
func objectNames(dir, prefix string) ([]string, error) {
	all, err := listNames(dir)
	if err != nil {
		return nil, err
	}
	names := all[:0]
	for _, name := range all {
		if _, ok := radosbench.ObjectNumber(name, prefix); ok {
			names = append(names, name)
		}
	}
	return names, nil
}

// listNames lists the names in dir, unsorted: a directory may hold
// millions of objects.
func listNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// missingDirs lists dir and those of its parents that do not exist,
// deepest first.
func missingDirs(dir string) []string {
	var missing []string
	for p := dir; ; {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return missing
		}
		missing = append(missing, p)
		parent := filepath.Dir(p)
		if parent == p {
			return missing
		}
		p = parent
	}
}
