package aioq_test

import (
	"errors"
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/io/aioq"
	"github.com/cephbench/cephbench/internal/io/aioq/aioqtest"
)

const blockSize = 512

// newQueue returns a queue over a fake backend, both freed when the test
// ends.
func newQueue(t *testing.T, depth, spare int) (*aioq.Queue, *aioqtest.Backend) {
	t.Helper()
	b := aioqtest.New(depth + spare)
	q, err := aioq.New(depth, spare, b.Issue(), b.Ctx())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Complete(depth+spare, 0)
		for q.InFlight() > 0 {
			q.Reap(q.Slots(), func(aioq.Reaped) {})
		}
		if err := q.Close(); err != nil {
			t.Error(err)
		}
		b.Free()
	})
	return q, b
}

func submit(t *testing.T, q *aioq.Queue, n int, op aioq.Op) {
	t.Helper()
	for i := range n {
		name := func(b []byte) []byte { return append(b, "object"...) }
		if _, err := q.Submit(name, op, make([]byte, blockSize), int64(i*blockSize)); err != nil {
			t.Fatalf("submit %d: %v", i+1, err)
		}
	}
}

func reapAll(q *aioq.Queue) []aioq.Reaped {
	var out []aioq.Reaped
	q.Reap(q.Slots(), func(r aioq.Reaped) { out = append(out, r) })
	return out
}

func TestDepthBoundsWhatIsInFlight(t *testing.T) {
	q, b := newQueue(t, 4, 4)
	submit(t, q, 4, aioq.Write)
	if _, err := q.Submit(nil, aioq.Write, make([]byte, blockSize), 0); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("a fifth op on a queue of depth 4 that does not stage: %v; want EBUSY", err)
	}
	before := engine.Now()
	if n := b.Complete(4, 0); n != 4 {
		t.Fatalf("%d ops started; want 4", n)
	}
	got := reapAll(q)
	if len(got) != 4 {
		t.Fatalf("reaped %d of 4 completed ops", len(got))
	}
	for _, r := range got {
		if r.Ret != blockSize || r.Start == 0 || r.Start > before || r.End < before {
			t.Errorf("reaped %+v; want %d bytes, started before %v and ended after", r, blockSize, before)
		}
	}
}

func TestStagedOpsStartAsOthersComplete(t *testing.T) {
	q, b := newQueue(t, 4, 4)
	q.Stage(engine.Now() + time.Hour)
	submit(t, q, 8, aioq.Read)
	if now, _ := b.Active(); now != 4 {
		t.Fatalf("%d ops started of 8 submitted to a queue of depth 4", now)
	}
	b.Complete(1, 0x5a)
	if now, _ := b.Active(); now != 4 {
		t.Errorf("%d ops in flight after one of 4 completed with 4 staged; want a staged one started at once", now)
	}
	b.Complete(8, 0x5a)
	got := reapAll(q)
	if len(got) != 8 {
		t.Fatalf("reaped %d of 8", len(got))
	}
	if _, most := b.Active(); most > 4 {
		t.Errorf("%d ops were in flight at once on a queue of depth 4", most)
	}
	firstEnd := got[0].End
	for i, r := range got {
		if r.Ret != blockSize {
			t.Errorf("op %d returned %d", i, r.Ret)
		}
		if i >= 4 && r.Start < firstEnd {
			t.Errorf("staged op %d started at %v, before the first completion at %v", i, r.Start, firstEnd)
		}
	}
}

func TestStagedOpsPastTheCutoffNeverStart(t *testing.T) {
	q, b := newQueue(t, 2, 2)
	q.Stage(engine.Now() + 20*time.Millisecond)
	submit(t, q, 4, aioq.Write)
	time.Sleep(30 * time.Millisecond)
	b.Complete(2, 0)
	var started, unstarted int
	for _, r := range reapAll(q) {
		if r.Ret == aioq.NotIssued {
			unstarted++
			if r.Start != 0 {
				t.Errorf("an unstarted op has a start: %+v", r)
			}
		} else {
			started++
		}
	}
	if started != 2 || unstarted != 2 {
		t.Errorf("%d started and %d unstarted; want the 2 in flight and the 2 staged past the cutoff", started, unstarted)
	}
	if now, _ := b.Active(); now != 0 {
		t.Errorf("%d ops started past the cutoff", now)
	}
}

func TestUnstageReturnsStagedOps(t *testing.T) {
	q, b := newQueue(t, 2, 2)
	q.Stage(engine.Now() + time.Hour)
	submit(t, q, 4, aioq.Write)
	q.Unstage()
	got := reapAll(q)
	if len(got) != 2 || got[0].Ret != aioq.NotIssued || got[1].Ret != aioq.NotIssued {
		t.Fatalf("after Unstage, reaped %+v; want the 2 staged ops, unstarted", got)
	}
	b.Complete(2, 0)
	if got := reapAll(q); len(got) != 2 || got[0].Ret != blockSize {
		t.Errorf("then reaped %+v; want the 2 in flight, completed", got)
	}
}

// A reaper of a staging queue wakes per batch, not per op: the queue
// signals once half its spare ops completed, or when nothing is left
// staged.
func TestStagingWakesTheReaperPerBatch(t *testing.T) {
	q, b := newQueue(t, 4, 8)
	q.Stage(engine.Now() + time.Hour)
	submit(t, q, 12, aioq.Write)
	waited := func() time.Duration {
		start := time.Now()
		q.Wait(start.Add(100 * time.Millisecond))
		return time.Since(start)
	}
	b.Complete(3, 0)
	if d := waited(); d < 90*time.Millisecond {
		t.Errorf("woken after %v by 3 completions; want a wake-up only after 4 (half the spare)", d)
	}
	b.Complete(1, 0)
	if d := waited(); d > 80*time.Millisecond {
		t.Errorf("waited %v after 4 completions; want a wake-up at once", d)
	}
	if got := reapAll(q); len(got) != 4 {
		t.Errorf("reaped %d; want the 4 completed", len(got))
	}
}

func TestCloseRefusesOpsInFlight(t *testing.T) {
	q, b := newQueue(t, 2, 0)
	submit(t, q, 1, aioq.Write)
	if err := q.Close(); err == nil {
		t.Error("Close with an op in flight returned nil; the op's completion would touch freed memory")
	}
	b.Complete(1, 0)
	reapAll(q)
}

func TestStagingWithoutACutoff(t *testing.T) {
	q, b := newQueue(t, 1, 1)
	q.Stage(math.MaxInt64) // a run bounded by ops or bytes, not time
	submit(t, q, 2, aioq.Write)
	b.Complete(2, 0)
	for _, r := range reapAll(q) {
		if r.Ret != blockSize {
			t.Errorf("reaped %+v; with no cutoff, a staged op must start", r)
		}
	}
}
