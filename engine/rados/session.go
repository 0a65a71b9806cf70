//go:build ceph

package rados

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ceph/go-ceph/rados"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/peer/radosbench"
	"github.com/cephbench/cephbench/spec"
)

func init() {
	engine.Register("rados", engine.Typed(Open), engine.Description{
		Syntax: "rados://POOL", Layout: engine.Objects, Kind: engine.KindObjects,
		LocationNames: []string{"pool"}, Cleaner: cleanKept, Share: share,
	})
}

// share gives a host its own metadata object, so that hosts writing to one
// pool at once do not record their writes over each other's; their object
// names already differ (rados bench's prefix names the host and process).
func share(w *spec.Workload, host string) error {
	t, err := ParseTarget(w.Target.Location)
	if err != nil {
		return err
	}
	pool, query, _ := strings.Cut(w.Target.Location, "?")
	q, _ := url.ParseQuery(query) // ParseTarget parsed it
	runName := t.RunName
	if runName == "" {
		runName = radosbench.MetadataObject
	}
	q.Set("run-name", runName+"_"+host)
	w.Target.Location = pool + "?" + q.Encode()
	return nil
}

// cleanKept removes what writes left in t's pool: the objects of every
// write record (runs killed at any moment, kept runs on several hosts)
// and the records; then the objects of the last kept write, which its
// metadata object records, and that object.
func cleanKept(ctx context.Context, t spec.Target, j *writeahead.Judge) error {
	rt, err := ParseTarget(t.Location)
	if err != nil {
		return err
	}
	pool, err := OpenPool(rt)
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = pool.cleanup(ctx, "", j)
	if errors.Is(err, errNoMetadata) {
		err = nil
	}
	return errors.Join(ReleaseKilledQuiesce(pool.conn), err)
}

// Session is an open pool. Do, Geometry, NewQueue, FillWrite and CheckRead
// are safe for concurrent use; Close is called once, after every op and
// queue has finished.
type Session struct {
	conn    *rados.Conn
	shared  *cluster.Shared // conn, which the run's watch shares
	ioctx   *rados.IOContext
	target  Target
	prefix  string // object names: prefix + "_object" + N
	pid     int
	writes  bool
	keep    bool
	objSize int64
	opSize  int64
	geo     engine.Geometry

	// written is one past the highest op number written, which is what
	// the metadata records; objects from createdFrom on are this
	// session's, and the only ones its cleanup removes.
	written     atomic.Int64
	createdFrom int64
	queues      sync.WaitGroup
	// record is the write record Open put in the pool before any write,
	// "" if none (a read, or objects another record names).
	record string

	// atOpen is the snapshot a writing session takes to check for a full
	// pool; the first ClusterSnapshot hands it out instead of asking the
	// monitors the same five questions again a moment later.
	atOpen atomic.Pointer[cluster.Snapshot]
}

// writerRuns counts this process's writing sessions.
var writerRuns atomic.Int32

// runID is the number that names a writing session's objects. rados bench
// uses its pid; a process that writes more than once (a plan's steps)
// adds a multiple of 2^22, above any Linux pid, so that its runs never
// overwrite each other's objects. Ceph's tools read it back from the
// metadata object like a pid.
func runID() int {
	return os.Getpid() + int(writerRuns.Add(1)-1)<<22
}

var (
	_ engine.AsyncSession    = (*Session)(nil)
	_ engine.Payload         = (*Session)(nil)
	_ engine.ClusterReporter = (*Session)(nil)
	_ engine.ClusterWatcher  = (*Session)(nil)
)

// Open connects, checks that the pool exists and, for a workload that
// reads, finds the objects of the last write through its metadata object.
// A missing pool, or a read with nothing written, is an *engine.UsageError.
func Open(_ context.Context, w *spec.Workload) (*Session, error) {
	t, err := ParseTarget(w.Target.Location)
	if err != nil {
		return nil, err
	}
	conn, err := Connect(t, w.OpTimeout.D())
	if err != nil {
		return nil, err
	}
	s := &Session{conn: conn, shared: cluster.Share(cluster.NewConn(conn)), target: t, writes: w.Writes(), keep: w.Keep,
		objSize: int64(w.EffectiveObjectSize()), opSize: int64(w.BlockSize)}
	fail := func(err error) (*Session, error) {
		if s.ioctx != nil {
			s.ioctx.Destroy()
		}
		conn.Shutdown()
		return nil, err
	}
	if _, err := conn.GetPoolByName(t.Pool); err != nil {
		return fail(engine.Usagef("pool %q does not exist", t.Pool))
	}
	if s.ioctx, err = conn.OpenIOContext(t.Pool); err != nil {
		return fail(fmt.Errorf("opening pool %s: %w", t.Pool, err))
	}
	if w.Writes() {
		snap, err := refuseFull(conn, t.Pool)
		if err != nil {
			return fail(err)
		}
		s.atOpen.Store(snap)
	}
	s.geo = engine.Geometry{Layout: engine.Objects}
	if w.Reads() {
		m, err := ReadMetadata(s.ioctx, t.RunName)
		switch {
		case errors.Is(err, errNoMetadata) && !w.Writes():
			return fail(engine.Usagef("no benchmark objects to read in pool %s: run a write with --no-cleanup first", t.Pool))
		case errors.Is(err, errNoMetadata):
		case err != nil:
			return fail(err)
		default:
			if int64(w.BlockSize) > m.ObjectSize {
				return fail(engine.Usagef("the objects in pool %s are %s, smaller than the block size %s",
					t.Pool, spec.Size(m.ObjectSize), w.BlockSize))
			}
			s.pid = m.PID
			s.objSize, s.opSize = m.ObjectSize, m.OpSize
			s.geo.ObjectCount, s.geo.ObjectSize = m.Objects(), m.ObjectSize
			// Rewriting the last run's objects is not creating them.
			s.createdFrom = m.Objects()
			s.written.Store(m.Ops)
		}
	}
	if s.pid == 0 {
		s.pid = runID()
	}
	s.prefix = radosbench.ObjectPrefix(s.pid)
	if s.writes {
		r := writeahead.Record{Stem: s.prefix + "_object", Metadata: metadataName(t.RunName)}.Mine()
		put, err := putRecord(s.ioctx, r)
		if put {
			s.record = r.Name()
		}
		// A pool whose ops time out takes no record either: the run goes
		// on to count its ops that time out, and has nothing to clean.
		if err != nil && !errors.Is(err, syscall.ETIMEDOUT) {
			return fail(errors.Join(err, s.dropRecord()))
		}
	}
	return s, nil
}

// dropRecord removes the session's write record, if it put one.
func (s *Session) dropRecord() error {
	if s.record == "" {
		return nil
	}
	err := dropRecord(s.ioctx, s.record)
	s.record = ""
	return err
}

// ClusterSnapshot records the cluster's state over the session's
// connection; the first call may return the state recorded when the
// session opened.
func (s *Session) ClusterSnapshot() (*cluster.Snapshot, error) {
	if snap := s.atOpen.Swap(nil); snap != nil {
		return snap, nil
	}
	return cluster.Collect(s.conn)
}

// DialCluster shares the session's connection with a watch of its pool.
func (s *Session) DialCluster() (cluster.Conn, []string, error) {
	return s.shared.Hold(), []string{s.target.Pool}, nil
}

// ReleaseKilledQuiesce clears the scrub flags that killed --quiesce runs
// of this host set, unless a live run still wants them, and removes their
// records (cluster.Quiescer.ReleaseDead), over conn, which stays open.
func ReleaseKilledQuiesce(conn *rados.Conn) error {
	_, err := cluster.NewQuiescer(cluster.NewConn(conn)).ReleaseDead()
	return err
}

// Prefix is the name prefix of the objects this session reads or writes.
func (s *Session) Prefix() string { return s.prefix }

// Geometry returns the Objects layout; ObjectCount and ObjectSize are
// those of the last write when the workload reads.
func (s *Session) Geometry() engine.Geometry { return s.geo }

// opNumber is an op's number in rados bench's numbering: the op that
// wrote this part of this object.
func (s *Session) opNumber(op *engine.Op) int64 {
	return op.Object*max(s.objSize/s.opSize, 1) + op.Offset/s.opSize
}

// InitBuffer fills a new buffer with rados bench's filler.
func (s *Session) InitBuffer(buf []byte) { radosbench.Fill(buf, 0) }

// FillWrite writes the text rados bench writes for this op into a buffer
// InitBuffer filled.
func (s *Session) FillWrite(op *engine.Op) { radosbench.Stamp(op.Buf, s.opNumber(op)) }

// CheckRead verifies a read as rados bench does.
func (s *Session) CheckRead(op *engine.Op) error {
	if !radosbench.Check(op.Buf, s.opNumber(op)) {
		return fmt.Errorf("%w: %s is not correct", engine.ErrVerify, radosbench.ObjectName(s.prefix, op.Object))
	}
	return nil
}

func (s *Session) noteWrite(op *engine.Op) {
	n := s.opNumber(op) + 1
	for {
		cur := s.written.Load()
		if n <= cur || s.written.CompareAndSwap(cur, n) {
			return
		}
	}
}

// Do executes op with a blocking librados call (one OS thread per op in
// flight); the runner prefers NewQueue's aio.
func (s *Session) Do(ctx context.Context, op *engine.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := do(s.ioctx, radosbench.ObjectName(s.prefix, op.Object), op)
	if err == nil && op.Kind == engine.Write {
		s.noteWrite(op)
	}
	return err
}

// do executes op on the named object with a blocking librados call. A
// read that returns less than its length fails with io.ErrUnexpectedEOF.
func do(ioctx *rados.IOContext, name string, op *engine.Op) error {
	if op.Kind == engine.Write {
		return ErrnoOf(ioctx.Write(name, op.Buf, uint64(op.Offset)))
	}
	n, err := ioctx.Read(name, op.Buf, uint64(op.Offset))
	if err != nil {
		return ErrnoOf(err)
	}
	if n < len(op.Buf) {
		return fmt.Errorf("%s: read %d of %d bytes at %d: %w", name, n, len(op.Buf), op.Offset, io.ErrUnexpectedEOF)
	}
	return nil
}

// Close records the write in the metadata object when the workload keeps
// its objects, or removes the objects this session wrote; then it
// disconnects. It never removes objects it did not write.
func (s *Session) Close(ctx context.Context) error {
	s.queues.Wait()
	var err error
	if s.writes && s.written.Load() > 0 {
		m := radosbench.Metadata{ObjectSize: s.objSize, Ops: s.written.Load(), PID: s.pid, OpSize: s.opSize}
		if s.keep {
			err = s.ioctx.WriteFull(metadataName(s.target.RunName), m.Encode())
		} else {
			err = removeObjects(ctx, s.ioctx, s.prefix, s.createdFrom, m.Objects())
		}
	}
	// The record goes once its objects are, or once the default metadata
	// object, which a cleanup of the target reads, names them; a kept
	// write under another run name (each host's on several hosts) keeps
	// it, for the cleanup to find that metadata object.
	if err == nil && (!s.keep || !s.writes || s.written.Load() == 0 || s.target.RunName == "") {
		err = s.dropRecord()
	}
	s.ioctx.Destroy()
	s.shared.Close()
	return err
}
