package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/workload"
)

// markAttr is the extended attribute on the files cephbench lays out. Its
// value is the block size of the verifiable data the file holds, or "0"
// when blocks of several sizes may be mixed in it.
const markAttr = "user.cephbench"

// workerAttr marks, beside markAttr, the files a session creates for its
// workers in a directory target, so that cleanup finds them whatever the
// file name format called them.
const workerAttr = "user.cephbench.worker"

// regular is a regular file of the target as found before Open.
type regular struct {
	path   string
	id     int64 // op.File, and the id in the headers of its blocks
	exists bool
	size   int64
	ours   bool  // it carries markAttr
	markBS int64 // the block size markAttr records, 0 if unknown
	worker bool  // a worker's file in a directory target (see workerAttr)
}

// inspect looks at path without changing anything.
func inspect(path string, id int64) (regular, error) {
	r := regular{path: path, id: id}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, &engine.UsageError{Err: err}
	}
	if !fi.Mode().IsRegular() {
		return r, engine.Usagef("%s is not a regular file", path)
	}
	r.exists, r.size = true, fi.Size()
	var buf [32]byte
	n, err := unix.Getxattr(path, markAttr, buf[:])
	switch {
	case err == nil:
		r.ours = true
		if bs, err := strconv.ParseInt(string(buf[:n]), 10, 64); err == nil {
			r.markBS = bs
		}
	case errors.Is(err, unix.ERANGE): // marked, with a value not ours to read
		r.ours = true
	case errors.Is(err, unix.ENODATA), errors.Is(err, unix.ENOTSUP):
	default:
		return r, engine.Usagef("reading the attributes of %s: %v", path, err)
	}
	return r, nil
}

// openFiles opens regular files, one per entry of paths (op.File indexes
// them), creating and laying out those that do not exist; workerFiles says
// they are a directory target's files for its workers.
func openFiles(ctx context.Context, w *spec.Workload, paths []string, workerFiles bool) (*Session, error) {
	bs := int64(w.BlockSize)
	rs := make([]regular, len(paths))
	for i, p := range paths {
		r, err := inspect(p, int64(i))
		if err != nil {
			return nil, err
		}
		r.worker = workerFiles
		rs[i] = r
	}

	// Each file holds the regions of its workers (see workload.Region).
	sizes := make([]int64, len(rs))
	size := int64(0)
	for i := range rs {
		sizes[i] = fileExtent(w, i, len(rs))
		size = max(size, sizes[i])
	}
	if size == 0 {
		size = math.MaxInt64
		for _, r := range rs {
			switch {
			case !r.exists:
				return nil, engine.Usagef("%s does not exist: file size needed to create it", r.path)
			case r.size == 0:
				return nil, engine.Usagef("%s is empty: file size needed", r.path)
			case r.size < bs:
				return nil, engine.Usagef("%s holds %d bytes, less than one %s block", r.path, r.size, w.BlockSize)
			}
			size = min(size, r.size)
		}
		for i := range sizes {
			sizes[i] = size
		}
	}
	for i, r := range rs {
		switch {
		case !r.exists || r.ours || w.Force:
		case w.Writes():
			return nil, engine.Usagef("%s exists and holds data cephbench did not write; pass --force to overwrite it", r.path)
		case r.size < sizes[i]:
			return nil, engine.Usagef("%s holds %d bytes, less than the file size %s, and cephbench did not write it; pass --force to extend it",
				r.path, r.size, spec.Size(sizes[i]))
		}
	}

	s := &Session{
		limit: size,
		keep:  w.Keep,
		geo: engine.Geometry{
			Layout: engine.Blocks,
			Files:  len(rs),
			Size:   size - size%bs,
		},
	}
	for i, r := range rs {
		created, err := prepare(ctx, w, r, sizes[i])
		if created {
			s.created = append(s.created, r.path)
		}
		var f *os.File
		fellBack := false
		if err == nil {
			f, fellBack, err = openFlags(r.path, rwFlag(w), w.Direct)
			if err != nil {
				err = &engine.UsageError{Err: err}
			}
		}
		if err != nil {
			// Nothing of a failed Open is kept, whatever the workload says.
			s.keep = false
			return nil, errors.Join(err, s.Close(ctx))
		}
		s.files = append(s.files, f)
		s.fallback = s.fallback || fellBack
	}
	if w.Direct && !s.fallback {
		s.geo.Alignment = directAlign
	}
	s.useRawIO(w)
	return s, nil
}

// fileExtent is the size file (of files) must have to hold the regions of
// its workers, each w.FileSize bytes from its offset, or its own size
// (workload.FileSize); 0 when w gives no file size.
func fileExtent(w *spec.Workload, file, files int) int64 {
	switch {
	case w.MinFileSize > 0:
		return workload.FileSize(w, file)
	case w.FileSize == 0:
		return 0
	}
	last := file + (w.Workers-1-file)/files*files // the file's last worker
	if nf := w.FilesPerWorker; nf > 1 && files == w.Workers*nf {
		last = file / nf
	}
	return int64(w.Offset) + int64(max(last, 0))*int64(w.OffsetIncrement) + int64(w.FileSize)
}

// prepare creates r if it does not exist and lays out what the workload
// needs: the whole file when it is new, or when verified reads would meet
// blocks of another size; the part beyond its end when it is smaller than
// size. It reports whether it created the file.
func prepare(ctx context.Context, w *spec.Workload, r regular, size int64) (created bool, err error) {
	bs := int64(w.BlockSize)
	var from int64
	switch {
	case !r.exists:
	case r.ours && w.Verify && r.markBS != bs:
	case r.size < size:
		from = r.size - r.size%bs // rewrite a partial last block whole
	case r.ours && w.Writes() && r.markBS != bs:
		// This run's blocks will sit among blocks of another size.
		return false, setMark(r.path, 0)
	default:
		return false, nil
	}

	var f *os.File
	if r.exists {
		f, err = os.OpenFile(r.path, os.O_RDWR, 0)
	} else {
		f, err = createMarked(r.path, r.worker)
	}
	if err != nil {
		return false, &engine.UsageError{Err: err}
	}
	created = !r.exists
	ours := r.ours || created
	if ours {
		// Until the layout completes, the file's block size is unknown.
		err = setMark(r.path, 0)
	}
	if err == nil {
		err = layout(ctx, f, r.id, bs, from, size)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return created, fmt.Errorf("laying out %s: %w", r.path, err)
	}
	if ours && (from == 0 || r.markBS == bs) {
		err = setMark(r.path, bs)
	}
	return created, err
}

// createMarked creates path exclusively, carrying the mark of data whose
// block size is unknown from the moment it has a name, so that a run
// killed at any moment leaves no file of its own that a cleanup could not
// tell from the user's: the file is made unnamed (O_TMPFILE), marked, then
// linked in. Where the filesystem makes no unnamed files, or /proc is not
// there to link one through, it is created, then marked. worker adds
// workerAttr.
func createMarked(path string, worker bool) (*os.File, error) {
	fd, err := unix.Open(filepath.Dir(path), unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return createThenMark(path, worker)
	}
	f := os.NewFile(uintptr(fd), path)
	err = unix.Fsetxattr(fd, markAttr, []byte("0"), 0)
	if err == nil && worker {
		err = unix.Fsetxattr(fd, workerAttr, []byte("1"), 0)
	}
	if err == nil {
		err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	}
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, unix.EEXIST):
		f.Close()
		return nil, &fs.PathError{Op: "create", Path: path, Err: err}
	case errors.Is(err, unix.ENOTSUP), errors.Is(err, unix.ENOENT):
		f.Close() // no user attributes, or no /proc
		return createThenMark(path, worker)
	}
	f.Close()
	return nil, fmt.Errorf("creating %s marked as cephbench data: %w", path, err)
}

// createThenMark creates path exclusively and marks it: a kill between
// the two leaves an empty file without the mark.
func createThenMark(path string, worker bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	err = setMark(path, 0)
	if err == nil && worker {
		if err = unix.Setxattr(path, workerAttr, []byte("1"), 0); errors.Is(err, unix.ENOTSUP) {
			err = nil
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// setMark records that path holds cephbench data in blocks of bs bytes (0:
// mixed sizes). A filesystem without user extended attributes cannot hold
// the mark; the file then counts as foreign on the next run.
func setMark(path string, bs int64) error {
	err := unix.Setxattr(path, markAttr, []byte(strconv.FormatInt(bs, 10)), 0)
	if err != nil && !errors.Is(err, unix.ENOTSUP) {
		return fmt.Errorf("marking %s as cephbench data: %w", path, err)
	}
	return nil
}

// layout lays out f's blocks from offset from up to size (see
// workload.LayOut), and has the data reach the disk before it returns, so
// it does not burden the benchmark's writeback.
func layout(ctx context.Context, f *os.File, id, bs, from, size int64) error {
	if err := workload.LayOut(ctx, f, id, bs, from, size, 1); err != nil {
		return err
	}
	return f.Sync()
}
