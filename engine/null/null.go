// Package null is the "null" engine: it does no I/O, so a run against it
// measures cephbench's own per-operation cost (generator, pacing, metrics).
// Importing it registers the scheme; "null://" needs no location.
package null

import (
	"context"
	"errors"
	"fmt"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// defaultSize is the addressable size when the workload sets no file size:
// large enough that block offsets spread like on a real device.
const defaultSize = 1 << 30

func init() {
	engine.Register("null", engine.Func(open), engine.Description{Syntax: "null://", Layout: engine.Blocks})
}

func open(_ context.Context, w *spec.Workload) (engine.Session, error) {
	size := int64(w.Extent())
	if size == 0 {
		size = defaultSize
	}
	return &session{geo: engine.Geometry{Layout: engine.Blocks, Files: 1, Size: size}}, nil
}

// session is safe for concurrent use: it holds no mutable state.
type session struct{ geo engine.Geometry }

var (
	_ engine.AsyncSession = (*session)(nil)
	_ engine.Syncer       = (*session)(nil)
)

func (s *session) Geometry() engine.Geometry { return s.geo }

// Do completes at once; a read leaves op.Buf as it was.
func (s *session) Do(context.Context, *engine.Op) error { return nil }

func (s *session) Close(context.Context) error { return nil }

// Sync does nothing, as fio's null engine does for an fsync.
func (s *session) Sync(context.Context, int) error { return nil }

func (s *session) NewQueue(depth int) (engine.Queue, error) {
	if depth < 1 {
		return nil, fmt.Errorf("null: invalid queue depth %d", depth)
	}
	return &queue{ring: make([]*engine.Op, depth)}, nil
}

var errFull = errors.New("null: queue full: reap before submitting more")

// queue completes each op as it is submitted. Completed ops wait in a ring
// sized at the queue depth, so Submit and Reap never allocate.
type queue struct {
	ring []*engine.Op
	head int // oldest completed op
	n    int // completed ops not yet reaped
}

func (q *queue) Submit(op *engine.Op) error {
	if q.n == len(q.ring) {
		return errFull
	}
	i := q.head + q.n
	if i >= len(q.ring) {
		i -= len(q.ring)
	}
	op.Err = nil
	q.ring[i] = op
	q.n++
	return nil
}

// Reap never waits: every submitted op has already completed. Asking for
// more than are in flight would wait forever, so it is an error instead.
func (q *queue) Reap(_ context.Context, min int, done []*engine.Op) (int, error) {
	if min > q.n {
		return 0, fmt.Errorf("null: reap of %d ops with only %d in flight", min, q.n)
	}
	k := 0
	for ; k < len(done) && q.n > 0; k++ {
		done[k] = q.ring[q.head]
		q.ring[q.head] = nil // the runner owns the op again
		q.head++
		if q.head == len(q.ring) {
			q.head = 0
		}
		q.n--
	}
	return k, nil
}

func (q *queue) Close() error { return nil }
