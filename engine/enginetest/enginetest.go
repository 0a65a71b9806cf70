// Package enginetest is the conformance suite every engine passes: the same
// checks, against the real target, for every scheme.
//
// An engine's test calls Run with a Config that makes fresh targets. The
// suite drives engine.Session (and engine.AsyncSession when the session
// has it) directly, without the runner, with small workloads: 4 KiB
// blocks, 16 KiB objects, 2 MiB files. Each failure message says what a
// user of cephbench would see go wrong.
package enginetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/workload"
)

// Config describes the engine under test.
type Config struct {
	// Target is where the suite may create data; each subtest gets a
	// fresh one from NewTarget. Some subtests leave data there on
	// purpose (with Keep), so NewTarget registers its own t.Cleanup
	// when the test framework does not remove the target.
	NewTarget func(t *testing.T) spec.Target
	// Persistent is true when data written reads back (false for null).
	Persistent bool
	// Leftovers lists what exists at target (file names, object names),
	// so the suite can check that Close removes what the session created
	// and nothing else. Nil skips those checks, for engines that store
	// nothing.
	Leftovers func(t *testing.T, target spec.Target) []string
	// Plant creates one foreign item (a file or object the engine did not
	// create) at target, returning its name, so the suite can check that
	// Close leaves it. Nil skips that check.
	Plant func(t *testing.T, target spec.Target) string

	// BadTarget, if set, returns a target that Open must refuse with an
	// *engine.UsageError (a path below a regular file, a missing pool).
	BadTarget func(t *testing.T) spec.Target
	// EmptyReadIsUsage says a read-only workload on a fresh target has
	// nothing to read, so Open must refuse it with an *engine.UsageError
	// (object stores, which cannot lay data out for reads).
	EmptyReadIsUsage bool
	// WholeObjects says the engine can only write whole objects (S3): the
	// suite's objects are then one block each.
	WholeObjects bool
}

// The sizes of the suite's workloads.
const (
	blockSize = 4 << 10
	// blocksPerObject makes the suite write objects in several ops, at
	// non-zero offsets, unless Config.WholeObjects.
	blocksPerObject = 4
	maxObjects      = 8
	fileSize        = 2 << 20
	// maxBlocks bounds the blocks any subtest addresses.
	maxBlocks = 32
	// patience is how long a call may take before the suite calls it hung.
	patience = 30 * time.Second
)

// Run runs the suite.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.NewTarget == nil {
		t.Fatal("enginetest: Config.NewTarget is nil")
	}
	t.Run("Geometry", func(t *testing.T) { testGeometry(t, cfg) })
	t.Run("WriteReadBack", func(t *testing.T) { testWriteReadBack(t, cfg) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, cfg) })
	t.Run("Async", func(t *testing.T) { testAsync(t, cfg) })
	t.Run("Staging", func(t *testing.T) { testStaging(t, cfg) })
	t.Run("Direct", func(t *testing.T) { testDirect(t, cfg) })
	t.Run("CloseRemovesOnlyItsOwn", func(t *testing.T) { testCloseRemovesOnlyItsOwn(t, cfg) })
	t.Run("Keep", func(t *testing.T) { testKeep(t, cfg) })
	t.Run("BadTarget", func(t *testing.T) { testBadTarget(t, cfg) })
	t.Run("EmptyRead", func(t *testing.T) { testEmptyRead(t, cfg) })
	t.Run("CanceledContext", func(t *testing.T) { testCanceledContext(t, cfg) })
	t.Run("Declared", func(t *testing.T) { testDeclared(t, cfg) })
	t.Run("Sync", func(t *testing.T) { testSync(t, cfg) })
	t.Run("Payload", func(t *testing.T) { testPayload(t, cfg) })
	t.Run("CleanKept", func(t *testing.T) { testCleanKept(t, cfg) })
	t.Run("Kinds", func(t *testing.T) { testKinds(t, cfg) })
	t.Run("ReusedBuffers", func(t *testing.T) { testReusedBuffers(t, cfg) })
	t.Run("Sustained", func(t *testing.T) { testSustained(t, cfg) })
}

func (cfg Config) workload(t *testing.T, target spec.Target, readPercent int, keep bool) *spec.Workload {
	t.Helper()
	w := &spec.Workload{
		Name:        "enginetest",
		Target:      target,
		Pattern:     spec.Random,
		ReadPercent: readPercent,
		BlockSize:   blockSize,
		ObjectSize:  blockSize * blocksPerObject,
		Objects:     maxObjects,
		FileSize:    fileSize,
		Workers:     2,
		QueueDepth:  2,
		TotalOps:    64,
		Verify:      cfg.Persistent && readPercent > 0,
		Keep:        keep,
	}
	if cfg.WholeObjects {
		w.ObjectSize = blockSize
	}
	if err := w.Validate(); err != nil {
		t.Fatalf("enginetest: invalid workload: %v", err)
	}
	return w
}

func (cfg Config) leftovers(t *testing.T, target spec.Target) []string {
	t.Helper()
	l := slices.Clone(cfg.Leftovers(t, target))
	slices.Sort(l)
	return l
}

// session wraps the session under test with the workload it was opened
// for, and closes it at the end of the test if the test did not.
type session struct {
	engine.Session
	t      *testing.T
	cfg    Config
	w      *spec.Workload
	geo    engine.Geometry
	closed bool
}

func open(t *testing.T, cfg Config, w *spec.Workload) *session {
	t.Helper()
	s, err := tryOpen(t, cfg, w)
	if err != nil {
		t.Fatalf("Open(%s, %d%% reads, keep=%v, direct=%v): %v", w.Target, w.ReadPercent, w.Keep, w.Direct, err)
	}
	return s
}

func tryOpen(t *testing.T, cfg Config, w *spec.Workload) (*session, error) {
	t.Helper()
	s, err := engine.Open(t.Context(), w)
	if err != nil {
		return nil, err
	}
	if s == nil {
		t.Fatalf("Open(%s) returned a nil session and no error", w.Target)
	}
	ts := &session{Session: s, t: t, cfg: cfg, w: w, geo: s.Geometry()}
	t.Cleanup(func() {
		if !ts.closed {
			_ = s.Close(context.Background()) // the test already failed
		}
	})
	return ts, nil
}

// openImplementing opens a session for a workload of half reads on a fresh
// target, and skips the test unless the session implements I.
func openImplementing[I any](t *testing.T, cfg Config) (*session, I) {
	t.Helper()
	s := open(t, cfg, cfg.workload(t, cfg.NewTarget(t), 50, false))
	i, ok := s.Session.(I)
	if !ok {
		s.close()
		t.Skipf("the session does not implement %v", reflect.TypeFor[I]())
	}
	return s, i
}

// newQueue is a queue of depth ops on as; the test ends if there is none.
func newQueue(t *testing.T, as engine.AsyncSession, depth int) engine.Queue {
	t.Helper()
	q, err := as.NewQueue(depth)
	if err != nil {
		t.Fatalf("NewQueue(%d): %v", depth, err)
	}
	return q
}

func (s *session) close() {
	s.t.Helper()
	s.closed = true
	if err := s.Close(s.t.Context()); err != nil {
		s.t.Fatalf("Close: %v (every run would end with a cleanup error)", err)
	}
}

// blocks is how many distinct blocks the target offers the suite.
func (s *session) blocks() int {
	if s.geo.Layout == engine.Objects {
		return maxObjects * s.blocksPerObject()
	}
	return maxBlocks
}

func (s *session) blocksPerObject() int {
	return int(s.w.EffectiveObjectSize() / s.w.BlockSize)
}

// op makes an op addressing the suite's block number i (see place), with
// the suite's data to write, or a buffer a read must overwrite.
func (s *session) op(kind engine.OpKind, i int) *engine.Op {
	s.t.Helper()
	op := &engine.Op{Kind: kind, Buf: buffer(int(s.w.BlockSize), s.geo.Alignment)}
	s.place(op, i)
	if kind == engine.Write {
		workload.Fill(op.Buf)
		workload.Stamp(op)
	} else {
		// An engine that does not fill the buffer fails verification.
		for j := range op.Buf {
			op.Buf[j] = 0xa5
		}
	}
	return op
}

// place addresses op to the suite's block number i: block layouts spread
// blocks over every file, object layouts fill object after object.
func (s *session) place(op *engine.Op, i int) {
	s.t.Helper()
	bs := int64(s.w.BlockSize)
	switch s.geo.Layout {
	case engine.Blocks:
		files := max(s.geo.Files, 1)
		op.File = i % files
		op.Offset = int64(i/files) * bs
		if op.Offset+bs > s.geo.Size {
			s.t.Fatalf("Geometry().Size = %d leaves no room for block %d of file %d", s.geo.Size, i/files, op.File)
		}
	case engine.Objects:
		per := s.blocksPerObject()
		op.Object = int64(i / per)
		op.Offset = int64(i%per) * bs
	}
}

func (s *session) describe(op *engine.Op) string {
	if s.geo.Layout == engine.Objects {
		return fmt.Sprintf("%s of %d bytes at object %d offset %d", op.Kind, len(op.Buf), op.Object, op.Offset)
	}
	return fmt.Sprintf("%s of %d bytes at file %d offset %d", op.Kind, len(op.Buf), op.File, op.Offset)
}

// do runs op with Do and checks that the engine left the op's address
// alone. It is safe for concurrent use.
func (s *session) do(ctx context.Context, op *engine.Op) error {
	kind, file, object, offset, n := op.Kind, op.File, op.Object, op.Offset, len(op.Buf)
	err := s.Do(ctx, op)
	if op.Kind != kind || op.File != file || op.Object != object || op.Offset != offset || len(op.Buf) != n {
		return fmt.Errorf("the engine changed the op's kind, address or length, which it must only read (the runner counts the op by them): now %s", s.describe(op))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.describe(op), err)
	}
	return nil
}

// verify checks a completed read against what the suite wrote there.
func (s *session) verify(op *engine.Op) error {
	if !s.cfg.Persistent {
		return nil
	}
	if err := workload.Check(op); err != nil {
		return fmt.Errorf("%s returned other data than was written (a run with verify would report errors on a healthy target): %w", s.describe(op), err)
	}
	return nil
}

// write writes the suite's data to block i.
func (s *session) write(i int) {
	s.t.Helper()
	if err := s.do(s.t.Context(), s.op(engine.Write, i)); err != nil {
		s.t.Fatal(err)
	}
}

// readBack reads block i and verifies it.
func (s *session) readBack(i int) {
	s.t.Helper()
	op := s.op(engine.Read, i)
	if err := s.do(s.t.Context(), op); err != nil {
		s.t.Fatalf("reading back what was written: %v", err)
	}
	if err := s.verify(op); err != nil {
		s.t.Fatal(err)
	}
}

// buffer returns n bytes aligned to exactly align: aligned to it, and
// deliberately not to twice it, so an engine that needs more alignment
// than its Geometry says fails here rather than in a user's run.
func buffer(n, align int) []byte {
	a := max(align, 1)
	b := make([]byte, n+2*a)
	addr := int(uintptr(unsafe.Pointer(&b[0])) % uintptr(2*a))
	off := (a - addr + 2*a) % (2 * a)
	return b[off : off+n : off+n]
}

// within runs f and fails the test if it has not returned after patience.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatalf("%s did not return within %v: a user's run would hang", what, patience)
	}
}

func testGeometry(t *testing.T, cfg Config) {
	w := cfg.workload(t, cfg.NewTarget(t), 0, false)
	s := open(t, cfg, w)
	g := s.Geometry()
	if g != s.geo {
		t.Errorf("Geometry() changed between calls: %+v, then %+v", s.geo, g)
	}
	if g.Alignment < 0 {
		t.Errorf("Geometry().Alignment = %d: negative", g.Alignment)
	} else if g.Alignment > 0 && int(w.BlockSize)%g.Alignment != 0 {
		t.Errorf("Geometry().Alignment = %d does not divide the block size %d: the runner could not make valid buffers", g.Alignment, w.BlockSize)
	}
	switch g.Layout {
	case engine.Blocks:
		if g.Files < 1 {
			t.Errorf("Geometry().Files = %d: the runner would have no file to address", g.Files)
		}
		if want := int64(w.FileSize) / int64(w.BlockSize) * int64(w.BlockSize); g.Size < want {
			t.Errorf("Geometry().Size = %d for a workload with file size %d: a run would address only part of what the user asked for", g.Size, w.FileSize)
		}
	case engine.Objects:
		if g.ObjectCount != 0 {
			t.Errorf("Geometry().ObjectCount = %d on an empty target: reads would address objects that do not exist", g.ObjectCount)
		}
	default:
		t.Errorf("Geometry().Layout = %d is neither Blocks nor Objects", g.Layout)
	}
	s.close()
}

func testWriteReadBack(t *testing.T, cfg Config) {
	s := open(t, cfg, cfg.workload(t, cfg.NewTarget(t), 50, false))
	n := min(s.blocks(), 12)
	for i := range n {
		s.write(i)
	}
	for i := range n {
		s.readBack(i)
	}
	if !cfg.Persistent {
		s.close()
		return
	}
	// Overwrite block 0 with block 1's data: reads must return the new
	// bytes, and verification must notice they belong elsewhere.
	other := s.op(engine.Write, 1)
	over := s.op(engine.Write, 0)
	copy(over.Buf, other.Buf)
	if err := s.do(t.Context(), over); err != nil {
		t.Fatalf("overwriting: %v", err)
	}
	op := s.op(engine.Read, 0)
	if err := s.do(t.Context(), op); err != nil {
		t.Fatalf("reading an overwritten block: %v", err)
	}
	if string(op.Buf) != string(over.Buf) {
		t.Errorf("after an overwrite, the %s returned other bytes than the last write: users would read stale data", s.describe(op))
	}
	if err := workload.Check(op); !errors.Is(err, engine.ErrVerify) {
		t.Errorf("a block overwritten with another block's data passed verification (Check returned %v): verify runs would miss misplaced writes", err)
	}
	for i := 1; i < n; i++ {
		op := s.op(engine.Read, i)
		if err := s.do(t.Context(), op); err != nil {
			t.Fatalf("after overwriting one block, reading another: %v", err)
		}
		if err := s.verify(op); err != nil {
			t.Fatalf("after overwriting one block: %v", err)
		}
	}
	s.close()
}

// testConcurrent runs mixed reads and writes from several goroutines on
// one session, as the runner's workers do; run it with -race. Goroutines
// own interleaved blocks, so on object targets they write different
// offsets of the same objects at once.
func testConcurrent(t *testing.T, cfg Config) {
	s := open(t, cfg, cfg.workload(t, cfg.NewTarget(t), 50, false))
	const goroutines, rounds = 4, 3
	n := s.blocks()
	var wg sync.WaitGroup
	for g := range goroutines {
		ops := make([][2]*engine.Op, 0, n/goroutines)
		for i := g; i < n; i += goroutines {
			ops = append(ops, [2]*engine.Op{s.op(engine.Write, i), s.op(engine.Read, i)})
		}
		wg.Go(func() {
			for range rounds {
				for _, wr := range ops {
					if err := s.do(t.Context(), wr[0]); err != nil {
						t.Errorf("concurrent %v", err)
						return
					}
				}
				for _, wr := range ops {
					if err := s.do(t.Context(), wr[1]); err != nil {
						t.Errorf("concurrent %v", err)
						return
					}
					if err := s.verify(wr[1]); err != nil {
						t.Errorf("with %d goroutines writing at once: %v", goroutines, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	s.close()
}

// reapAll reaps until every op in want has come back, checking that each
// comes back once with Err nil. It reaps at most batch ops per call.
func reapAll(t *testing.T, q engine.Queue, want []*engine.Op, batch int) {
	t.Helper()
	pending := map[*engine.Op]bool{}
	for _, op := range want {
		pending[op] = true
	}
	done := make([]*engine.Op, batch)
	for len(pending) > 0 {
		var n int
		var err error
		ctx, cancel := context.WithTimeout(t.Context(), patience)
		within(t, "Reap", func() { n, err = q.Reap(ctx, 1, done) })
		cancel()
		if err != nil {
			t.Fatalf("Reap(min=1) with %d ops in flight: %v", len(pending), err)
		}
		if n < 1 || n > len(done) {
			t.Fatalf("Reap(min=1, %d slots) returned %d ops and no error", len(done), n)
		}
		for _, op := range done[:n] {
			if !pending[op] {
				t.Fatalf("Reap returned an op that is not in flight (reaped twice, or never submitted): the runner would count it twice")
			}
			delete(pending, op)
			if op.Err != nil {
				t.Errorf("queued %s failed: %v", op.Kind, op.Err)
			}
		}
	}
}

func testAsync(t *testing.T, cfg Config) {
	s, as := openImplementing[engine.AsyncSession](t, cfg)
	const depth = 4
	q := newQueue(t, as, depth)
	submit := func(kind engine.OpKind) []*engine.Op {
		ops := make([]*engine.Op, depth)
		for i := range ops {
			ops[i] = s.op(kind, i)
			if err := q.Submit(ops[i]); err != nil {
				t.Fatalf("Submit of %s %d of %d on a queue of depth %d: %v (the runner could not keep the queue depth the user asked for)", kind, i+1, depth, depth, err)
			}
		}
		return ops
	}

	reapAll(t, q, submit(engine.Write), depth)

	done := make([]*engine.Op, depth)
	var (
		n   int
		err error
	)
	within(t, "Reap(min=0) with nothing in flight", func() { n, err = q.Reap(t.Context(), 0, done) })
	if err != nil || n != 0 {
		t.Fatalf("Reap(min=0) with nothing in flight returned %d ops, error %v; want 0, nil", n, err)
	}

	reads := submit(engine.Read)
	// Reap(min=0) must not block whatever is in flight; what it returns
	// is part of the reads. One slot at a time from here on: Reap must
	// respect len(done).
	within(t, "Reap(min=0) with ops in flight", func() { n, err = q.Reap(t.Context(), 0, done[:1]) })
	if err != nil {
		t.Fatalf("Reap(min=0) with ops in flight: %v", err)
	}
	for _, op := range done[:n] {
		if op.Err != nil {
			t.Errorf("queued %s failed: %v", op.Kind, op.Err)
		}
	}
	rest := slices.DeleteFunc(slices.Clone(reads), func(op *engine.Op) bool { return slices.Contains(done[:n], op) })
	if len(rest) != depth-n {
		t.Fatalf("Reap(min=0) returned %d ops, not all of them in flight", n)
	}
	reapAll(t, q, rest, 1)
	for _, op := range reads {
		if err := s.verify(op); err != nil {
			t.Error(err)
		}
	}
	if err := q.Close(); err != nil {
		t.Errorf("Queue.Close: %v", err)
	}
	s.close()
}

func testStaging(t *testing.T, cfg Config) {
	s, as := openImplementing[engine.AsyncSession](t, cfg)
	defer s.close()
	const depth = 4
	q := newQueue(t, as, depth)
	defer q.Close()
	sq, ok := q.(engine.StagingQueue)
	if !ok || sq.Spare() == 0 {
		t.Skip("the queue does not stage")
	}
	if depth+sq.Spare() > s.blocks() {
		t.Fatalf("Spare() = %d: more than the %d blocks the suite addresses", sq.Spare(), s.blocks()-depth)
	}
	submit := func(kind engine.OpKind) []*engine.Op {
		t.Helper()
		ops := make([]*engine.Op, depth+sq.Spare())
		for i := range ops {
			ops[i] = s.op(kind, i)
			if err := q.Submit(ops[i]); err != nil {
				t.Fatalf("Submit of op %d on a staging queue of depth %d and %d spare: %v", i+1, depth, sq.Spare(), err)
			}
		}
		return ops
	}
	// checkIssued checks that every op has its start, and that no more
	// than the depth were ever in flight at once.
	checkIssued := func(ops []*engine.Op) {
		t.Helper()
		type event struct {
			at    time.Duration
			delta int
		}
		var events []event
		for _, op := range ops {
			if op.Issued == 0 || op.Completed < op.Issued {
				t.Fatalf("%s issued at %v, completed at %v: a staged op's latency counts from its start", s.describe(op), op.Issued, op.Completed)
			}
			events = append(events, event{op.Issued, 1}, event{op.Completed, -1})
		}
		slices.SortFunc(events, func(a, b event) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.delta, b.delta)) })
		inFlight := 0
		for _, e := range events {
			if inFlight += e.delta; inFlight > depth {
				t.Fatalf("%d ops in flight at once on a queue of depth %d: staged ops must wait for a free place", inFlight, depth)
			}
		}
	}

	sq.Stage(engine.Now() + time.Hour)
	writes := submit(engine.Write)
	reapAll(t, q, writes, len(writes))
	checkIssued(writes)
	reads := submit(engine.Read)
	reapAll(t, q, reads, len(reads))
	checkIssued(reads)
	for _, op := range reads {
		if err := s.verify(op); err != nil {
			t.Error(err)
		}
	}

	// Past the cutoff, a staged op never starts: each op either started
	// inside its Submit (a place of the depth was free) or comes back
	// unstarted.
	sq.Stage(engine.Now())
	late := make([]*engine.Op, depth+sq.Spare())
	submitted := map[*engine.Op]time.Duration{}
	for i := range late {
		late[i] = s.op(engine.Read, i)
		if err := q.Submit(late[i]); err != nil {
			t.Fatalf("Submit of op %d past the cutoff: %v", i+1, err)
		}
		submitted[late[i]] = engine.Now()
	}
	done := make([]*engine.Op, len(late))
	for reaped := 0; reaped < len(late); {
		var (
			n   int
			err error
		)
		within(t, "Reap", func() { n, err = q.Reap(t.Context(), 1, done) })
		if err != nil {
			t.Fatal(err)
		}
		reaped += n
		for _, op := range done[:n] {
			switch {
			case errors.Is(op.Err, engine.ErrNotIssued):
			case op.Err != nil:
				t.Errorf("%s: %v", s.describe(op), op.Err)
			case op.Issued > submitted[op]:
				t.Errorf("%s started %v after its Submit returned, past the cutoff: a staged op must not start then",
					s.describe(op), op.Issued-submitted[op])
			}
		}
	}
}

func testDirect(t *testing.T, cfg Config) {
	w := cfg.workload(t, cfg.NewTarget(t), 50, false)
	w.Direct = true
	s, err := tryOpen(t, cfg, w)
	if engine.IsUsage(err) {
		t.Skipf("the engine refuses direct I/O on this target: %v", err)
	}
	if err != nil {
		t.Fatalf("Open with direct I/O: %v", err)
	}
	for i := range 4 {
		s.write(i)
	}
	for i := range 4 {
		s.readBack(i)
	}
	s.close()
}

func testCloseRemovesOnlyItsOwn(t *testing.T, cfg Config) {
	if cfg.Leftovers == nil {
		t.Skip("Config.Leftovers is nil: the engine stores nothing")
	}
	// On a fresh target the session creates everything, containers
	// included; with a foreign item, it must leave that item's company.
	t.Run("Fresh", func(t *testing.T) { closeRemovesOnlyItsOwn(t, cfg, false) })
	t.Run("Foreign", func(t *testing.T) {
		if cfg.Plant == nil {
			t.Skip("Config.Plant is nil")
		}
		closeRemovesOnlyItsOwn(t, cfg, true)
	})
}

func closeRemovesOnlyItsOwn(t *testing.T, cfg Config, plant bool) {
	target := cfg.NewTarget(t)
	var planted string
	if plant {
		planted = cfg.Plant(t, target)
	}
	before := cfg.leftovers(t, target)
	s := open(t, cfg, cfg.workload(t, target, 50, false))
	for i := range s.blocks() {
		s.write(i)
	}
	s.readBack(0)
	if during := cfg.leftovers(t, target); cfg.Persistent && slices.Equal(during, before) {
		t.Fatalf("after writes, Leftovers still lists only %v: Config.Leftovers does not see what the engine stores, so cleanup cannot be checked", before)
	}
	s.close()
	after := cfg.leftovers(t, target)
	if planted != "" && !slices.Contains(after, planted) {
		t.Errorf("Close removed %q, which the session did not create: a user's data next to the benchmark would be lost", planted)
	}
	if !slices.Equal(before, after) {
		t.Errorf("Close without keep should restore the target: before the session %v, after Close %v", before, after)
	}
}

// testKeep writes with keep, then checks that a later session without keep
// leaves that data alone and that a reader sees it.
func testKeep(t *testing.T, cfg Config) {
	target := cfg.NewTarget(t)
	if cfg.Plant != nil {
		cfg.Plant(t, target)
	}
	var before []string
	if cfg.Leftovers != nil {
		before = cfg.leftovers(t, target)
	}
	const keptObjects = 3

	w1 := open(t, cfg, cfg.workload(t, target, 0, true))
	n := keptObjects * w1.blocksPerObject()
	if w1.geo.Layout == engine.Blocks {
		n = maxBlocks / 2
	}
	for i := range n {
		w1.write(i)
	}
	w1.close()
	var kept []string
	if cfg.Leftovers != nil {
		kept = cfg.leftovers(t, target)
		if cfg.Persistent && slices.Equal(kept, before) {
			t.Fatalf("Close with keep removed what the session wrote (the target holds %v, as before): keep would not keep", kept)
		}
	}

	// Rewrite the kept blocks and one object (or a few blocks) more.
	w2 := open(t, cfg, cfg.workload(t, target, 0, false))
	for i := range n + w2.blocksPerObject() + 1 {
		w2.write(i)
	}
	w2.close()
	if cfg.Leftovers != nil {
		if after := cfg.leftovers(t, target); !slices.Equal(after, kept) {
			t.Errorf("a session without keep must remove only what it created: the target held %v from a kept session, and %v after the next session", kept, after)
		}
	}

	r := open(t, cfg, cfg.workload(t, target, 100, false))
	if r.geo.Layout == engine.Objects && cfg.Persistent && r.geo.ObjectCount != keptObjects {
		t.Errorf("after a kept write of %d objects, a read session's Geometry().ObjectCount = %d: reads would address the wrong objects", keptObjects, r.geo.ObjectCount)
	}
	for i := range n {
		r.readBack(i)
	}
	r.close()
	if cfg.Leftovers != nil {
		if after := cfg.leftovers(t, target); !slices.Equal(after, kept) {
			t.Errorf("closing a read session changed the target from %v to %v: reading must not remove data", kept, after)
		}
	}
}

func testBadTarget(t *testing.T, cfg Config) {
	if cfg.BadTarget == nil {
		t.Skip("Config.BadTarget is nil")
	}
	w := cfg.workload(t, cfg.BadTarget(t), 0, false)
	s, err := engine.Open(t.Context(), w)
	if err == nil {
		_ = s.Close(t.Context())
		t.Fatalf("Open(%s) succeeded; want a usage error", w.Target)
	}
	if !engine.IsUsage(err) {
		t.Errorf("Open(%s) failed with %q, which is not an *engine.UsageError: the CLI would report a failed run instead of a usage problem", w.Target, err)
	}
}

func testEmptyRead(t *testing.T, cfg Config) {
	if !cfg.EmptyReadIsUsage {
		t.Skip("Config.EmptyReadIsUsage is false")
	}
	target := cfg.NewTarget(t)
	var before []string
	if cfg.Leftovers != nil {
		before = cfg.leftovers(t, target)
	}
	w := cfg.workload(t, target, 100, false)
	s, err := engine.Open(t.Context(), w)
	if err == nil {
		_ = s.Close(t.Context())
		t.Fatalf("Open of a read-only workload on the empty target %s succeeded; want a usage error saying there is nothing to read", target)
	}
	if !engine.IsUsage(err) {
		t.Errorf("Open of a read-only workload on an empty target failed with %q, which is not an *engine.UsageError", err)
	}
	if cfg.Leftovers != nil {
		if after := cfg.leftovers(t, target); !slices.Equal(after, before) {
			t.Errorf("a refused Open changed the target from %v to %v", before, after)
		}
	}
}

// testCanceledContext checks that ops on a canceled context return, so a
// user's Ctrl-C ends the run, and that the session still works after.
func testCanceledContext(t *testing.T, cfg Config) {
	s := open(t, cfg, cfg.workload(t, cfg.NewTarget(t), 50, false))
	s.write(0)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, kind := range []engine.OpKind{engine.Write, engine.Read} {
		op := s.op(kind, 0)
		// Completing or failing are both fine; hanging is not.
		within(t, fmt.Sprintf("Do(%s) on a canceled context", kind), func() { _ = s.Do(ctx, op) })
	}
	s.readBack(0)

	if as, ok := s.Session.(engine.AsyncSession); ok {
		q := newQueue(t, as, 2)
		done := make([]*engine.Op, 2)
		var (
			n   int
			err error
		)
		within(t, "Reap(min=1) on a canceled context with nothing in flight", func() { n, err = q.Reap(ctx, 1, done) })
		if err == nil {
			t.Errorf("Reap(min=1) on a canceled context with nothing in flight returned %d ops and no error", n)
		}
		op := s.op(engine.Write, 0)
		if err := q.Submit(op); err != nil {
			t.Fatalf("Submit: %v", err)
		}
		within(t, "Reap(min=1) on a canceled context", func() { n, _ = q.Reap(ctx, 1, done) })
		if n > 0 && done[0] != op {
			t.Errorf("Reap returned an op that was never submitted")
		}
		if n == 0 {
			// The op was submitted, so it must still come back.
			reapAll(t, q, []*engine.Op{op}, 1)
		}
		if err := q.Close(); err != nil {
			t.Errorf("Queue.Close: %v", err)
		}
	}
	s.close()
}

// testKinds checks the op kinds a KindNamer declares, which an op mix
// runs over whole objects: every name once, read and write among them,
// and each kind served by Do. A kind with a first byte reports one
// within the op; stats and gets of a deleted object fail, or a mix would
// count them as done.
func testKinds(t *testing.T, cfg Config) {
	s := open(t, cfg, cfg.workload(t, cfg.NewTarget(t), 50, false))
	namer, ok := s.Session.(engine.KindNamer)
	if !ok || s.geo.Layout != engine.Objects {
		s.close()
		t.Skip("the engine serves read and write alone")
	}
	kinds := map[engine.OpKind]engine.KindName{}
	names := map[string]bool{}
	for _, k := range namer.Kinds() {
		if _, dup := kinds[k.Kind]; dup || names[k.Name] || names[k.FirstByte] || k.Name == "" || k.Kind >= engine.NumOpKinds {
			t.Fatalf("Kinds() = %v: every kind, and every name, must appear once", namer.Kinds())
		}
		kinds[k.Kind], names[k.Name] = k, true
		if k.FirstByte != "" {
			names[k.FirstByte] = true
		}
	}
	if _, ok := kinds[engine.Read]; !ok {
		t.Fatalf("Kinds() = %v lacks read", namer.Kinds())
	}
	if _, ok := kinds[engine.Write]; !ok {
		t.Fatalf("Kinds() = %v lacks write", namer.Kinds())
	}
	s.write(0)
	object := func(kind engine.OpKind) *engine.Op {
		op := s.op(kind, 0)
		if kind != engine.Read {
			op.Buf = op.Buf[:0]
		}
		return op
	}
	for kind, k := range kinds {
		if kind == engine.Write || kind == engine.Delete {
			continue
		}
		op := object(kind)
		start := engine.Now()
		if err := s.do(t.Context(), op); err != nil {
			t.Fatalf("%s (%s) of an object just written: %v", k.Name, kind, err)
		}
		end := engine.Now()
		if k.FirstByte != "" && (op.FirstByte < start || op.FirstByte > end) {
			t.Errorf("%s's first byte at %v, outside the op (%v to %v)", k.Name, op.FirstByte, start, end)
		}
	}
	if del, ok := kinds[engine.Delete]; ok {
		if err := s.do(t.Context(), object(engine.Delete)); err != nil {
			t.Fatalf("%s of an object just written: %v", del.Name, err)
		}
		for _, kind := range []engine.OpKind{engine.Read, engine.Stat} {
			if k, ok := kinds[kind]; ok {
				if err := s.do(t.Context(), object(kind)); err == nil {
					t.Errorf("%s of a deleted object succeeded", k.Name)
				}
			}
		}
	}
	s.close()
}
