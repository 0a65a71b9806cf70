package dirobj

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/enginetest"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/workload"
)

func conformance(whole bool) enginetest.Config {
	return enginetest.Config{
		NewTarget: func(t *testing.T) spec.Target {
			// Not yet there, so the engine's creating and removing of
			// its directory is checked too.
			return spec.Target{Scheme: "dirobj", Location: filepath.Join(t.TempDir(), "objects")}
		},
		Persistent: true,
		// Everything below the target's parent, so that a directory left
		// behind shows.
		Leftovers: func(t *testing.T, target spec.Target) []string {
			parent := filepath.Dir(target.Location)
			var names []string
			err := filepath.WalkDir(parent, func(path string, _ fs.DirEntry, err error) error {
				if path != parent {
					names = append(names, strings.TrimPrefix(path, parent+"/"))
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return names
		},
		Plant: func(t *testing.T, target spec.Target) string {
			// Another host's object, which only the prefix tells apart.
			const name = "benchmark_data_otherhost_1_object0"
			if err := os.MkdirAll(target.Location, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(target.Location, name), "theirs")
			return filepath.Join(filepath.Base(target.Location), name)
		},
		BadTarget: func(t *testing.T) spec.Target {
			file := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(file, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return spec.Target{Scheme: "dirobj", Location: filepath.Join(file, "objects")}
		},
		EmptyReadIsUsage: true,
		WholeObjects:     whole,
	}
}

func TestConformance(t *testing.T) { enginetest.Run(t, conformance(false)) }

// TestConformanceWholeObjects covers writes of whole objects, which
// replace the file rather than write into it.
func TestConformanceWholeObjects(t *testing.T) { enginetest.Run(t, conformance(true)) }

// listDir returns the names in dir, or nil if it does not exist.
func listDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, err
}

const (
	testBlock  = 4 << 10
	testObject = 8 << 10
)

func testWorkload(dir string, readPercent int, keep bool) *spec.Workload {
	return &spec.Workload{
		Target: spec.Target{Scheme: "dirobj", Location: dir}, Pattern: spec.Sequential,
		ReadPercent: readPercent, BlockSize: testBlock, ObjectSize: testObject, Objects: 16,
		Workers: 1, QueueDepth: 1, TotalOps: 1, Keep: keep,
	}
}

func mustOpen(t *testing.T, w *spec.Workload) *Session {
	t.Helper()
	s, err := Open(t.Context(), w)
	if err != nil {
		t.Fatalf("Open(%s, %d%% reads): %v", w.Target, w.ReadPercent, err)
	}
	return s
}

func mustClose(t *testing.T, s *Session) {
	t.Helper()
	if err := s.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// writeObjects writes objects 0..n-1 block by block with verifiable data.
func writeObjects(t *testing.T, s *Session, n int64) {
	t.Helper()
	for obj := range n {
		for off := int64(0); off < testObject; off += testBlock {
			op := &engine.Op{Kind: engine.Write, Object: obj, Offset: off, Buf: alignedBlock()}
			workload.Fill(op.Buf)
			workload.Stamp(op)
			if err := s.Do(t.Context(), op); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// alignedBlock returns a block that direct I/O accepts.
func alignedBlock() []byte {
	b := make([]byte, 2*testBlock)
	off := int(uintptr(unsafe.Pointer(&b[0])) % directAlignment)
	if off != 0 {
		off = directAlignment - off
	}
	return b[off : off+testBlock]
}

func read(t *testing.T, s *Session, obj, off int64) (*engine.Op, error) {
	t.Helper()
	op := &engine.Op{Kind: engine.Read, Object: obj, Offset: off, Buf: alignedBlock()}
	return op, s.Do(t.Context(), op)
}

func TestMetadataRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, testWorkload(dir, 0, true))
	if got := w.Geometry().ObjectCount; got != 0 {
		t.Errorf("a new write session's ObjectCount = %d, want 0", got)
	}
	host, _ := os.Hostname()
	if want := "benchmark_data_" + host + "_" + strconv.Itoa(os.Getpid()); w.Prefix() != want {
		t.Errorf("write prefix %q, want rados bench's %q", w.Prefix(), want)
	}
	writeObjects(t, w, 5)
	mustClose(t, w)

	m, ok, err := ReadMetadata(dir)
	want := Metadata{Prefix: w.Prefix(), Objects: 5, ObjectSize: testObject, OpSize: testBlock}
	if err != nil || !ok || m != want {
		t.Fatalf("ReadMetadata = %+v, %v, %v; want %+v", m, ok, err, want)
	}

	for _, p := range []spec.Pattern{spec.Sequential, spec.Random} {
		rw := testWorkload(dir, 100, false)
		rw.Pattern = p
		r := mustOpen(t, rw)
		if got := r.Geometry().ObjectCount; got != 5 {
			t.Errorf("%s read after a kept write of 5 objects: ObjectCount = %d", p, got)
		}
		op, err := read(t, r, 4, testBlock)
		if err != nil {
			t.Fatalf("%s read of the last object: %v", p, err)
		}
		if err := workload.Check(op); err != nil {
			t.Error(err)
		}
		mustClose(t, r)
	}
	if names, _ := listDir(dir); len(names) != 6 {
		t.Errorf("after reads without keep the directory holds %v; want the 5 objects and the metadata", names)
	}
}

// TestReadsLastWriteOfAnotherProcess checks that reads find objects by the
// recorded prefix, not by this process's.
func TestReadsLastWriteOfAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	const prefix = "benchmark_data_elsewhere_42"
	for i := range 3 {
		name := filepath.Join(dir, prefix+"_object"+strconv.Itoa(i))
		if err := os.WriteFile(name, make([]byte, testObject), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, MetadataName), `{"prefix":"`+prefix+`","objects":3,"object_size":8192,"op_size":4096}`)
	r := mustOpen(t, testWorkload(dir, 100, false))
	if r.Prefix() != prefix || r.Geometry().ObjectCount != 3 {
		t.Errorf("read session: prefix %q, %d objects; want %q, 3", r.Prefix(), r.Geometry().ObjectCount, prefix)
	}
	if _, err := read(t, r, 2, 0); err != nil {
		t.Error(err)
	}
	mustClose(t, r)
}

func TestReadObjectsLargerThanWritten(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, testWorkload(dir, 0, true))
	writeObjects(t, w, 1)
	mustClose(t, w)
	rw := testWorkload(dir, 100, false)
	rw.BlockSize, rw.ObjectSize = 16<<10, 16<<10
	_, err := Open(t.Context(), rw)
	if !engine.IsUsage(err) || !strings.Contains(err.Error(), "8K") {
		t.Errorf("reading 16K objects where 8K ones were written: Open error %v; want a usage error naming the 8K size", err)
	}
}

func TestCleanupRemovesOnlyItsPrefix(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, testWorkload(dir, 0, true))
	writeObjects(t, w, 3)
	mustClose(t, w)
	foreign := []string{
		"foo",
		"benchmark_data_otherhost_7_object0",
		w.Prefix() + "_object1.bak",
		w.Prefix() + "0_object1", // another pid that starts with ours
	}
	for _, name := range foreign {
		writeFile(t, filepath.Join(dir, name), "keep me")
	}

	if err := Cleanup(dir, writeahead.NewJudge(false, 0)); err != nil {
		t.Fatal(err)
	}
	names, _ := listDir(dir)
	slices.Sort(foreign)
	if !slices.Equal(names, foreign) {
		t.Errorf("after Cleanup the directory holds %v; want only the foreign files %v", names, foreign)
	}
	if err := Cleanup(dir, writeahead.NewJudge(false, 0)); err != nil {
		t.Errorf("Cleanup with nothing left to clean: %v", err)
	}
	if err := Cleanup(filepath.Join(dir, "missing"), writeahead.NewJudge(false, 0)); err != nil {
		t.Errorf("Cleanup of a missing directory: %v", err)
	}
}

func TestCleanupRejectsForeignMetadata(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, MetadataName), "rados wrote this\n")
	writeFile(t, filepath.Join(dir, "x_object0"), "")
	if err := Cleanup(dir, writeahead.NewJudge(false, 0)); err == nil {
		t.Error("Cleanup accepted a metadata file it cannot parse")
	}
	if names, _ := listDir(dir); len(names) != 2 {
		t.Errorf("Cleanup with bad metadata removed files: %v left", names)
	}
}

func TestReadWithNothingWritten(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	gone := filepath.Join(dir, "gone") // metadata, but no objects
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(gone, MetadataName), `{"prefix":"benchmark_data_h_1","objects":3,"object_size":8192,"op_size":4096}`)

	for _, d := range []string{dir, missing, gone} {
		for _, p := range []spec.Pattern{spec.Sequential, spec.Random} {
			w := testWorkload(d, 100, false)
			w.Pattern = p
			_, err := Open(t.Context(), w)
			want := "no objects to read in " + d + ": run a write first (with keep)"
			if !engine.IsUsage(err) || err.Error() != want {
				t.Errorf("%s read of %s: error %v; want usage error %q", p, d, err, want)
			}
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused read created %s", missing)
	}
}

func TestLocationNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	writeFile(t, file, "")
	_, err := Open(t.Context(), testWorkload(file, 0, false))
	if !engine.IsUsage(err) || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Open on a regular file: %v; want a usage error saying it is not a directory", err)
	}
	_, err = Open(t.Context(), testWorkload("", 0, false))
	if !engine.IsUsage(err) {
		t.Errorf("Open with no directory: %v; want a usage error", err)
	}
}

func TestMissingObjectAndShortRead(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, testWorkload(dir, 50, false))
	defer mustClose(t, s)
	_, err := read(t, s, 9, 0)
	if !errors.Is(err, fs.ErrNotExist) || engine.ErrorKind(err) != "ENOENT" {
		t.Errorf("read of a missing object: %v (kind %q); want ENOENT", err, engine.ErrorKind(err))
	}
	op := &engine.Op{Kind: engine.Write, Object: 0, Buf: make([]byte, testBlock)}
	if err := s.Do(t.Context(), op); err != nil {
		t.Fatal(err)
	}
	if _, err := read(t, s, 0, testBlock); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read past the end of a half-written object: %v; want io.ErrUnexpectedEOF", err)
	}
}

func TestWholeObjectWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, testWorkload(dir, 0, false))
	defer mustClose(t, s)
	path := filepath.Join(dir, s.Prefix()+"_object0")
	writeFile(t, path, strings.Repeat("x", 3*testObject))
	if err := s.Do(t.Context(), &engine.Op{Kind: engine.Write, Buf: make([]byte, testObject)}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != testObject {
		t.Errorf("after a whole-object write over a larger file: %v, %v; want %d bytes", fi.Size(), err, testObject)
	}
	if err := s.Do(t.Context(), &engine.Op{Kind: engine.Write, Offset: testBlock, Buf: make([]byte, testBlock)}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != testObject {
		t.Errorf("a partial write changed the object's size to %v (%v)", fi.Size(), err)
	}
}

func TestDirectFallback(t *testing.T) {
	dir := t.TempDir()
	w := testWorkload(dir, 50, false)
	w.Direct = true

	probe := filepath.Join(dir, "probe")
	fd, err := unix.Open(probe, unix.O_CREAT|unix.O_WRONLY|unix.O_DIRECT, 0o644)
	if err == nil {
		unix.Close(fd)
		os.Remove(probe)
		s := mustOpen(t, w)
		writeObjects(t, s, 1)
		if s.DirectFallback() {
			t.Error("DirectFallback() is true on a filesystem that has O_DIRECT")
		}
		mustClose(t, s)
	}

	// A filesystem without O_DIRECT fails the open with EINVAL.
	t.Cleanup(func() { sysOpen = unix.Open })
	sysOpen = func(path string, flags int, mode uint32) (int, error) {
		if flags&unix.O_DIRECT != 0 {
			return -1, unix.EINVAL
		}
		return unix.Open(path, flags, mode)
	}
	s := mustOpen(t, w)
	if a := s.Geometry().Alignment; a != 4096 {
		t.Errorf("Geometry().Alignment = %d with direct I/O, want 4096", a)
	}
	if s.DirectFallback() {
		t.Error("DirectFallback() is true before any I/O")
	}
	writeObjects(t, s, 1)
	op, err := read(t, s, 0, 0)
	if err != nil {
		t.Fatalf("read after falling back to buffered I/O: %v", err)
	}
	if err := workload.Check(op); err != nil {
		t.Error(err)
	}
	if !s.DirectFallback() {
		t.Error("DirectFallback() is false after the filesystem refused O_DIRECT")
	}
	mustClose(t, s)
}

func TestCloseRemovesCreatedDirs(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	s := mustOpen(t, testWorkload("./a/b/c", 0, false))
	writeObjects(t, s, 2)
	mustClose(t, s)
	if names, _ := listDir(root); len(names) != 0 {
		t.Errorf("after Close the directories it created are still there: %v", names)
	}

	s = mustOpen(t, testWorkload("./a/b/c", 0, false))
	writeFile(t, filepath.Join(root, "a", "b", "theirs"), "")
	writeObjects(t, s, 1)
	mustClose(t, s)
	if names, _ := listDir(filepath.Join(root, "a", "b")); !slices.Equal(names, []string{"theirs"}) {
		t.Errorf("a/b holds %v after Close; want only the file someone else put there", names)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
