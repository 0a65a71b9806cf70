// Package engine defines what a storage target must do to be benchmarked:
// open a Session for a workload, execute operations on it, and clean up what
// it created. Engines register themselves by target scheme. Engines never
// import the runner or the reports.
package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/failpoint"
	"github.com/cephbench/cephbench/spec"
)

// OpKind is what an operation does.
type OpKind uint8

// The operation kinds. Every engine serves Read and Write; a session that
// serves more says so through KindNamer.
const (
	Read       OpKind = iota
	Write             // a Read or Write moves len(Op.Buf) bytes at (File or Object, Offset)
	Stat              // an object's size; moves no data
	Delete            // removes Op.Object
	List              // one listing request of the target's objects
	NumOpKinds        // how many kinds there are: every OpKind is below it
)

var opKindNames = [NumOpKinds]string{"read", "write", "stat", "delete", "list"}

// String returns the kind's neutral name: "read", "write", "stat",
// "delete" or "list".
func (k OpKind) String() string {
	if k < NumOpKinds {
		return opKindNames[k]
	}
	return fmt.Sprintf("op%d", k)
}

// KindName is one op kind a session serves, named as its results name it.
type KindName struct {
	Kind OpKind
	Name string
	// FirstByte, if set, names a derived kind: each successful op of
	// Kind whose Op.FirstByte the session set is also recorded under it,
	// with its time to first byte as the latency and no bytes.
	FirstByte string
}

// KindNamer is implemented by a session that serves op kinds beyond Read
// and Write, or names them in its own protocol's words (S3's get and
// put). An op mix names kinds by these names. Kinds is called once per
// run and returns the same list every time; each Kind appears once.
type KindNamer interface {
	Kinds() []KindName
}

// ErrorNamer is implemented by a session that names op errors in its
// protocol's words (S3's error codes) for the runs that name its kinds:
// a run of read and write keeps ErrorKind's neutral classes.
type ErrorNamer interface {
	// ErrorClass names err, or returns "" to leave it to ErrorKind. It
	// is safe for concurrent use.
	ErrorClass(err error) string
}

// DefaultKinds are the kinds of a session that is no KindNamer.
var DefaultKinds = []KindName{{Kind: Read, Name: "read"}, {Kind: Write, Name: "write"}}

// KindsOf returns the kinds sess serves, with their names.
func KindsOf(sess Session) []KindName {
	if n, ok := sess.(KindNamer); ok {
		return n.Kinds()
	}
	return DefaultKinds
}

// Op is one I/O. The runner owns it; an engine may read every field and
// writes only Err, Completed, Issued and FirstByte. Buf's length is the
// I/O size: a Write sends Buf, a Read fills it; other kinds get an empty
// Buf. Buf stays valid and unmoved until the op completes.
type Op struct {
	Kind OpKind
	// File selects the file (block targets with several files, one per
	// worker) or is zero.
	File int
	// Object is the object index on object targets.
	Object int64
	// Offset is the byte offset in the file, device or object.
	Offset int64
	Buf    []byte

	// Err is the op's outcome, set by Queue.Reap.
	Err error
	// Completed is when the op finished, on the Now clock. An engine that
	// timestamps completions itself (in C, at the completion callback)
	// sets it; otherwise the runner does.
	Completed time.Duration
	// Issued is when the engine actually started the op, on the Now
	// clock, for an engine that records it (a StagingQueue starts a staged
	// op well after its Submit); zero otherwise. Latency counts from it,
	// except in a paced run, where it counts from the op's scheduled time.
	Issued time.Duration

	// FirstByte is when the first byte of the op's response arrived, on
	// the Now clock, for an engine that can tell (S3's GET); zero
	// otherwise. The runner sets it to zero before each op.
	FirstByte time.Duration

	// Tag is the runner's own bookkeeping; engines leave it alone.
	Tag any
}

// Layout says how a target is addressed, so workload generators can make
// valid operations.
type Layout int

// The two addressing schemes.
const (
	// Blocks: ops address (File, Offset) in Files regions of Size bytes.
	Blocks Layout = iota
	// Objects: ops address (Object, Offset) with Offset < ObjectSize.
	Objects
)

// String returns "blocks" or "objects".
func (l Layout) String() string {
	switch l {
	case Blocks:
		return "blocks"
	case Objects:
		return "objects"
	}
	return fmt.Sprintf("layout%d", int(l))
}

// Geometry is what a session knows of its target after Open.
type Geometry struct {
	Layout Layout
	// Blocks: the number of files and the addressable size of each.
	Files int
	Size  int64
	// Objects: how many objects exist for reads to use (0 before a
	// write), and their size when the target knows it (objects written by
	// an earlier session), which then overrides the workload's.
	ObjectCount int64
	ObjectSize  int64
	// Alignment is the buffer address and length alignment the target
	// needs (4096 for O_DIRECT), or 0.
	Alignment int
}

// Session is an open target, ready for a workload. It serves both op kinds
// whatever the workload's read share. Do and Geometry are safe for
// concurrent use by many goroutines; Close is called once, after every
// operation has finished.
type Session interface {
	// Geometry describes the target as opened.
	Geometry() Geometry
	// Do executes op and returns its error. It honours ctx cancellation
	// where the underlying call can be interrupted.
	Do(ctx context.Context, op *Op) error
	// Close releases the target and, unless the workload said Keep,
	// removes every file, object or image the session created, and
	// nothing else.
	Close(ctx context.Context) error
}

// AsyncSession is a Session that can keep many ops in flight from one
// goroutine (librados and librbd aio, io_uring, libaio).
type AsyncSession interface {
	Session
	// NewQueue returns a queue of the given depth; each queue is used by a
	// single goroutine. Queues are closed before the session.
	NewQueue(depth int) (Queue, error)
}

// Queue is a submit/reap queue. Its methods are not safe for concurrent use.
// Submitting beyond the queue's depth, or reaping more ops than are in
// flight, is an error, never a hang.
type Queue interface {
	// Submit starts op. It fails only if op could not be started; the op's
	// own outcome comes back from Reap.
	Submit(op *Op) error
	// Reap waits until at least min ops have completed (or ctx ends),
	// stores up to len(done) of them in done with Err set, and returns how
	// many it stored.
	Reap(ctx context.Context, min int, done []*Op) (int, error)
	// Close waits for ops in flight and frees the queue.
	Close() error
}

// StagingQueue is a Queue that can also hold Spare ops beyond its depth and
// start each the moment an op in flight completes, without waiting for its
// caller: the depth stays full while the caller sleeps, and the caller
// wakes once per batch instead of once per op. Reap sets a staged op's
// Issued, or fails it with ErrNotIssued if it never started.
type StagingQueue interface {
	Queue
	// Spare is how many ops beyond the depth Submit takes once Stage is
	// called.
	Spare() int
	// Stage turns staging on until cutoff (on the Now clock): an op
	// still staged then never starts.
	Stage(cutoff time.Duration)
}

// ErrNotIssued is the Err of a staged op that never started, because the
// cutoff passed or the queue closed first: it did no I/O and counts for
// nothing.
var ErrNotIssued = errors.New("staged op never started")

// ProcessorBound is implemented by a session whose Do blocks in the kernel
// without handing its Go scheduler processor (P) to other goroutines, the
// way a C thread blocks: it saves the runtime's hand-off on every op. The
// runner then gives each op in flight a GOMAXPROCS slot of its own.
type ProcessorBound interface {
	BlocksProcessor() bool
}

// Payload is implemented by a session whose target dictates the data ops
// carry (rados bench's objects, which Ceph's own tools verify). The runner
// then fills every write and checks every verified read through it instead
// of with cephbench's own pattern. Both methods are safe for concurrent
// use.
type Payload interface {
	// InitBuffer prepares a buffer once, when the runner allocates it, so
	// that FillWrite only has to write what differs between ops.
	InitBuffer(buf []byte)
	// FillWrite writes op's data into op.Buf, which InitBuffer prepared.
	FillWrite(op *Op)
	// CheckRead returns an error wrapping ErrVerify if a completed read's
	// data is not what the target's writer put there.
	CheckRead(op *Op) error
}

// ObjectSet is implemented by a session on a set of objects that differ
// in size (spec.Workload.MinObjectSize), such as rados load-gen's: ops
// then address byte ranges inside them, each cut to its object's size.
type ObjectSet interface {
	// ObjectSizes returns each object's size in bytes, by index. It is
	// read only, and safe for concurrent use.
	ObjectSizes() []int64
}

// Syncer is implemented by sessions that can make what was written durable
// (fsync, librbd's flush): the runner uses it for the workload's
// FsyncEvery and EndFsync. Sync is safe for concurrent use with Do and
// with queues' ops.
type Syncer interface {
	// Sync makes the writes completed so far to file (an Op.File) durable.
	Sync(ctx context.Context, file int) error
}

// ClusterReporter is implemented by sessions on a Ceph cluster: the runner's
// caller records the cluster's state before and after each run.
type ClusterReporter interface {
	ClusterSnapshot() (*cluster.Snapshot, error)
}

// ClusterWatcher is implemented by sessions on a Ceph cluster that the
// runner's caller watches during each run (cluster.StartWatch).
type ClusterWatcher interface {
	// DialCluster gives the watch a connection to the session's cluster
	// (the session's own, shared, where it has one: cluster.Shared) and
	// names the pools the session's I/O goes to. The connection outlives
	// the session: a command still in flight when the session closes
	// runs on it safely; its holder closes it.
	DialCluster() (cluster.Conn, []string, error)
}

// Engine opens sessions for the targets of one scheme.
type Engine interface {
	// Open validates the target against the workload and prepares it
	// (lays out files, finds existing objects). Every error it returns
	// before doing I/O on the target is a *UsageError.
	Open(ctx context.Context, w *spec.Workload) (Session, error)
}

// Func adapts a function to Engine.
type Func func(ctx context.Context, w *spec.Workload) (Session, error)

// Open calls f.
func (f Func) Open(ctx context.Context, w *spec.Workload) (Session, error) { return f(ctx, w) }

// Typed is an engine whose Open returns its own session type: a failed
// Open yields a nil Session, not a non-nil interface around a nil pointer.
func Typed[S Session](open func(context.Context, *spec.Workload) (S, error)) Func {
	return func(ctx context.Context, w *spec.Workload) (Session, error) {
		s, err := open(ctx, w)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// UsageError is a problem with what the user asked for (a missing path, a
// mounted device, a wrong size), found before any I/O: the CLI prints it
// on one line and exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a *UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// IsUsage reports whether err is, or wraps, a *UsageError.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

var (
	registryMu sync.RWMutex
	registry   = map[string]registered{}
)

type registered struct {
	engine Engine
	desc   Description
}

// Cleaner removes what kept writes left at a target, as recorded by the
// target's benchmark metadata (rados bench's benchmark_last_metadata or its
// equivalent), and the metadata itself, and what the write records (see
// package writeahead) of runs that j judges ended name: never anything
// else.
type Cleaner func(ctx context.Context, t spec.Target, j *writeahead.Judge) error

// CleanKept runs the cleaner of t's scheme, which asks j which runs have
// ended (nil: a Judge without Force or OlderThan); schemes without one
// keep nothing between sessions, so there is nothing to do.
func CleanKept(ctx context.Context, t spec.Target, j *writeahead.Judge) error {
	registryMu.RLock()
	c := registry[t.Scheme].desc.Cleaner
	registryMu.RUnlock()
	if c == nil {
		return nil
	}
	failpoint.Hit(failpoint.Cleanup)
	if j == nil {
		j = writeahead.NewJudge(false, 0)
	}
	return c(ctx, t, j)
}

// Register makes an engine available for a scheme, with what it declares
// about its targets. It panics on a duplicate scheme, which is a
// programming error found at init.
func Register(scheme string, e Engine, d Description) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[scheme]; dup {
		panic("engine: duplicate scheme " + scheme)
	}
	registry[scheme] = registered{engine: e, desc: d}
}

// Lookup returns the engine for a scheme, or a *UsageError listing the
// known schemes.
func Lookup(scheme string) (Engine, error) {
	r, err := lookup(scheme)
	return r.engine, err
}

// Describe returns what the engine of a scheme declared when it
// registered, or the *UsageError of Lookup.
func Describe(scheme string) (Description, error) {
	r, err := lookup(scheme)
	return r.desc, err
}

func lookup(scheme string) (registered, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	if r, ok := registry[scheme]; ok {
		return r, nil
	}
	return registered{}, Usagef("unknown target scheme %q (known: %v)", scheme, schemesLocked())
}

// Schemes lists the registered schemes in order.
func Schemes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return schemesLocked()
}

func schemesLocked() []string {
	s := make([]string, 0, len(registry))
	for k := range registry {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// Open looks up the engine for w's target scheme, checks w against what
// the engine declared (a *UsageError, before any I/O), and opens it.
func Open(ctx context.Context, w *spec.Workload) (Session, error) {
	r, err := lookup(w.Target.Scheme)
	if err != nil {
		return nil, err
	}
	if err := r.desc.Check(w); err != nil {
		return nil, err
	}
	return r.engine.Open(ctx, w)
}
