//go:build ceph

package rados

/*
#include <stdint.h>
#include <time.h>

static void loadgen_sleep(int64_t ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ceph/go-ceph/rados"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/io/aioq"
	"github.com/cephbench/cephbench/internal/peer/loadgen"
)

// Pool is an open pool whose objects the caller names, for rados
// load-gen: it creates them exclusively, drives them through an
// ObjectQueue and removes them. Its methods are safe for concurrent use,
// but Close is called once, after its queues are closed.
type Pool struct {
	conn  *rados.Conn
	ioctx *rados.IOContext
}

// OpenPool connects to t's cluster and opens t's pool; a pool that does not
// exist is an *engine.UsageError.
func OpenPool(t Target) (*Pool, error) {
	conn, err := Connect(t, 0)
	if err != nil {
		return nil, err
	}
	if _, err := conn.GetPoolByName(t.Pool); err != nil {
		conn.Shutdown()
		return nil, engine.Usagef("pool %q does not exist", t.Pool)
	}
	ioctx, err := conn.OpenIOContext(t.Pool)
	if err != nil {
		conn.Shutdown()
		return nil, fmt.Errorf("opening pool %s: %w", t.Pool, err)
	}
	return &Pool{conn: conn, ioctx: ioctx}, nil
}

// Close disconnects.
func (p *Pool) Close() {
	p.ioctx.Destroy()
	p.conn.Shutdown()
}

// FreeBytes returns the raw capacity the cluster has free.
func (p *Pool) FreeBytes() (int64, error) {
	st, err := p.conn.GetClusterStats()
	if err != nil {
		return 0, fmt.Errorf("reading the cluster's usage: %w", err)
	}
	return int64(st.Kb_avail) << 10, nil
}

// ObjectSizeLimit returns the OSDs' osd_max_object_size: they refuse to
// make an object larger.
func (p *Pool) ObjectSizeLimit() (int64, error) {
	cmd, err := json.Marshal(map[string]string{"prefix": "config get", "who": "osd", "key": "osd_max_object_size", "format": "json"})
	if err != nil {
		return 0, err
	}
	out, info, err := p.conn.MonCommand(cmd)
	if err != nil {
		return 0, fmt.Errorf("ceph config get osd osd_max_object_size: %v %s", err, info)
	}
	n, err := strconv.ParseInt(strings.Trim(string(out), "\" \n"), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("ceph config get osd osd_max_object_size: %q: %w", out, err)
	}
	return n, nil
}

// ClusterSnapshot returns the cluster's state now.
func (p *Pool) ClusterSnapshot() (*cluster.Snapshot, error) { return cluster.Collect(p.conn) }

// parallel is how many blocking creates run at once.
const parallel = 16

// each runs f on every name, parallel at a time, until ctx ends or f
// fails; it returns f's errors joined with ctx's.
func each(ctx context.Context, names []string, f func(i int) error) error {
	next := make(chan int)
	var mu sync.Mutex
	var errs error
	var wg sync.WaitGroup
	for range min(parallel, len(names)) {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					errs = errors.Join(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range names {
		mu.Lock()
		failed := errs != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs, ctx.Err())
}

// CreateExclusive creates each named object, empty, unless an object of
// that name exists, and stops at the first failure or ctx's end.
// created[i] says whether names[i] was created: those, and only those, are
// the caller's to remove. An existing object is an error, so a run never
// writes over data that is not its own.
func (p *Pool) CreateExclusive(ctx context.Context, names []string) (created []bool, err error) {
	created = make([]bool, len(names))
	err = each(ctx, names, func(i int) error {
		switch err := p.ioctx.Create(names[i], rados.CreateExclusive); {
		case errors.Is(err, rados.ErrObjectExists):
			return fmt.Errorf("object %s already exists: refusing to write over it", names[i])
		case err != nil:
			return fmt.Errorf("creating %s: %w", names[i], ErrnoOf(err))
		}
		created[i] = true
		return nil
	})
	return created, err
}

// Remove removes the named objects, going on past failures; one that is
// already gone is not an error.
func (p *Pool) Remove(ctx context.Context, names []string) error {
	return removeAll(ctx, p.ioctx, len(names), func(i int, b []byte) []byte { return append(b, names[i]...) })
}

// ObjectQueue is a librados aio queue (internal/io/aioq with the librados backend) for ops that name their
// objects; completions are stamped in the librados callback. Not safe for
// concurrent use.
type ObjectQueue struct {
	aio *aioQueue
	ops []*loadgen.Op // by slot; nil when free
}

var _ loadgen.Queue = (*ObjectQueue)(nil)

// NewQueue returns an aio queue of the given depth on the pool.
func (p *Pool) NewQueue(depth int) (*ObjectQueue, error) {
	aio, err := newAIOQueue(p.ioctx, depth, 0)
	if err != nil {
		return nil, err
	}
	return &ObjectQueue{aio: aio, ops: make([]*loadgen.Op, depth)}, nil
}

// Submit starts op asynchronously.
func (q *ObjectQueue) Submit(op *loadgen.Op) error {
	kind := aioq.Read
	if op.Write {
		kind = aioq.Write
	}
	slot, err := q.aio.Submit(func(b []byte) []byte { return append(b, op.Name...) }, kind, op.Buf, op.Offset)
	if err != nil {
		return err
	}
	q.ops[slot] = op
	return nil
}

// Reap stores up to len(done) completed ops in done, with Err and
// Completed set, and returns how many; if fewer than least have
// completed, it waits up to wait for them. A read that returns less than
// its length fails with io.ErrUnexpectedEOF.
func (q *ObjectQueue) Reap(least int, wait time.Duration, done []*loadgen.Op) int {
	deadline := time.Now().Add(wait)
	n := 0
	for {
		n += q.reap(done[n:])
		if n >= least || q.aio.InFlight() == 0 || !time.Now().Before(deadline) {
			return n
		}
		q.aio.Wait(deadline)
	}
}

// Sleep pauses for d on the clock the completions are stamped with. It
// sleeps in C: the Go runtime's timers wake a millisecond or more late,
// and a paced op may not be.
func (q *ObjectQueue) Sleep(d time.Duration) {
	if d > 0 {
		C.loadgen_sleep(C.int64_t(d))
	}
}

// reap hands back the ops that have completed, without waiting.
func (q *ObjectQueue) reap(done []*loadgen.Op) int {
	n := 0
	q.aio.Reap(len(done), func(r aioq.Reaped) {
		op := q.ops[r.Slot]
		q.ops[r.Slot] = nil
		op.Completed = r.End
		switch {
		case r.Ret < 0:
			op.Err = syscall.Errno(-r.Ret)
		case !op.Write && r.Ret < len(op.Buf):
			op.Err = fmt.Errorf("%s: read %d of %d bytes at %d: %w", op.Name, r.Ret, len(op.Buf), op.Offset, io.ErrUnexpectedEOF)
		default:
			op.Err = nil
		}
		done[n] = op
		n++
	})
	return n
}

// Close waits for the ops in flight and frees the queue.
func (q *ObjectQueue) Close() {
	done := make([]*loadgen.Op, q.aio.Depth())
	for q.aio.InFlight() > 0 {
		q.Reap(q.aio.InFlight(), time.Second, done)
	}
	_ = q.aio.close()
}
