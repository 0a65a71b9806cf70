package enginetest

import (
	"context"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/workload"
)

// sustainedOps is how many writes testSustained keeps going: enough that
// a completion racing the call that issued its op (a library that
// completes a write from its cache before the call returns) shows.
const sustainedOps = 16384

// testSustained keeps a staging queue of depth 32 full of writes, as a
// run does, each reaped op resubmitted from the same buffer, until
// sustainedOps have completed: every op must come back once, without an
// error.
func testSustained(t *testing.T, cfg Config) {
	s, as := openImplementing[engine.AsyncSession](t, cfg)
	defer s.close()
	const depth = 32
	q := newQueue(t, as, depth)
	defer q.Close()
	slots := depth
	if sq, ok := q.(engine.StagingQueue); ok {
		sq.Stage(engine.Now() + patience)
		slots += sq.Spare()
	}
	submitted, completed := 0, 0
	submit := func(op *engine.Op) {
		t.Helper()
		s.place(op, submitted%s.blocks())
		workload.Stamp(op)
		submitted++
		if err := q.Submit(op); err != nil {
			t.Fatalf("Submit of write %d: %v", submitted, err)
		}
	}
	for range slots {
		submit(s.op(engine.Write, 0))
	}
	done := make([]*engine.Op, slots)
	for completed < submitted {
		var (
			n   int
			err error
		)
		ctx, cancel := context.WithTimeout(t.Context(), patience)
		within(t, "Reap", func() { n, err = q.Reap(ctx, 1, done) })
		cancel()
		if err != nil {
			t.Fatalf("Reap with %d writes in flight, %d completed: %v", submitted-completed, completed, err)
		}
		for _, op := range done[:n] {
			completed++
			if op.Err != nil {
				t.Fatalf("write %d of %d: %s: %v", completed, sustainedOps, s.describe(op), op.Err)
			}
			if submitted < sustainedOps {
				submit(op)
			}
		}
	}
	if completed != sustainedOps {
		t.Errorf("%d writes came back of %d submitted", completed, sustainedOps)
	}
}
