package enginetest

import (
	"bytes"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/workload"
)

// reuseBlock is large enough that engines which keep a buffer's data
// between writes (the Ceph engines, from 64 KiB) do so.
const reuseBlock = 256 << 10

// testReusedBuffers checks that a queue's writes carry what each buffer
// holds as the runner reuses its buffers: after a read into a buffer, a
// write from it sends what the read brought, not what the buffer held at
// its last write; a buffer no read touched sends its own header.
func testReusedBuffers(t *testing.T, cfg Config) {
	if !cfg.Persistent {
		t.Skip("the engine keeps no data to read back")
	}
	w := cfg.workload(t, cfg.NewTarget(t), 50, false)
	w.BlockSize, w.ObjectSize, w.FileSize = reuseBlock, reuseBlock*blocksPerObject, 16*reuseBlock
	if cfg.WholeObjects {
		w.ObjectSize = reuseBlock
	}
	w.Verify = false // the suite compares the bytes itself
	if err := w.Validate(); err != nil {
		t.Fatalf("enginetest: invalid workload: %v", err)
	}
	s := open(t, cfg, w)
	defer s.close()
	as, ok := s.Session.(engine.AsyncSession)
	if !ok {
		t.Skip("the session has no queues")
	}
	q := newQueue(t, as, 2)
	defer q.Close()

	a, b := s.op(engine.Write, 0), s.op(engine.Write, 1)
	queued := func(ops ...*engine.Op) {
		t.Helper()
		for _, op := range ops {
			if err := q.Submit(op); err != nil {
				t.Fatalf("Submit: %v", err)
			}
		}
		reapAll(t, q, ops, len(ops))
	}
	queued(a, b)

	// Block 2 holds other data than the suite's pattern; a read brings it
	// into a's buffer, and a's next write must send it.
	foreign := s.op(engine.Write, 2)
	for i := range foreign.Buf {
		foreign.Buf[i] = byte(i*7 + 3)
	}
	if err := s.do(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	a.Kind = engine.Read
	s.place(a, 2)
	queued(a)
	a.Kind = engine.Write
	s.place(a, 3)
	workload.Stamp(a)
	s.place(b, 4)
	workload.Stamp(b)
	queued(a, b)

	for i, want := range map[int][]byte{3: a.Buf, 4: b.Buf} {
		got := s.op(engine.Read, i)
		if err := s.do(t.Context(), got); err != nil {
			t.Fatalf("reading back block %d: %v", i, err)
		}
		if !bytes.Equal(got.Buf, want) {
			at := 0
			for at < len(want) && got.Buf[at] == want[at] {
				at++
			}
			t.Errorf("block %d reads back other bytes than its buffer held when it was written, from byte %d of %d (a buffer reused after a read wrote stale data)", i, at, len(want))
		}
	}
}
