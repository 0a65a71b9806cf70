package null_test

import (
	"context"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/enginetest"
	_ "github.com/cephbench/cephbench/engine/null"
	"github.com/cephbench/cephbench/spec"
)

func TestConformance(t *testing.T) {
	enginetest.Run(t, enginetest.Config{
		NewTarget: func(*testing.T) spec.Target { return spec.Target{Scheme: "null"} },
	})
}

func openNull(tb testing.TB, fileSize spec.Size) engine.AsyncSession {
	tb.Helper()
	w := &spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, BlockSize: 4096,
		FileSize: fileSize, Workers: 1, QueueDepth: 1, TotalOps: 1,
	}
	s, err := engine.Open(context.Background(), w)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close(context.Background()) })
	return s.(engine.AsyncSession)
}

func TestGeometrySize(t *testing.T) {
	for _, tc := range []struct {
		fileSize spec.Size
		want     int64
	}{{0, 1 << 30}, {1 << 20, 1 << 20}} {
		g := openNull(t, tc.fileSize).Geometry()
		if g.Layout != engine.Blocks || g.Files != 1 || g.Size != tc.want {
			t.Errorf("file size %d: Geometry() = %+v, want 1 file of %d bytes", tc.fileSize, g, tc.want)
		}
	}
}

func TestQueueFull(t *testing.T) {
	q, err := openNull(t, 0).NewQueue(2)
	if err != nil {
		t.Fatal(err)
	}
	ops := make([]engine.Op, 3)
	for i := range 2 {
		if err := q.Submit(&ops[i]); err != nil {
			t.Fatalf("Submit %d on a queue of depth 2: %v", i+1, err)
		}
	}
	if err := q.Submit(&ops[2]); err == nil {
		t.Error("a third Submit on a full queue of depth 2 succeeded")
	}
	done := make([]*engine.Op, 2)
	if n, err := q.Reap(context.Background(), 2, done); n != 2 || err != nil || done[0] != &ops[0] || done[1] != &ops[1] {
		t.Errorf("Reap(min=2) = %d, %v (ops %p %p); want the 2 submitted ops in order", n, err, done[0], done[1])
	}
	if err := q.Submit(&ops[2]); err != nil {
		t.Errorf("Submit after reaping: %v", err)
	}
}

// TestNoAllocs holds the engine to its purpose: measuring the tool's own
// cost, which an allocation per op would distort.
func TestNoAllocs(t *testing.T) {
	s := openNull(t, 0)
	q, err := s.NewQueue(4)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	op := &engine.Op{Buf: make([]byte, 4096)}
	done := make([]*engine.Op, 1)
	if n := testing.AllocsPerRun(1000, func() { s.Do(ctx, op) }); n != 0 {
		t.Errorf("Do allocates %v times per op", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		q.Submit(op)
		q.Reap(ctx, 1, done)
	}); n != 0 {
		t.Errorf("Submit+Reap allocate %v times per op", n)
	}
}

func BenchmarkDo(b *testing.B) {
	s := openNull(b, 0)
	ctx := context.Background()
	op := &engine.Op{Kind: engine.Write, Buf: make([]byte, 4096)}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Do(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQueue keeps the queue full, as the runner does at depth 32, and
// reports the cost per op.
func BenchmarkQueue(b *testing.B) {
	const depth = 32
	q, err := openNull(b, 0).NewQueue(depth)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ops := make([]engine.Op, depth)
	done := make([]*engine.Op, depth)
	for i := range ops {
		ops[i].Buf = make([]byte, 4096)
		if err := q.Submit(&ops[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		n, err := q.Reap(ctx, 1, done[:1])
		if n != 1 || err != nil {
			b.Fatal(n, err)
		}
		if err := q.Submit(done[0]); err != nil {
			b.Fatal(err)
		}
	}
}
