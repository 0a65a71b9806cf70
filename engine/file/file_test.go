package file_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/file"
	"github.com/cephbench/cephbench/internal/io/devsafe/devsafetest"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/workload"
)

const (
	bs  = 4096
	mib = 1 << 20
)

// newWorkload is a valid mixed workload on location; edit tweaks it.
func newWorkload(t *testing.T, location string, edit func(w *spec.Workload)) *spec.Workload {
	t.Helper()
	w := &spec.Workload{
		Target:      spec.Target{Scheme: "file", Location: location},
		Pattern:     spec.Random,
		ReadPercent: 50,
		BlockSize:   bs,
		FileSize:    mib,
		Workers:     1,
		QueueDepth:  1,
		TotalOps:    1,
	}
	if edit != nil {
		edit(w)
	}
	if err := w.Validate(); err != nil {
		t.Fatalf("test workload: %v", err)
	}
	return w
}

func readOnly(w *spec.Workload) { w.ReadPercent = 100 }

func mustOpen(t *testing.T, w *spec.Workload) *file.Session {
	t.Helper()
	s, err := engine.Open(context.Background(), w)
	if err != nil {
		t.Fatalf("Open %s: %v", w.Target.Location, err)
	}
	return s.(*file.Session)
}

func mustClose(t *testing.T, s engine.Session) {
	t.Helper()
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// wantUsage checks that opening w fails with a usage error saying want.
func wantUsage(t *testing.T, w *spec.Workload, want string) {
	t.Helper()
	s, err := engine.Open(context.Background(), w)
	if err == nil {
		s.Close(context.Background())
		t.Fatalf("Open %s succeeded, want a usage error saying %q", w.Target.Location, want)
	}
	if !engine.IsUsage(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open %s: %v (usage error: %v), want a usage error saying %q", w.Target.Location, err, engine.IsUsage(err), want)
	}
}

// block returns a buffer of n bytes aligned for direct I/O.
func block(n int) []byte {
	b := make([]byte, n+4096)
	skip := (4096 - int(uintptr(unsafe.Pointer(&b[0]))%4096)) % 4096
	return b[skip : skip+n : skip+n]
}

// writeBlock writes a verifiable block at (fileIdx, off).
func writeBlock(t *testing.T, s engine.Session, fileIdx int, off int64, n int) {
	t.Helper()
	op := &engine.Op{Kind: engine.Write, File: fileIdx, Offset: off, Buf: block(n)}
	workload.Fill(op.Buf)
	workload.Stamp(op)
	if err := s.Do(context.Background(), op); err != nil {
		t.Fatalf("write file %d offset %d: %v", fileIdx, off, err)
	}
}

// verifyBlock reads the block at (fileIdx, off) and checks it holds what
// the workload writes there.
func verifyBlock(t *testing.T, s engine.Session, fileIdx int, off int64, n int) {
	t.Helper()
	op := &engine.Op{Kind: engine.Read, File: fileIdx, Offset: off, Buf: block(n)}
	if err := s.Do(context.Background(), op); err != nil {
		t.Fatalf("read file %d offset %d: %v", fileIdx, off, err)
	}
	if err := workload.Check(op); err != nil {
		t.Fatalf("read file %d offset %d: %v", fileIdx, off, err)
	}
}

func verifyAll(t *testing.T, s engine.Session, fileIdx int, size int64, n int) {
	t.Helper()
	for off := int64(0); off+int64(n) <= size; off += int64(n) {
		verifyBlock(t, s, fileIdx, off, n)
	}
}

// names lists dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// foreign writes a file cephbench did not make.
func foreign(t *testing.T, path string, size int) []byte {
	t.Helper()
	data := bytes.Repeat([]byte("precious"), size/8)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

func wantContent(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed", path)
	}
}

func TestDirectoryOneFilePerWorker(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, newWorkload(t, dir, func(w *spec.Workload) { w.Workers = 3 }))
	want := engine.Geometry{Layout: engine.Blocks, Files: 3, Size: mib}
	if got := s.Geometry(); got != want {
		t.Errorf("Geometry = %+v, want %+v", got, want)
	}
	if got, want := names(t, dir), []string{"cephbench.0.dat", "cephbench.1.dat", "cephbench.2.dat"}; !equal(got, want) {
		t.Fatalf("directory holds %q, want %q", got, want)
	}
	for i := 0; i < 3; i++ {
		path := filepath.Join(dir, fmt.Sprintf("cephbench.%d.dat", i))
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		if st.Size != mib || st.Blocks*512 < mib {
			t.Errorf("%s: %d bytes, %d allocated; want %d written, not a sparse file", path, st.Size, st.Blocks*512, mib)
		}
		verifyAll(t, s, i, mib, bs)
	}
	writeBlock(t, s, 1, 8*bs, bs)
	verifyBlock(t, s, 1, 8*bs, bs)
	mustClose(t, s)
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("after Close the directory holds %q, want nothing", got)
	}
}

// A prefix names the files as fio names a job's: PREFIX.N.0.
func TestDirectoryFilePrefix(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, newWorkload(t, dir, func(w *spec.Workload) { w.Workers = 2; w.FilePrefix = "seq-read" }))
	if got, want := names(t, dir), []string{"seq-read.0.0", "seq-read.1.0"}; !equal(got, want) {
		t.Errorf("directory holds %q, want %q", got, want)
	}
	verifyAll(t, s, 1, mib, bs)
	mustClose(t, s)
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("after Close the directory holds %q, want nothing", got)
	}
}

func equal(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

func TestKeepLeavesFilesForTheNextRun(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, newWorkload(t, dir, func(w *spec.Workload) { w.Workers = 2; w.Keep = true }))
	writeBlock(t, s, 0, 0, bs)
	mustClose(t, s)
	kept := []string{"cephbench.0.dat", "cephbench.1.dat"}
	if got := names(t, dir); !equal(got, kept) {
		t.Fatalf("with Keep the directory holds %q after Close, want %q", got, kept)
	}

	// The kept files are cephbench's: a writing run may reuse them
	// without --force, takes their size, and leaves them, as it did not
	// create them.
	s = mustOpen(t, newWorkload(t, dir, func(w *spec.Workload) { w.Workers = 2; w.FileSize = 0 }))
	if got := s.Geometry().Size; got != mib {
		t.Errorf("Size of kept files = %d, want %d", got, mib)
	}
	verifyAll(t, s, 1, mib, bs)
	mustClose(t, s)
	if got := names(t, dir); !equal(got, kept) {
		t.Errorf("a run over kept files left %q, want %q", got, kept)
	}
}

func TestForeignFileIsReadNotWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	data := foreign(t, path, 64<<10)
	want := path + " exists and holds data cephbench did not write; pass --force to overwrite it"
	wantUsage(t, newWorkload(t, path, nil), want)
	wantUsage(t, newWorkload(t, path, func(w *spec.Workload) { w.ReadPercent = 0 }), want)
	wantContent(t, path, data)

	s := mustOpen(t, newWorkload(t, path, func(w *spec.Workload) { readOnly(w); w.FileSize = 0 }))
	if got := s.Geometry(); got.Files != 1 || got.Size != 64<<10 {
		t.Errorf("Geometry = %+v, want 1 file of %d bytes", got, 64<<10)
	}
	op := &engine.Op{Kind: engine.Read, Offset: bs, Buf: make([]byte, bs)}
	if err := s.Do(context.Background(), op); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(op.Buf, data[bs:2*bs]) {
		t.Error("read returned other bytes than the file holds")
	}
	mustClose(t, s)
	wantContent(t, path, data)
}

func TestForeignFileSmallerThanFileSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	data := foreign(t, path, 64<<10)
	wantUsage(t, newWorkload(t, path, readOnly), "pass --force to extend it")
	wantContent(t, path, data)
}

func TestForceOverwritesForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	foreign(t, path, 64<<10)
	s := mustOpen(t, newWorkload(t, path, func(w *spec.Workload) { w.Force = true; w.FileSize = 0 }))
	writeBlock(t, s, 0, 2*bs, bs)
	verifyBlock(t, s, 0, 2*bs, bs)
	mustClose(t, s)
	if _, err := os.Stat(path); err != nil {
		t.Errorf("Close removed a file the session did not create: %v", err)
	}
}

func TestMarkedFileIsWritable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	foreign(t, path, mib)
	if err := unix.Setxattr(path, "user.cephbench", []byte("4096"), 0); errors.Is(err, unix.ENOTSUP) {
		t.Skip("no user extended attributes on this filesystem")
	} else if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, newWorkload(t, path, nil))
	writeBlock(t, s, 0, 0, bs)
	mustClose(t, s)
	if _, err := os.Stat(path); err != nil {
		t.Errorf("Close removed a file the session did not create: %v", err)
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small")
	foreign(t, small, 1000)
	missingDir := filepath.Join(dir, "no", "such")
	noSize := func(w *spec.Workload) { w.FileSize = 0 }

	wantUsage(t, newWorkload(t, filepath.Join(missingDir, "f"), nil), "directory "+missingDir+" does not exist")
	wantUsage(t, newWorkload(t, filepath.Join(dir, "new"), noSize), "file size needed")
	wantUsage(t, newWorkload(t, empty, noSize), "file size needed")
	wantUsage(t, newWorkload(t, small, func(w *spec.Workload) { readOnly(w); noSize(w) }), "holds 1000 bytes, less than one 4K block")
	wantUsage(t, newWorkload(t, "/dev/null", nil), "not a regular file, a directory or a block device")
	wantUsage(t, newWorkload(t, "", nil), "no path given")
	sub := t.TempDir()
	wantUsage(t, newWorkload(t, sub, noSize), "file size needed")

	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Open left a file behind: %v", err)
	}
	if got := names(t, sub); len(got) != 0 {
		t.Errorf("a refused Open left %q behind", got)
	}
}

func TestSizeRoundsDownToBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	s := mustOpen(t, newWorkload(t, path, func(w *spec.Workload) { w.FileSize = mib + 100 }))
	defer mustClose(t, s)
	if got := s.Geometry().Size; got != mib {
		t.Errorf("Size = %d, want %d: the last partial block is not addressable", got, mib)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != mib+100 {
		t.Errorf("file laid out to %d bytes, want %d", fi.Size(), mib+100)
	}
	op := &engine.Op{Kind: engine.Read, Offset: mib, Buf: make([]byte, bs)}
	if err := s.Do(context.Background(), op); err == nil {
		t.Error("a read past the file size succeeded")
	}
	op = &engine.Op{Kind: engine.Read, File: 1, Buf: make([]byte, bs)}
	if err := s.Do(context.Background(), op); err == nil {
		t.Error("a read of file 1 of a one-file target succeeded")
	}
}

func TestOwnFileGrowsToFileSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	mustClose(t, mustOpen(t, newWorkload(t, path, func(w *spec.Workload) { w.Keep = true })))
	s := mustOpen(t, newWorkload(t, path, func(w *spec.Workload) { readOnly(w); w.FileSize = 2 * mib }))
	verifyAll(t, s, 0, 2*mib, bs)
	mustClose(t, s)
	if fi, err := os.Stat(path); err != nil || fi.Size() != 2*mib {
		t.Errorf("kept file after growing: %v, %v; want %d bytes, still there", fi, err, 2*mib)
	}
}

func TestVerifyRelaysOutOtherBlockSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	mustClose(t, mustOpen(t, newWorkload(t, path, func(w *spec.Workload) { w.Keep = true })))
	s := mustOpen(t, newWorkload(t, path, func(w *spec.Workload) {
		readOnly(w)
		w.BlockSize = 4 * bs
		w.Verify = true
	}))
	verifyAll(t, s, 0, mib, 4*bs)
	mustClose(t, s)
}

func TestCanceledLayoutLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := engine.Open(ctx, newWorkload(t, dir, func(w *spec.Workload) { w.Workers = 2; w.Keep = true }))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a canceled context: %v, want context.Canceled", err)
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("a canceled Open left %q behind", got)
	}
}

func TestShortRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	foreign(t, path, 4*bs)
	s := mustOpen(t, newWorkload(t, path, func(w *spec.Workload) { readOnly(w); w.FileSize = 0 }))
	defer mustClose(t, s)
	if err := os.Truncate(path, bs+100); err != nil {
		t.Fatal(err)
	}
	op := &engine.Op{Kind: engine.Read, Offset: bs, Buf: make([]byte, bs)}
	if err := s.Do(context.Background(), op); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read across the end of the file: %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestDoCanceled(t *testing.T) {
	s := mustOpen(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), nil))
	defer mustClose(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	op := &engine.Op{Kind: engine.Read, Buf: make([]byte, bs)}
	if err := s.Do(ctx, op); !errors.Is(err, context.Canceled) {
		t.Errorf("Do with a canceled context: %v, want context.Canceled", err)
	}
}

func TestDoDoesNotAllocate(t *testing.T) {
	s := mustOpen(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), nil))
	defer mustClose(t, s)
	ctx := context.Background()
	for _, kind := range []engine.OpKind{engine.Read, engine.Write} {
		op := &engine.Op{Kind: kind, Offset: 3 * bs, Buf: make([]byte, bs)}
		workload.Fill(op.Buf)
		workload.Stamp(op)
		var err error
		allocs := testing.AllocsPerRun(100, func() { err = s.Do(ctx, op) })
		if err != nil {
			t.Fatal(err)
		}
		if allocs != 0 {
			t.Errorf("%v allocates %v times per op, want 0", kind, allocs)
		}
	}
}

func TestConcurrentDo(t *testing.T) {
	const workers = 8
	s := mustOpen(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), func(w *spec.Workload) { w.Workers = workers }))
	defer mustClose(t, s)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wr := &engine.Op{Kind: engine.Write, Buf: make([]byte, bs)}
			rd := &engine.Op{Kind: engine.Read, Buf: make([]byte, bs)}
			workload.Fill(wr.Buf)
			for i := 0; i < 200; i++ {
				wr.Offset = int64((i*workers+g)%(mib/bs)) * bs
				rd.Offset = wr.Offset
				workload.Stamp(wr)
				if err := s.Do(context.Background(), wr); err != nil {
					errs <- err
					return
				}
				if err := s.Do(context.Background(), rd); err != nil {
					errs <- err
					return
				}
				if err := workload.Check(rd); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// openedDirect reports whether this process has path open with O_DIRECT.
func openedDirect(t *testing.T, path string) bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if dest, err := os.Readlink("/proc/self/fd/" + fd.Name()); err != nil || dest != path {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + fd.Name())
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(l, "flags:"); ok {
				flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
				if err != nil {
					t.Fatalf("fdinfo flags %q: %v", v, err)
				}
				return flags&unix.O_DIRECT != 0
			}
		}
	}
	t.Fatalf("%s is not open", path)
	return false
}

func TestDirect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	s := mustOpen(t, newWorkload(t, path, func(w *spec.Workload) { w.Direct = true }))
	defer mustClose(t, s)
	if s.DirectFallback() {
		t.Fatalf("the filesystem of %s refused O_DIRECT", path)
	}
	if got := s.Geometry().Alignment; got != 4096 {
		t.Errorf("Alignment = %d, want 4096", got)
	}
	if !openedDirect(t, path) {
		t.Errorf("%s is not open with O_DIRECT", path)
	}
	writeBlock(t, s, 0, 5*bs, bs)
	verifyBlock(t, s, 0, 5*bs, bs)
}

// noDirectDir returns a directory on a filesystem that refuses O_DIRECT:
// /dev/shm where tmpfs does (kernels before 6.6), else a ramfs mount.
func noDirectDir(t *testing.T) string {
	t.Helper()
	if dir, err := os.MkdirTemp("/dev/shm", "cephbench-test"); err == nil {
		t.Cleanup(func() { os.RemoveAll(dir) })
		f, err := os.OpenFile(filepath.Join(dir, "probe"), os.O_CREATE|os.O_RDWR|unix.O_DIRECT, 0o644)
		if errors.Is(err, unix.EINVAL) {
			return dir
		}
		if err == nil {
			f.Close()
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("tmpfs takes O_DIRECT here, and mounting a ramfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "ramfs", "cephbench-test", dir).CombinedOutput(); err != nil {
		t.Skipf("tmpfs takes O_DIRECT here, and ramfs cannot be mounted: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

func TestDirectFallback(t *testing.T) {
	dir := noDirectDir(t)
	s := mustOpen(t, newWorkload(t, dir, func(w *spec.Workload) { w.Direct = true }))
	if !s.DirectFallback() {
		t.Errorf("DirectFallback = false on a filesystem that refuses O_DIRECT")
	}
	if got := s.Geometry().Alignment; got != 0 {
		t.Errorf("Alignment = %d for buffered I/O, want 0", got)
	}
	path := filepath.Join(dir, "cephbench.0.dat")
	if openedDirect(t, path) {
		t.Errorf("%s is open with O_DIRECT", path)
	}
	writeBlock(t, s, 0, 0, bs)
	verifyBlock(t, s, 0, 0, bs)
	mustClose(t, s)
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("after Close %s holds %q", dir, got)
	}
}

func TestBlockDevice(t *testing.T) {
	dev, _ := devsafetest.Loop(t, 64*mib)
	noSize := func(w *spec.Workload) { w.FileSize = 0 }

	s := mustOpen(t, newWorkload(t, dev, noSize))
	if got, want := s.Geometry(), (engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 64 * mib}); got != want {
		t.Errorf("Geometry = %+v, want %+v", got, want)
	}
	writeBlock(t, s, 0, 63*mib, bs)
	verifyBlock(t, s, 0, 63*mib, bs)
	mustClose(t, s)
	if _, err := os.Stat(dev); err != nil {
		t.Fatalf("after Close: %v", err)
	}

	s = mustOpen(t, newWorkload(t, dev, func(w *spec.Workload) { w.Direct = true; noSize(w) }))
	if got := s.Geometry(); got.Alignment != 4096 || s.DirectFallback() {
		t.Errorf("direct: Geometry = %+v, fallback %v; want alignment 4096 with O_DIRECT", got, s.DirectFallback())
	}
	if !openedDirect(t, dev) {
		t.Errorf("%s is not open with O_DIRECT", dev)
	}
	verifyBlock(t, s, 0, 63*mib, bs)
	mustClose(t, s)

	wantUsage(t, newWorkload(t, dev, func(w *spec.Workload) { w.FileSize = 65 * mib }), "larger than "+dev)

	// A filesystem on the device: writes need --force, reads do not.
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput(); err != nil {
		t.Logf("mkfs.ext4: %v %s; writing the ext superblock magic instead", err, out)
		f, err := os.OpenFile(dev, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteAt([]byte{0x53, 0xef}, 1080)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	wantUsage(t, newWorkload(t, dev, noSize), "signature; pass --force to write anyway")
	mustClose(t, mustOpen(t, newWorkload(t, dev, func(w *spec.Workload) { readOnly(w); noSize(w) })))
	s = mustOpen(t, newWorkload(t, dev, func(w *spec.Workload) { w.Force = true; noSize(w) }))
	writeBlock(t, s, 0, 32*mib, bs)
	mustClose(t, s)
}

func TestLocalFilesUseRawIO(t *testing.T) {
	s := mustOpen(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), readOnly))
	defer s.Close(context.Background())
	if !s.BlocksProcessor() {
		t.Error("a file on a local filesystem does not use raw system calls")
	}
	op := &engine.Op{Kind: engine.Read, Buf: make([]byte, bs), Offset: 2 * bs}
	if err := s.Do(context.Background(), op); err != nil {
		t.Fatal(err)
	}
	if err := workload.Check(op); err != nil {
		t.Errorf("raw read returned the wrong block: %v", err)
	}
	many := mustOpen(t, newWorkload(t, filepath.Join(t.TempDir(), "g"), func(w *spec.Workload) {
		readOnly(w)
		w.Workers, w.QueueDepth = 16, 32
	}))
	defer many.Close(context.Background())
	if many.BlocksProcessor() {
		t.Error("512 ops in flight would each hold a processor")
	}
}

func TestCleanKeptRemovesOnlyMarkedFiles(t *testing.T) {
	dir := t.TempDir()
	w := newWorkload(t, dir, func(w *spec.Workload) { w.Workers = 2; w.Keep = true; w.ReadPercent = 0 })
	s := mustOpen(t, w)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "cephbench.2.dat") // named like ours, not made by cephbench
	if err := os.WriteFile(foreign, []byte("the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := engine.CleanKept(context.Background(), spec.Target{Scheme: "file", Location: dir}, nil); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "cephbench.2.dat" {
		t.Errorf("after the cleanup the directory holds %v; want only the unmarked file", entries)
	}
}
