package workload

import (
	"errors"
	"sync"

	"github.com/cephbench/cephbench/engine"
)

// Backlog reads back the writes of a write-only source as it goes, as
// fio's verify_backlog does: once every unverified write counts a
// multiple of every, it reads back the oldest of them, batch in all (a
// batch left short for want of writes goes on as writes come), then goes
// on writing. Every write is read back once: what the run leaves
// unverified, Rest reads. Next is not safe for concurrent use; Done is,
// with Next and other Dones.
type Backlog struct {
	src          Source
	every, batch int64
	left         int64 // reads of the current batch still to make
	lastRead     bool  // the last op made was a read
	mu           sync.Mutex
	// writes are the writes not yet read back, oldest first; made maps
	// each write in flight to its entry, until Done.
	writes []*written
	made   map[*engine.Op]*written
}

// written is a write to read back: where it went and whether it ended.
type written struct {
	file        int
	object, off int64
	size        int
	done        bool
}

// NewBacklog wraps src, a write-only workload's source, to read back the
// oldest batch unverified writes whenever they number a multiple of every
// (both positive).
func NewBacklog(src Source, every, batch int64) *Backlog {
	return &Backlog{src: src, every: every, batch: batch, made: map[*engine.Op]*written{}}
}

// Next makes the next read back when one is due and its write has ended,
// or else the source's next write.
func (b *Backlog) Next(op *engine.Op) bool {
	b.mu.Lock()
	n := int64(len(b.writes))
	if n > 0 && b.left == 0 && n%b.every == 0 && !b.lastRead {
		b.left = b.batch
	}
	if n > 0 && b.left > 0 && b.writes[0].done {
		w := b.writes[0]
		b.writes = b.writes[1:]
		b.left--
		b.lastRead = true
		b.mu.Unlock()
		readBack(op, w)
		return true
	}
	b.mu.Unlock()
	if !b.src.Next(op) {
		return false
	}
	b.lastRead = false
	w := &written{file: op.File, object: op.Object, off: op.Offset, size: len(op.Buf)}
	b.mu.Lock()
	b.writes = append(b.writes, w)
	b.made[op] = w
	b.mu.Unlock()
	return true
}

// readBack makes op the read of what w wrote.
func readBack(op *engine.Op, w *written) {
	op.Kind, op.File, op.Object, op.Offset = engine.Read, w.file, w.object, w.off
	op.Buf = op.Buf[:w.size]
	op.Err, op.Completed = nil, 0
}

// Done marks a write ended, so that it may be read back, or forgets one
// that never started; reads back end with nothing to do.
func (b *Backlog) Done(op *engine.Op, err error) {
	if op.Kind != engine.Write {
		return
	}
	b.mu.Lock()
	if w := b.made[op]; w != nil {
		delete(b.made, op)
		w.done = true
		if errors.Is(err, engine.ErrNotIssued) {
			b.writes = dropNotIssued(b.writes, w)
		}
	}
	b.mu.Unlock()
	b.src.Done(op, err)
}

// dropNotIssued takes w, a write that never started, out of writes.
func dropNotIssued(writes []*written, w *written) []*written {
	for i := len(writes) - 1; i >= 0; i-- {
		if writes[i] == w {
			return append(writes[:i], writes[i+1:]...)
		}
	}
	return writes
}

// Rest reads back, in the order written, the writes the backlog has not
// read back yet; it is for once every op the backlog made has ended.
func (b *Backlog) Rest() Source {
	b.mu.Lock()
	defer b.mu.Unlock()
	rest := &rest{writes: b.writes}
	b.writes = nil
	return rest
}

// rest reads back a list of writes.
type rest struct{ writes []*written }

func (r *rest) Next(op *engine.Op) bool {
	if len(r.writes) == 0 {
		return false
	}
	readBack(op, r.writes[0])
	r.writes = r.writes[1:]
	return true
}

func (r *rest) Done(*engine.Op, error) {}
