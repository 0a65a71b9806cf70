//go:build ceph

package rados

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/ceph/go-ceph/rados"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/failpoint"
	"github.com/cephbench/cephbench/internal/io/aioq"
)

// Pool is an open pool whose objects the caller names, for rados
// load-gen: it creates them exclusively, serves them as a session
// (Objects) and removes them. Its methods are safe for concurrent use,
// but Close is called once, after its sessions are closed.
type Pool struct {
	conn   *rados.Conn
	shared *cluster.Shared // conn, which the run's watch shares
	ioctx  *rados.IOContext
	target Target
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
	return &Pool{conn: conn, shared: cluster.Share(cluster.NewConn(conn)), ioctx: ioctx, target: t}, nil
}

// Close disconnects.
func (p *Pool) Close() {
	p.ioctx.Destroy()
	p.shared.Close()
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
		failpoint.Hit(failpoint.Layout)
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

// PutRecord puts the write record of the objects named stem followed by a
// number in the pool, before any of them is created, so that a cleanup
// of the pool finds them whenever the run is killed.
func (p *Pool) PutRecord(stem string) error {
	put, err := putRecord(p.ioctx, writeahead.Record{Stem: stem}.Mine())
	if err == nil && !put {
		err = fmt.Errorf("%s exists: another run writes objects of the same names", writeahead.NamePrefix+stem)
	}
	return err
}

// DropRecord removes the write record PutRecord put, once its objects are
// removed.
func (p *Pool) DropRecord(stem string) error {
	return dropRecord(p.ioctx, writeahead.Record{Stem: stem}.Name())
}

// Remove removes the named objects, going on past failures; one that is
// already gone is not an error.
func (p *Pool) Remove(ctx context.Context, names []string) error {
	return removeAll(ctx, p.ioctx, len(names), func(i int, b []byte) []byte { return append(b, names[i]...) })
}

// ObjectSet is a session on a set of objects of the pool that the caller
// names and sizes, for rados load-gen: ops address them by index, through
// librados aio queues. It creates nothing and removes nothing: the
// caller made the objects (CreateExclusive) and removes them (Remove).
// Its methods are safe for concurrent use; Close is called once, after
// its queues are closed.
type ObjectSet struct {
	pool   *Pool
	names  []string
	sizes  []int64
	queues sync.WaitGroup
}

var (
	_ engine.AsyncSession    = (*ObjectSet)(nil)
	_ engine.ObjectSet       = (*ObjectSet)(nil)
	_ engine.ClusterReporter = (*ObjectSet)(nil)
	_ engine.ClusterWatcher  = (*ObjectSet)(nil)
)

// Objects returns the session on the objects names, of sizes bytes each
// (by index).
func (p *Pool) Objects(names []string, sizes []int64) *ObjectSet {
	return &ObjectSet{pool: p, names: names, sizes: sizes}
}

// Geometry is the Objects layout, with the set's object count.
func (s *ObjectSet) Geometry() engine.Geometry {
	return engine.Geometry{Layout: engine.Objects, ObjectCount: int64(len(s.names))}
}

// ClusterSnapshot is the pool's cluster's state.
func (s *ObjectSet) ClusterSnapshot() (*cluster.Snapshot, error) { return s.pool.ClusterSnapshot() }

// DialCluster shares the pool's connection with a watch of the pool.
func (s *ObjectSet) DialCluster() (cluster.Conn, []string, error) {
	return s.pool.shared.Hold(), []string{s.pool.target.Pool}, nil
}

// ObjectSizes returns each object's size, by index.
func (s *ObjectSet) ObjectSizes() []int64 { return s.sizes }

// Do executes op with a blocking librados call; the runner prefers
// NewQueue's aio.
func (s *ObjectSet) Do(ctx context.Context, op *engine.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return do(s.pool.ioctx, s.names[op.Object], op)
}

// NewQueue returns an aio queue of the given depth on the set's objects;
// completions are stamped in the librados callback.
func (s *ObjectSet) NewQueue(depth int) (engine.Queue, error) {
	aio, err := newAIOQueue(s.pool.ioctx, depth, 0)
	if err != nil {
		return nil, err
	}
	s.queues.Add(1)
	return aioq.NewEngineQueue(aio.Queue, aioq.Hooks{
		Name:     func(b []byte, op *engine.Op) []byte { return append(b, s.names[op.Object]...) },
		Describe: func(op *engine.Op) string { return fmt.Sprintf("%s at %d", s.names[op.Object], op.Offset) },
		Closed:   aio.closer(&s.queues),
	}), nil
}

// Close waits for the queues to close; the pool stays open.
func (s *ObjectSet) Close(context.Context) error {
	s.queues.Wait()
	return nil
}
