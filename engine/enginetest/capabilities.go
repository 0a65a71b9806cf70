package enginetest

import (
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// The checks of what an engine declares when it registers and of the
// optional interfaces its sessions implement. Each runs only when the
// engine declares, or its session implements, what it checks.

// describe returns what target's engine declared.
func describe(t *testing.T, target spec.Target) engine.Description {
	t.Helper()
	d, err := engine.Describe(target.Scheme)
	if err != nil {
		t.Fatalf("engine.Describe(%q): %v", target.Scheme, err)
	}
	return d
}

// kindLayouts is the layout the steps a plan chooses for a kind of target
// address it by.
var kindLayouts = map[engine.Kind]engine.Layout{
	engine.KindObjects:          engine.Objects,
	engine.KindBlockImage:       engine.Blocks,
	engine.KindLocalDirectory:   engine.Blocks,
	engine.KindSharedFilesystem: engine.Blocks,
}

// testDeclared checks that sessions are what their engine declares.
func testDeclared(t *testing.T, cfg Config) {
	target := cfg.NewTarget(t)
	d := describe(t, target)
	if d.Syntax == "" {
		t.Errorf("the engine of %s:// declares no Syntax: messages could not say how its targets are written", target.Scheme)
	}
	if want, ok := kindLayouts[d.Kind]; ok && d.Layout != want {
		t.Errorf("the engine declares the kind %s with the %s layout: the steps plans choose for that kind address %s", d.Kind, d.Layout, want)
	}
	s := open(t, cfg, cfg.workload(t, target, 50, false))
	if s.geo.Layout != d.Layout {
		t.Errorf("Geometry().Layout is %s, but the engine declares %s: what plans choose by the declaration would not fit the target", s.geo.Layout, d.Layout)
	}
	if _, ok := s.Session.(engine.BufferedFallback); ok != d.DirectFallback {
		t.Errorf("the engine declares DirectFallback %v, but its session implements engine.BufferedFallback: %v (a result would not say when it measured the page cache)", d.DirectFallback, ok)
	}
	if d.LocalDisks || d.LocalPath {
		if _, err := os.Stat(target.Location); err != nil {
			t.Errorf("the engine declares LocalPath or LocalDisks, but its open target's location is not a path on this host: %v", err)
		}
	}
	s.close()

	for _, mech := range d.IOEngines {
		t.Run("IOEngine="+mech, func(t *testing.T) {
			w := cfg.workload(t, cfg.NewTarget(t), 50, false)
			w.IOEngine = mech
			s := open(t, cfg, w)
			for i := range 4 {
				s.write(i)
			}
			for i := range 4 {
				s.readBack(i)
			}
			s.close()
		})
	}
	if d.FilePrefix {
		t.Run("FilePrefix", func(t *testing.T) { testFilePrefix(t, cfg) })
	}
}

// testFilePrefix checks that a session given a file prefix names what it
// creates with it.
func testFilePrefix(t *testing.T, cfg Config) {
	const prefix = "enginetest-prefix"
	target := cfg.NewTarget(t)
	var before []string
	if cfg.Leftovers != nil {
		before = cfg.leftovers(t, target)
	}
	w := cfg.workload(t, target, 50, false)
	w.FilePrefix = prefix
	s := open(t, cfg, w)
	for i := range s.blocks() {
		s.write(i)
	}
	s.readBack(0)
	if cfg.Leftovers != nil {
		for _, name := range cfg.leftovers(t, target) {
			if !slices.Contains(before, name) && !strings.HasPrefix(name, prefix) {
				t.Errorf("with file prefix %q the session created %q: fio's job files name the files it reads", prefix, name)
			}
		}
	}
	s.close()
}

// testSync checks that Sync after writes succeeds on every file, and that
// it is safe while other goroutines and a queue run ops.
func testSync(t *testing.T, cfg Config) {
	s, syncer := openImplementing[engine.Syncer](t, cfg)
	files := 1
	if s.geo.Layout == engine.Blocks {
		files = max(s.geo.Files, 1)
	}
	n := s.blocks()
	for i := range n {
		s.write(i)
	}
	for f := range files {
		var err error
		within(t, "Sync", func() { err = syncer.Sync(t.Context(), f) })
		if err != nil {
			t.Fatalf("Sync(file %d) after writes: %v (fsync= and end_fsync runs would fail)", f, err)
		}
	}

	// One goroutine syncs every file over and over while others write
	// and read, and the test goroutine drives a queue.
	stop := make(chan struct{})
	var syncing sync.WaitGroup
	syncing.Go(func() {
		for f := 0; ; f = (f + 1) % files {
			select {
			case <-stop:
				return
			default:
			}
			if err := syncer.Sync(t.Context(), f); err != nil {
				t.Errorf("Sync(file %d) while ops run: %v", f, err)
				return
			}
		}
	})
	const goroutines = 2
	var workers sync.WaitGroup
	for g := range goroutines {
		var ops []*engine.Op
		for i := g; i < n; i += goroutines {
			ops = append(ops, s.op(engine.Write, i), s.op(engine.Read, i))
		}
		workers.Go(func() {
			for _, op := range ops {
				if err := s.do(t.Context(), op); err != nil {
					t.Errorf("while syncing, %v", err)
					return
				}
				if op.Kind == engine.Read {
					if err := s.verify(op); err != nil {
						t.Errorf("while syncing: %v", err)
						return
					}
				}
			}
		})
	}
	if as, ok := s.Session.(engine.AsyncSession); ok {
		const depth = 4
		q := newQueue(t, as, depth)
		ops := make([]*engine.Op, depth)
		for i := range ops {
			ops[i] = s.op(engine.Write, i)
			if err := q.Submit(ops[i]); err != nil {
				t.Fatalf("Submit while syncing: %v", err)
			}
		}
		reapAll(t, q, ops, depth)
		if err := q.Close(); err != nil {
			t.Errorf("Queue.Close: %v", err)
		}
	}
	within(t, "ops while syncing", workers.Wait)
	close(stop)
	within(t, "Sync while ops run", syncing.Wait)
	for i := range n {
		s.readBack(i)
	}
	s.close()
}

// testPayload checks a session that dictates its data: what FillWrite
// wrote passes CheckRead once read back, from goroutines that each reuse
// one buffer as the runner does, and CheckRead catches a changed byte and
// another block's data.
func testPayload(t *testing.T, cfg Config) {
	if !cfg.Persistent {
		t.Skip("Config.Persistent is false: nothing reads back")
	}
	s, p := openImplementing[engine.Payload](t, cfg)
	defer s.close()
	const goroutines = 4
	n := s.blocks()
	reads := make([]*engine.Op, n)
	var wg sync.WaitGroup
	for g := range goroutines {
		buf := buffer(int(s.w.BlockSize), s.geo.Alignment)
		p.InitBuffer(buf)
		var writes []*engine.Op
		for i := g; i < n; i += goroutines {
			w := &engine.Op{Kind: engine.Write, Buf: buf}
			s.place(w, i)
			writes = append(writes, w)
			reads[i] = s.op(engine.Read, i)
		}
		wg.Go(func() {
			for _, w := range writes {
				p.FillWrite(w)
				if err := s.do(t.Context(), w); err != nil {
					t.Errorf("writing the payload: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for g := range goroutines {
		wg.Go(func() {
			for i := g; i < n; i += goroutines {
				if err := s.do(t.Context(), reads[i]); err != nil {
					t.Errorf("reading the payload back: %v", err)
					return
				}
				if err := p.CheckRead(reads[i]); err != nil {
					t.Errorf("the %s of what FillWrite wrote fails CheckRead (every verified read of a healthy target would be an error): %v", s.describe(reads[i]), err)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() || n < 2 {
		return
	}

	op := reads[0]
	for _, at := range []int{0, len(op.Buf) / 2, len(op.Buf) - 1} {
		op.Buf[at] ^= 0x55
		if err := p.CheckRead(op); !errors.Is(err, engine.ErrVerify) {
			t.Errorf("CheckRead of a read with byte %d of %d changed returned %v, not an error wrapping engine.ErrVerify: verify runs would miss corruption there", at, len(op.Buf), err)
		}
		op.Buf[at] ^= 0x55
	}
	misplaced := &engine.Op{Kind: engine.Read, Buf: reads[1].Buf}
	s.place(misplaced, 0)
	if err := p.CheckRead(misplaced); !errors.Is(err, engine.ErrVerify) {
		t.Errorf("CheckRead of block 1's data read as block 0 returned %v, not an error wrapping engine.ErrVerify: verify runs would miss misplaced data", err)
	}
}

// testCleanKept checks that the engine's cleaner removes what sessions
// kept, and only that: foreign data next to it survives.
func testCleanKept(t *testing.T, cfg Config) {
	target := cfg.NewTarget(t)
	d := describe(t, target)
	if d.Cleaner == nil {
		t.Skip("the engine declares no Cleaner: it keeps nothing between sessions")
	}
	var planted string
	if cfg.Plant != nil {
		planted = cfg.Plant(t, target)
	}
	var before []string
	if cfg.Leftovers != nil {
		before = cfg.leftovers(t, target)
	}
	var err error
	within(t, "CleanKept", func() { err = engine.CleanKept(t.Context(), target, nil) })
	if err != nil {
		t.Fatalf("CleanKept on a target with nothing kept: %v (cleaning after a plan that kept nothing would fail)", err)
	}
	if cfg.Leftovers != nil {
		if after := cfg.leftovers(t, target); !slices.Equal(after, before) {
			t.Fatalf("CleanKept on a target with nothing kept changed it from %v to %v", before, after)
		}
	}

	s := open(t, cfg, cfg.workload(t, target, 0, true))
	for i := range s.blocks() {
		s.write(i)
	}
	s.close()
	within(t, "CleanKept", func() { err = engine.CleanKept(t.Context(), target, nil) })
	if err != nil {
		t.Fatalf("CleanKept after a kept write: %v", err)
	}
	if cfg.Leftovers != nil {
		after := cfg.leftovers(t, target)
		if planted != "" && !slices.Contains(after, planted) {
			t.Errorf("CleanKept removed %q, which no session created: a user's data next to the benchmark would be lost", planted)
		}
		if !slices.Equal(after, before) {
			t.Errorf("CleanKept should remove what the kept session wrote: before it %v, after CleanKept %v", before, after)
		}
	}
	if cfg.EmptyReadIsUsage {
		r, err := engine.Open(t.Context(), cfg.workload(t, target, 100, false))
		if err == nil {
			_ = r.Close(t.Context())
			t.Errorf("after CleanKept, a read-only session opened: it would read what was removed")
		}
	}
}
