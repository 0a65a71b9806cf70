package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/io/kaio"
	"github.com/cephbench/cephbench/spec"
)

// AsyncSession is a Session whose queues keep their ops in flight in the
// kernel, through Linux AIO or io_uring as the workload's IOEngine says:
// each queue has a kernel queue of its own and runs each op on the
// descriptor of the op's file, as Do does. Do, Geometry and NewQueue are
// safe for concurrent use; every queue is closed before the session.
type AsyncSession struct {
	*Session
	mechanism string // kaio.LibAIO or kaio.IOURing
	batch     int    // ops gathered per submission: spec.Workload.SubmitBatch
}

var _ engine.AsyncSession = (*AsyncSession)(nil)

// openAsync opens w's target for w.IOEngine. The kernel may refuse the
// mechanism (io_uring under a container's seccomp filter, AIO past
// fs.aio-max-nr): that is found, and reported as a usage error naming the
// system call and errno, before anything is laid out. There is no
// fallback to another mechanism: the user asked for this one.
func openAsync(ctx context.Context, w *spec.Workload) (*AsyncSession, error) {
	probe, err := kaio.New(w.IOEngine, w.QueueDepth)
	if err != nil {
		return nil, &engine.UsageError{Err: err}
	}
	if err := probe.Close(); err != nil {
		return nil, err
	}
	s, err := openSession(ctx, w)
	if err != nil {
		return nil, err
	}
	return &AsyncSession{Session: s, mechanism: w.IOEngine, batch: max(w.SubmitBatch, 1)}, nil
}

// NewQueue returns a queue of depth ops on a kernel queue of its own. Its
// error names the system call that failed and the errno.
func (s *AsyncSession) NewQueue(depth int) (engine.Queue, error) {
	k, err := kaio.New(s.mechanism, depth)
	if err != nil {
		return nil, err
	}
	q := &queue{
		s:      s.Session,
		k:      k,
		batch:  min(s.batch, k.Batch()),
		ops:    make([]*engine.Op, depth),
		moved:  make([]int, depth),
		free:   make([]int, depth),
		unsent: make([]*engine.Op, 0, depth),
		comps:  make([]kaio.Completion, depth),
	}
	for i := range q.free {
		q.free[i] = depth - 1 - i
	}
	return q, nil
}

// reapWait is how long Reap waits in the kernel before it checks its
// context again.
const reapWait = 100 * time.Millisecond

// ReapChunk is the most completions Reap hands back at once, unless asked
// to wait for more. A virtual disk completes a kick's worth of requests
// together; handed back all at once, they would be checked and refilled
// all at once, and the device would sit idle meanwhile, round after round.
// A few at a time, the first refills are at the device while the rest are
// still being checked.
const ReapChunk = 8

var errQueueClosed = errors.New("file: queue closed")

// queue is an engine.Queue on a kaio.Queue. Submit prepares an op and
// hands what is prepared to the kernel in one system call once batch ops
// are; Reap hands it what is left. Not safe for concurrent use.
type queue struct {
	s     *Session
	k     kaio.Queue
	batch int
	// failed is a submission's failure, the kernel queue's own, which
	// Reap reports: the ops it held are the queue's by then.
	failed error

	ops    []*engine.Op // by slot; nil when free
	moved  []int        // by slot: bytes done by earlier parts of a short op
	free   []int        // free slots
	unsent []*engine.Op // prepared since the last submission, to stamp Issued
	comps  []kaio.Completion
	closed bool
}

// Submit prepares op; it fails, without I/O, if op addresses nothing of
// the target or the queue is full.
func (q *queue) Submit(op *engine.Op) error {
	switch {
	case q.closed:
		return errQueueClosed
	case op.Kind != engine.Read && op.Kind != engine.Write:
		return fmt.Errorf("file: unsupported op kind %v", op.Kind)
	case len(q.free) == 0:
		return fmt.Errorf("file: queue of depth %d full: reap before submitting more", len(q.ops))
	}
	if err := q.s.check(op); err != nil {
		return err
	}
	slot := q.free[len(q.free)-1]
	if err := q.k.Prep(slot, q.s.fds[op.File], op.Kind == engine.Write, op.Buf, op.Offset); err != nil {
		return err
	}
	q.free = q.free[:len(q.free)-1]
	q.ops[slot] = op
	q.unsent = append(q.unsent, op)
	if q.k.Pending() >= q.batch && q.failed == nil {
		q.failed = q.submit()
	}
	return nil
}

// stamp sets Issued on the ops about to reach the kernel: their latency
// starts there, not while they waited for their batch.
func (q *queue) stamp() {
	if len(q.unsent) == 0 {
		return
	}
	now := engine.Now()
	for _, op := range q.unsent {
		op.Issued = now
	}
	clear(q.unsent)
	q.unsent = q.unsent[:0]
}

func (q *queue) submit() error {
	q.stamp()
	return q.k.Submit()
}

// Reap submits what Submit prepared, then waits for at least least ops
// to complete, or ctx to end, rechecking ctx every reapWait, and returns
// at most max(least, ReapChunk) of them. An op comes back
// with Err set as Do would set it, Issued when it reached the kernel, and
// Completed when its completion was reaped.
func (q *queue) Reap(ctx context.Context, least int, done []*engine.Op) (int, error) {
	switch {
	case q.closed:
		return 0, errQueueClosed
	case q.failed != nil:
		return 0, q.failed
	}
	if inFlight := q.k.InFlight(); least > inFlight {
		return 0, fmt.Errorf("file: reap of %d ops with only %d in flight", least, inFlight)
	}
	want := min(least, len(done))
	n := 0
	for {
		q.stamp()
		wait := want - n
		if wait > 0 && ctx.Err() != nil {
			wait = 0 // take what has completed, without waiting
		}
		room := min(len(done)-n, len(q.comps), max(ReapChunk, want)-n)
		got, err := q.k.Wait(wait, reapWait, q.comps[:room])
		if got > 0 {
			now := engine.Now()
			for _, c := range q.comps[:got] {
				if op := q.complete(c, now); op != nil {
					done[n] = op
					n++
				}
			}
		}
		if err != nil {
			return n, err
		}
		if n >= want {
			return n, nil
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
	}
}

// complete turns c into its op's outcome and returns the op, or nil when
// the op moved fewer bytes than asked and its remainder went back in
// flight: like Do, a short transfer goes on until it is whole, reaches the
// end of the file or fails.
func (q *queue) complete(c kaio.Completion, now time.Duration) *engine.Op {
	op := q.ops[c.Slot]
	moved := q.moved[c.Slot]
	var err error
	switch rest := len(op.Buf) - moved; {
	case c.Res < 0:
		err = syscall.Errno(-c.Res)
	case int(c.Res) < rest && c.Res > 0:
		moved += int(c.Res)
		err = q.k.Prep(c.Slot, q.s.fds[op.File], op.Kind == engine.Write, op.Buf[moved:], op.Offset+int64(moved))
		if err == nil {
			q.moved[c.Slot] = moved
			return nil
		}
	case int(c.Res) < rest && op.Kind == engine.Read:
		err = q.s.shortRead(op)
	case int(c.Res) < rest:
		err = io.ErrShortWrite
	}
	q.ops[c.Slot], q.moved[c.Slot] = nil, 0
	q.free = append(q.free, c.Slot)
	op.Err, op.Completed = err, now
	return op
}

// Close waits for the ops in the kernel and frees the kernel queue. Ops
// prepared and not yet submitted never start; nothing reaps them.
func (q *queue) Close() error {
	if q.closed {
		return nil
	}
	q.closed = true
	clear(q.ops)
	clear(q.unsent)
	return q.k.Close()
}
