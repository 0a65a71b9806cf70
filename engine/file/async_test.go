package file_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/file"
	"github.com/cephbench/cephbench/internal/io/kaio"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/workload"
)

var mechanisms = []string{kaio.LibAIO, kaio.IOURing}

func forEachMechanism(t *testing.T, test func(t *testing.T, mech string)) {
	for _, mech := range mechanisms {
		t.Run(mech, func(t *testing.T) { test(t, mech) })
	}
}

func openQueue(t *testing.T, w *spec.Workload, depth int) (*file.AsyncSession, engine.Queue) {
	t.Helper()
	s, err := engine.Open(context.Background(), w)
	if err != nil {
		t.Fatalf("Open %s with %s: %v", w.Target.Location, w.IOEngine, err)
	}
	as, ok := s.(*file.AsyncSession)
	if !ok {
		s.Close(context.Background())
		t.Fatalf("Open with I/O engine %s returned a %T, not a *file.AsyncSession", w.IOEngine, s)
	}
	t.Cleanup(func() { mustClose(t, as) })
	q, err := as.NewQueue(depth)
	if err != nil {
		t.Fatalf("NewQueue(%d): %v", depth, err)
	}
	t.Cleanup(func() {
		if err := q.Close(); err != nil {
			t.Errorf("Queue.Close: %v", err)
		}
	})
	return as, q
}

// reap reaps n ops from q.
func reap(t *testing.T, q engine.Queue, n int) []*engine.Op {
	t.Helper()
	done := make([]*engine.Op, n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for got := 0; got < n; {
		k, err := q.Reap(ctx, 1, done[got:])
		if err != nil {
			t.Fatalf("Reap after %d of %d ops: %v", got, n, err)
		}
		got += k
	}
	return done
}

func TestSyncEnginesOpenSyncSessions(t *testing.T) {
	for _, ioengine := range []string{"", "psync"} {
		s, err := engine.Open(context.Background(), newWorkload(t, filepath.Join(t.TempDir(), "f"), func(w *spec.Workload) { w.IOEngine = ioengine }))
		if err != nil {
			t.Fatal(err)
		}
		if _, async := s.(engine.AsyncSession); async {
			t.Errorf("I/O engine %q: the session has queues; want one blocking call per op", ioengine)
		}
		mustClose(t, s)
	}
}

// TestAsyncRun runs verified mixed workloads through the runner, on a
// directory (a file per worker, so each queue addresses several files'
// ops only of its worker) and on one file with direct I/O.
func TestAsyncRun(t *testing.T) {
	forEachMechanism(t, func(t *testing.T, mech string) {
		for name, loc := range map[string]string{"dir": t.TempDir(), "file": filepath.Join(t.TempDir(), "f")} {
			t.Run(name, func(t *testing.T) {
				w := newWorkload(t, loc, func(w *spec.Workload) {
					w.IOEngine, w.Direct, w.Verify = mech, name == "file", true
					w.Workers, w.QueueDepth, w.TotalOps = 3, 16, 3000
				})
				s, err := engine.Open(context.Background(), w)
				if err != nil {
					t.Fatal(err)
				}
				defer mustClose(t, s)
				out, err := runner.Run(context.Background(), s, w, runner.Options{})
				if err != nil {
					t.Fatal(err)
				}
				var ops, errs int64
				for k := range out.Kinds {
					o, _, e := out.Collector.Totals(k)
					ops, errs = ops+o, errs+e
				}
				if ops != w.TotalOps || errs != 0 {
					t.Errorf("%d ops done, %d failed (%v); want %d done", ops, errs, out.Summaries(), w.TotalOps)
				}
			})
		}
	})
}

func TestAsyncOpTimes(t *testing.T) {
	forEachMechanism(t, func(t *testing.T, mech string) {
		_, q := openQueue(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), func(w *spec.Workload) { w.IOEngine = mech }), 4)
		before := engine.Now()
		ops := make([]*engine.Op, 4)
		for i := range ops {
			ops[i] = &engine.Op{Kind: engine.Read, Offset: int64(i) * bs, Buf: block(bs)}
			if err := q.Submit(ops[i]); err != nil {
				t.Fatal(err)
			}
		}
		for _, op := range reap(t, q, len(ops)) {
			if op.Err != nil || op.Issued < before || op.Completed < op.Issued || op.Completed > engine.Now() {
				t.Errorf("op at %d: err %v, issued %v, completed %v (submitted after %v)", op.Offset, op.Err, op.Issued, op.Completed, before)
			}
			if err := workload.Check(op); err != nil {
				t.Error(err)
			}
		}
	})
}

// TestAsyncShortRead reads across the end of a file truncated under the
// session: the read goes on past the part it got, then fails like Do's.
func TestAsyncShortRead(t *testing.T) {
	forEachMechanism(t, func(t *testing.T, mech string) {
		path := filepath.Join(t.TempDir(), "data")
		foreign(t, path, 4*bs)
		_, q := openQueue(t, newWorkload(t, path, func(w *spec.Workload) { readOnly(w); w.FileSize = 0; w.IOEngine = mech }), 2)
		if err := os.Truncate(path, bs+100); err != nil {
			t.Fatal(err)
		}
		op := &engine.Op{Kind: engine.Read, Offset: bs, Buf: make([]byte, bs)}
		if err := q.Submit(op); err != nil {
			t.Fatal(err)
		}
		reap(t, q, 1)
		if !errors.Is(op.Err, io.ErrUnexpectedEOF) || !strings.Contains(op.Err.Error(), path) {
			t.Errorf("read across the end of the file: %v; want io.ErrUnexpectedEOF naming %s", op.Err, path)
		}
		if string(op.Buf[:100]) != strings.Repeat("precious", 13)[:100] {
			t.Errorf("the bytes before the end of the file were not read: %q", op.Buf[:100])
		}
	})
}

// TestAsyncKernelErrors checks that what the kernel refuses comes back as
// the op's errno: a direct read into a misaligned buffer, a write on a
// file opened read-only.
func TestAsyncKernelErrors(t *testing.T) {
	forEachMechanism(t, func(t *testing.T, mech string) {
		_, q := openQueue(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), func(w *spec.Workload) { w.IOEngine, w.Direct = mech, true }), 2)
		misaligned := block(bs + 1)[1:]
		op := &engine.Op{Kind: engine.Read, Buf: misaligned}
		if err := q.Submit(op); err != nil {
			t.Fatal(err)
		}
		reap(t, q, 1)
		if !errors.Is(op.Err, syscall.EINVAL) {
			t.Errorf("direct read into a misaligned buffer: %v; want EINVAL", op.Err)
		}

		path := filepath.Join(t.TempDir(), "g")
		mustClose(t, mustOpen(t, newWorkload(t, path, func(w *spec.Workload) { w.Keep = true })))
		_, q = openQueue(t, newWorkload(t, path, func(w *spec.Workload) { readOnly(w); w.IOEngine = mech }), 2)
		op = &engine.Op{Kind: engine.Write, Buf: block(bs)}
		if err := q.Submit(op); err != nil {
			t.Fatal(err)
		}
		reap(t, q, 1)
		if !errors.Is(op.Err, syscall.EBADF) {
			t.Errorf("write on a read-only session: %v; want EBADF", op.Err)
		}
	})
}

func TestAsyncSubmitRefusesWithoutIO(t *testing.T) {
	forEachMechanism(t, func(t *testing.T, mech string) {
		_, q := openQueue(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), func(w *spec.Workload) { w.IOEngine = mech }), 1)
		for _, op := range []*engine.Op{
			{Kind: engine.Read, Offset: mib, Buf: make([]byte, bs)},
			{Kind: engine.Read, Offset: -bs, Buf: make([]byte, bs)},
			{Kind: engine.Read, File: 1, Buf: make([]byte, bs)},
			{Kind: engine.NumOpKinds, Buf: make([]byte, bs)},
		} {
			if err := q.Submit(op); err == nil {
				t.Errorf("Submit of %v at file %d offset %d succeeded", op.Kind, op.File, op.Offset)
			}
		}
		if err := q.Submit(&engine.Op{Kind: engine.Read, Buf: make([]byte, bs)}); err != nil {
			t.Fatal(err)
		}
		if err := q.Submit(&engine.Op{Kind: engine.Read, Buf: make([]byte, bs)}); err == nil {
			t.Error("Submit beyond the depth succeeded")
		}
		if n, err := q.Reap(context.Background(), 2, make([]*engine.Op, 2)); err == nil {
			t.Errorf("Reap(2) with 1 op in flight returned %d and no error", n)
		}
		reap(t, q, 1)
	})
}

// TestAsyncSteadyStateDoesNotAllocate submits and reaps a queue's worth
// of ops, over and over.
func TestAsyncSteadyStateDoesNotAllocate(t *testing.T) {
	forEachMechanism(t, func(t *testing.T, mech string) {
		const depth = 8
		_, q := openQueue(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), func(w *spec.Workload) { w.IOEngine = mech }), depth)
		ops := make([]*engine.Op, depth)
		for i := range ops {
			ops[i] = &engine.Op{Kind: engine.OpKind(i % 2), Offset: int64(i) * bs, Buf: block(bs)}
		}
		done := make([]*engine.Op, depth)
		ctx := context.Background()
		var err error
		allocs := testing.AllocsPerRun(50, func() {
			for _, op := range ops {
				if e := q.Submit(op); e != nil {
					err = e
				}
			}
			for got := 0; got < depth && err == nil; {
				var n int
				n, err = q.Reap(ctx, 1, done)
				got += n
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			if op.Err != nil {
				t.Fatalf("%v at %d: %v", op.Kind, op.Offset, op.Err)
			}
		}
		if allocs != 0 {
			t.Errorf("%v allocations per %d ops; want none", allocs, depth)
		}
	})
}

// TestAsyncReapHandsBackAFewAtATime reaps a queue's worth of reads: however
// many completed together, each Reap hands back at most ReapChunk of them,
// so that the runner puts the first back in flight before it checks the
// rest; a caller that waits for more gets them all.
func TestAsyncReapHandsBackAFewAtATime(t *testing.T) {
	forEachMechanism(t, func(t *testing.T, mech string) {
		const depth = 64
		_, q := openQueue(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), func(w *spec.Workload) { w.IOEngine = mech }), depth)
		submit := func() {
			for i := range depth {
				if err := q.Submit(&engine.Op{Kind: engine.Read, Offset: int64(i) * bs, Buf: make([]byte, bs)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		ctx := context.Background()
		done := make([]*engine.Op, depth)
		submit()
		for got := 0; got < depth; {
			n, err := q.Reap(ctx, 1, done)
			if err != nil {
				t.Fatalf("Reap after %d of %d ops: %v", got, depth, err)
			}
			if n > file.ReapChunk {
				t.Fatalf("Reap(1) handed back %d ops at once; want at most %d", n, file.ReapChunk)
			}
			got += n
		}
		submit()
		if n, err := q.Reap(ctx, depth, done); err != nil || n != depth {
			t.Fatalf("Reap(%d) = %d, %v; want all %d", depth, n, err, depth)
		}
	})
}

// An op reaches the kernel, and its latency starts, as soon as it is
// submitted, unless the workload gathers a batch first: then when the
// batch is whole, or when the worker reaps.
func TestAsyncSubmitBatch(t *testing.T) {
	forEachMechanism(t, func(t *testing.T, mech string) {
		for _, batch := range []int{0, 1, 4} {
			const depth = 8
			_, q := openQueue(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), func(w *spec.Workload) {
				w.IOEngine, w.QueueDepth, w.SubmitBatch = mech, depth, batch
			}), depth)
			ops := make([]*engine.Op, depth-1)
			for i := range ops {
				ops[i] = &engine.Op{Kind: engine.Read, Offset: int64(i) * bs, Buf: make([]byte, bs)}
				if err := q.Submit(ops[i]); err != nil {
					t.Fatal(err)
				}
				for j, op := range ops[:i+1] {
					// Ops of a whole batch are in the kernel; the rest wait.
					if sent := j < (i+1)/max(batch, 1)*max(batch, 1); sent != (op.Issued != 0) {
						t.Fatalf("batch %d, after %d submitted: op %d in the kernel %v; want %v", batch, i+1, j, op.Issued != 0, sent)
					}
				}
			}
			done := make([]*engine.Op, depth)
			for got := 0; got < len(ops); {
				n, err := q.Reap(context.Background(), 1, done)
				if err != nil {
					t.Fatal(err)
				}
				got += n
			}
			for j, op := range ops {
				if op.Issued == 0 || op.Err != nil {
					t.Errorf("batch %d: op %d reaped with issued %v, error %v", batch, j, op.Issued, op.Err)
				}
			}
		}
	})
}

// TestAsyncCloseWithOpsInFlight closes a queue with ops in the kernel and
// ops only submitted to it: Close waits for the first and drops the rest.
func TestAsyncCloseWithOpsInFlight(t *testing.T) {
	forEachMechanism(t, func(t *testing.T, mech string) {
		const depth = 16
		s, _ := openQueue(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), func(w *spec.Workload) {
			w.IOEngine, w.Direct, w.QueueDepth, w.SubmitBatch = mech, true, depth, depth
		}), 1)
		q, err := s.NewQueue(depth)
		if err != nil {
			t.Fatal(err)
		}
		for i := range depth {
			if err := q.Submit(&engine.Op{Kind: engine.Read, Offset: int64(i) * bs, Buf: block(bs)}); err != nil {
				t.Fatal(err)
			}
			if i == depth/2 {
				// Half reach the kernel; Reap(0) submits without waiting.
				if _, err := q.Reap(context.Background(), 0, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := q.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := q.Submit(&engine.Op{Kind: engine.Read, Buf: block(bs)}); err == nil {
			t.Error("Submit after Close succeeded")
		}
	})
}

// TestAsyncCanceledReap checks that Reap returns on cancellation with ops
// still in flight, which come back from a later Reap.
func TestAsyncCanceledReap(t *testing.T) {
	forEachMechanism(t, func(t *testing.T, mech string) {
		_, q := openQueue(t, newWorkload(t, filepath.Join(t.TempDir(), "f"), func(w *spec.Workload) { w.IOEngine = mech }), 2)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		op := &engine.Op{Kind: engine.Read, Buf: block(bs)}
		if err := q.Submit(op); err != nil {
			t.Fatal(err)
		}
		done := make([]*engine.Op, 2)
		n, err := q.Reap(ctx, 1, done)
		switch {
		case n == 0 && !errors.Is(err, context.Canceled):
			t.Fatalf("Reap on a canceled context returned nothing and %v; want context.Canceled", err)
		case n == 0:
			done = reap(t, q, 1)
		}
		if done[0] != op || op.Err != nil {
			t.Errorf("the op in flight came back as %p with %v; want %p with no error", done[0], op.Err, op)
		}
	})
}

// TestAsyncOpenNamesTheRefusal asks Linux AIO for more events than the
// system allows (fs.aio-max-nr, 65536 by default): Open must fail before
// laying anything out, naming the mechanism and the errno.
func TestAsyncOpenNamesTheRefusal(t *testing.T) {
	dir := t.TempDir()
	w := newWorkload(t, dir, func(w *spec.Workload) { w.IOEngine, w.QueueDepth = kaio.LibAIO, 65536 })
	s, err := engine.Open(context.Background(), w)
	if err == nil {
		mustClose(t, s)
		t.Skip("this system allows a Linux AIO context of 65536 events")
	}
	if !engine.IsUsage(err) || !strings.Contains(err.Error(), "libaio") || !strings.Contains(err.Error(), "EAGAIN") {
		t.Errorf("Open: %v (usage error %v); want a usage error naming libaio and EAGAIN", err, engine.IsUsage(err))
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("a refused Open left %q", got)
	}
}
