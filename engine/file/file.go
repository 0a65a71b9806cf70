// Package file is the engine for local targets, scheme "file": a regular
// file shared by every worker, a directory holding one file per worker, or
// a block device. Opening the package registers the scheme.
//
// It never destroys data it did not write unless the workload says Force:
// an existing file is written only if cephbench laid it out (it carries
// the extended attribute user.cephbench), and a device only if
// devsafe.CheckDevice finds nothing in use on it. Files a session creates
// hold real, verifiable data, not holes, and are removed at Close unless
// the workload says Keep; nothing else is ever removed.
//
// Ops run as one blocking system call each, or, when the workload's
// IOEngine is libaio or io_uring, many at a time in the kernel (see
// AsyncSession).
package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/failpoint"
	"github.com/cephbench/cephbench/internal/io/devsafe"
	"github.com/cephbench/cephbench/internal/io/kaio"
	"github.com/cephbench/cephbench/internal/io/sysio"
	"github.com/cephbench/cephbench/spec"
)

func init() {
	engine.Register("file", engine.Func(open), engine.Description{
		Syntax: "PATH", Layout: engine.Blocks, Kind: engine.KindLocalDirectory,
		LocalPath: true, LocalDisks: true, DirectFallback: true, FilePrefix: true,
		IOEngines: []string{"psync", kaio.LibAIO, kaio.IOURing},
		Cleaner:   func(_ context.Context, t spec.Target, _ *writeahead.Judge) error { return cleanKept(t.Location) },
		// In a directory (a shared filesystem's, maybe) each host's files
		// are named after it; a file or device path is each host's own.
		Share: func(w *spec.Workload, host string) error {
			if w.FileNameFormat != "" && !strings.Contains(w.FileNameFormat, "$jobname") {
				return engine.Usagef("file name format %q: without $jobname, the hosts' files in one directory would have the same names", w.FileNameFormat)
			}
			if w.FilePrefix == "" {
				w.FilePrefix = host
			} else {
				w.FilePrefix = host + "-" + w.FilePrefix
			}
			return nil
		},
	})
}

// directAlign is the buffer alignment asked for under O_DIRECT: the page
// size, which satisfies every filesystem and the devices whose logical
// block size is not larger.
const directAlign = 4096

// Session is an open file target. Do and Geometry are safe for concurrent
// use by many goroutines, one per operation in flight; Close is called
// once, after every Do has returned.
type Session struct {
	files    []*os.File
	fds      []int // the files' descriptors, for raw I/O
	raw      bool  // every file is local: Do uses raw system calls
	limit    int64 // bytes addressable in each file: the file size asked for
	geo      engine.Geometry
	created  []string // removed at Close unless keep
	keep     bool
	fallback bool
}

var (
	_ engine.Syncer           = (*Session)(nil)
	_ engine.BufferedFallback = (*Session)(nil)
)

// Geometry returns the Blocks layout: one file per worker for a directory
// target, otherwise one; Size is the file size rounded down to a whole
// number of blocks; Alignment is set when I/O bypasses the page cache.
func (s *Session) Geometry() engine.Geometry { return s.geo }

// BlocksProcessor reports that Do uses raw system calls (see sysio), so
// each op in flight needs a GOMAXPROCS slot of its own.
func (s *Session) BlocksProcessor() bool { return s.raw }

// maxRawSlots bounds the ops in flight that get a processor each: past it,
// the runtime's per-processor cost (caches, GC workers) outweighs the gain.
const maxRawSlots = 256

// useRawIO switches Do to raw system calls when every file is local and
// the workload's ops in flight are few enough to have a processor each.
func (s *Session) useRawIO(w *spec.Workload) {
	s.raw = w.Workers*w.QueueDepth <= maxRawSlots
	for _, f := range s.files {
		s.fds = append(s.fds, int(f.Fd()))
		s.raw = s.raw && localIO(f)
	}
}

// DirectFallback reports that the workload asked for direct I/O but the
// filesystem refused O_DIRECT (tmpfs on older kernels, ramfs, some FUSE
// filesystems), so the session does buffered I/O through the page cache.
func (s *Session) DirectFallback() bool { return s.fallback }

// Do reads or writes len(op.Buf) bytes at op.Offset in file op.File with
// one positioned system call, which cannot be interrupted: ctx is only
// checked before it starts. A read that reaches the end of the file early
// fails with an error wrapping io.ErrUnexpectedEOF; an op outside the file
// size fails without I/O. Do does not allocate on success.
func (s *Session) Do(ctx context.Context, op *engine.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.check(op); err != nil {
		return err
	}
	f := s.files[op.File]
	switch {
	case s.raw && op.Kind == engine.Read:
		err := sysio.PreadFull(s.fds[op.File], op.Buf, op.Offset, true)
		if err == io.EOF {
			return s.shortRead(op)
		}
		return err
	case s.raw && op.Kind == engine.Write:
		return sysio.PwriteFull(s.fds[op.File], op.Buf, op.Offset, true)
	case op.Kind == engine.Read:
		_, err := f.ReadAt(op.Buf, op.Offset)
		if err == io.EOF {
			return s.shortRead(op)
		}
		return err
	case op.Kind == engine.Write:
		_, err := f.WriteAt(op.Buf, op.Offset)
		return err
	}
	return fmt.Errorf("file: unsupported op kind %v", op.Kind)
}

// check returns why op addresses nothing of the target, or nil.
func (s *Session) check(op *engine.Op) error {
	if op.File < 0 || op.File >= len(s.files) {
		return fmt.Errorf("file: op on file %d of a target with %d", op.File, len(s.files))
	}
	if op.Offset < 0 || op.Offset > s.limit-int64(len(op.Buf)) {
		return fmt.Errorf("file: %d bytes at offset %d are outside the %d bytes of %s", len(op.Buf), op.Offset, s.limit, s.files[op.File].Name())
	}
	return nil
}

// shortRead is the error of a read that met the end of its file early,
// which only a file truncated under the benchmark does.
func (s *Session) shortRead(op *engine.Op) error {
	return fmt.Errorf("%s: short read of %d bytes at offset %d: %w", s.files[op.File].Name(), len(op.Buf), op.Offset, io.ErrUnexpectedEOF)
}

// Sync fsyncs file: the kernel's page cache (or, with O_DIRECT, the
// device's write cache) holds nothing of it afterwards. It cannot be
// interrupted.
func (s *Session) Sync(_ context.Context, file int) error { return s.files[file].Sync() }

// Close closes every file and, unless the workload said Keep, removes the
// files this session created. It returns every error it met.
func (s *Session) Close(context.Context) error {
	var errs []error
	for _, f := range s.files {
		errs = append(errs, f.Close())
	}
	if !s.keep {
		for _, p := range s.created {
			failpoint.Hit(failpoint.Remove)
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// open returns a *Session for w's target, or an *AsyncSession when w asks
// for the kernel's asynchronous I/O.
func open(ctx context.Context, w *spec.Workload) (engine.Session, error) {
	switch w.IOEngine {
	case "", "psync":
		return engine.Typed(openSession)(ctx, w)
	case kaio.LibAIO, kaio.IOURing:
		return engine.Typed(openAsync)(ctx, w)
	}
	return nil, engine.Usagef("file target: unknown I/O engine %q (want psync, libaio or io_uring)", w.IOEngine)
}

// openSession opens w's target for one blocking system call per op.
func openSession(ctx context.Context, w *spec.Workload) (*Session, error) {
	loc := w.Target.Location
	if loc == "" {
		return nil, engine.Usagef("file target: no path given")
	}
	fi, err := os.Stat(loc)
	switch {
	case err == nil && fi.IsDir():
		nf := max(w.FilesPerWorker, 1)
		paths := make([]string, 0, w.Workers*nf)
		seen := map[string]bool{}
		for i := range w.Workers {
			for f := range nf {
				name := workerFileName(w, i, f)
				if seen[name] || name == "" || name == "." || name == ".." {
					return nil, engine.Usagef("file name format %q names two files %q, or none: give each worker's files their own names ($jobnum, $filenum)", w.FileNameFormat, name)
				}
				seen[name] = true
				paths = append(paths, filepath.Join(loc, name))
			}
		}
		return openFiles(ctx, w, paths, true)
	case err == nil && fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0:
		return openDevice(w, loc)
	case err == nil && !fi.Mode().IsRegular():
		return nil, engine.Usagef("%s is not a regular file, a directory or a block device", loc)
	case err == nil:
		return openFiles(ctx, w, []string{loc}, false)
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(loc)
		di, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, engine.Usagef("cannot create %s: directory %s does not exist", loc, dir)
		case err != nil:
			return nil, engine.Usagef("cannot create %s: %v", loc, err)
		case !di.IsDir():
			return nil, engine.Usagef("cannot create %s: %s is not a directory", loc, dir)
		}
		return openFiles(ctx, w, []string{loc}, false)
	}
	return nil, &engine.UsageError{Err: err}
}

// openFlags opens path for the session's I/O, with O_DIRECT if direct,
// and reports whether the filesystem refused O_DIRECT so that the file was
// opened without it.
func openFlags(path string, flag int, direct bool) (f *os.File, fellBack bool, err error) {
	if direct {
		f, err = os.OpenFile(path, flag|unix.O_DIRECT, 0)
		if !errors.Is(err, unix.EINVAL) {
			return f, false, err
		}
		fellBack = true
	}
	f, err = os.OpenFile(path, flag, 0)
	return f, fellBack, err
}

func rwFlag(w *spec.Workload) int {
	if w.Writes() {
		return os.O_RDWR
	}
	return os.O_RDONLY
}

// openDevice opens a block device. Nothing on it is created or removed.
func openDevice(w *spec.Workload, path string) (*Session, error) {
	if w.Writes() && !w.Force {
		if err := devsafe.CheckDevice(path); err != nil {
			return nil, &engine.UsageError{Err: err}
		}
	}
	f, fellBack, err := openFlags(path, rwFlag(w), w.Direct)
	if err != nil {
		return nil, &engine.UsageError{Err: err}
	}
	size, sector, err := deviceSizes(f)
	if err != nil {
		f.Close()
		return nil, &engine.UsageError{Err: fmt.Errorf("%s: %w", path, err)}
	}
	want := int64(w.FileSize)
	switch {
	case want == 0:
		want = size
	case want > size:
		f.Close()
		return nil, engine.Usagef("file size %s is larger than %s, which holds %d bytes", w.FileSize, path, size)
	}
	if want < int64(w.BlockSize) {
		f.Close()
		return nil, engine.Usagef("%s holds %d bytes, less than one %s block", path, want, w.BlockSize)
	}
	s := &Session{
		files: []*os.File{f},
		limit: want,
		keep:  w.Keep,
		geo: engine.Geometry{
			Layout: engine.Blocks,
			Files:  1,
			Size:   want - want%int64(w.BlockSize),
		},
		fallback: fellBack,
	}
	if w.Direct && !fellBack {
		s.geo.Alignment = max(directAlign, sector)
	}
	s.useRawIO(w)
	return s, nil
}

// deviceSizes returns a block device's size in bytes and its logical
// block size, the smallest unit of direct I/O on it.
func deviceSizes(f *os.File) (size int64, sector int, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var ierr error
	err = rc.Control(func(fd uintptr) {
		var n uint64
		if n, ierr = unix.IoctlGetUint64(int(fd), unix.BLKGETSIZE64); ierr != nil {
			ierr = fmt.Errorf("BLKGETSIZE64: %w", ierr)
			return
		}
		size = int64(n)
		if sector, ierr = unix.IoctlGetInt(int(fd), unix.BLKSSZGET); ierr != nil {
			ierr = fmt.Errorf("BLKSSZGET: %w", ierr)
		}
	})
	return size, sector, errors.Join(err, ierr)
}

// WorkerFile is the name of worker i's file in a directory target without
// a file prefix.
func WorkerFile(i int) string { return "cephbench." + strconv.Itoa(i) + ".dat" }

// workerFileName names file f of worker i in a directory target:
// as its file name format says, or PREFIX.I.F, as fio names a job's
// JOBNAME.I.F, or cephbench.I.dat, and cephbench.I.F.dat when workers have
// several files.
func workerFileName(w *spec.Workload, i, f int) string {
	switch {
	case w.FileNameFormat != "":
		return strings.NewReplacer("$jobname", w.FilePrefix, "$jobnum", strconv.Itoa(i), "$filenum", strconv.Itoa(f), "$clientuid", "").Replace(w.FileNameFormat)
	case w.FilePrefix != "":
		return w.FilePrefix + "." + strconv.Itoa(i) + "." + strconv.Itoa(f)
	case w.FilesPerWorker > 1:
		return "cephbench." + strconv.Itoa(i) + "." + strconv.Itoa(f) + ".dat"
	}
	return WorkerFile(i)
}
