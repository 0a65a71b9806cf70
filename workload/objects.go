package workload

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/cephbench/cephbench/engine"
)

// Objects is the set of whole objects a mix gets, stats and deletes, and
// the numbering of the objects its puts create. It outlives a run: the
// runs on one session share it, so a get phase reads what a put phase
// left. Its methods are safe for concurrent use.
type Objects struct {
	mu   sync.Mutex
	live []int64
	// busy counts the gets and stats in flight on an object: a delete
	// takes only an object nobody reads, so that no read fails because
	// the run itself removed its object.
	busy map[int64]int
	next int64 // the number of the next new object
}

// NewObjects returns the set of objects 0 to count-1, all live (those a
// session found at its target).
func NewObjects(count int64) *Objects {
	o := &Objects{busy: map[int64]int{}, next: count}
	for n := range count {
		o.live = append(o.live, n)
	}
	return o
}

// Count is how many objects there are to get, stat and delete.
func (o *Objects) Count() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return int64(len(o.live))
}

// create returns the number of a new object.
func (o *Objects) create() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.next++
	return o.next - 1
}

// add makes object n, now written, available.
func (o *Objects) add(n int64) {
	o.mu.Lock()
	o.live = append(o.live, n)
	o.mu.Unlock()
}

// pick returns an object at random for a get or stat, marked busy until
// release.
func (o *Objects) pick(r *rand.Rand) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.live) == 0 {
		return 0, false
	}
	n := o.live[r.IntN(len(o.live))]
	o.busy[n]++
	return n, true
}

// release ends a get or stat of object n.
func (o *Objects) release(n int64) {
	o.mu.Lock()
	if o.busy[n]--; o.busy[n] == 0 {
		delete(o.busy, n)
	}
	o.mu.Unlock()
}

// take removes an object nobody reads, from a random place on, for a
// delete. At most as many objects as ops in flight are busy, so the scan
// is short.
func (o *Objects) take(r *rand.Rand) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.live) == 0 {
		return 0, false
	}
	start := r.IntN(len(o.live))
	for i := range o.live {
		j := (start + i) % len(o.live)
		n := o.live[j]
		if o.busy[n] > 0 {
			continue
		}
		o.live[j] = o.live[len(o.live)-1]
		o.live = o.live[:len(o.live)-1]
		return n, true
	}
	return 0, false
}

// Put writes n new objects of size bytes through sess, parallel at a
// time, unmeasured, and adds them to the set: the objects a mix without
// puts of its own works on. It stops at the first error or when ctx ends.
func (o *Objects) Put(ctx context.Context, sess engine.Session, n int64, size, parallel int) error {
	var left atomic.Int64
	left.Store(n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for range min(int64(max(parallel, 1)), n) {
		wg.Go(func() {
			op := &engine.Op{Kind: engine.Write, Buf: make([]byte, size)}
			Fill(op.Buf)
			for left.Add(-1) >= 0 {
				op.Object = o.create()
				Stamp(op)
				if err := sess.Do(ctx, op); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					left.Store(0)
					return
				}
				o.add(op.Object)
			}
		})
	}
	wg.Wait()
	return failed
}
