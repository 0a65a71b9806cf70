package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptrace"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/peer/radosbench"
	"github.com/cephbench/cephbench/spec"
)

func init() {
	engine.Register(Scheme, engine.Typed(Open), engine.Description{
		Syntax: "s3://BUCKET[/PREFIX]", Layout: engine.Objects, Kind: engine.KindObjects,
		Cleaner: cleanKept,
		// Each host puts its objects under a prefix of its own.
		Share: func(w *spec.Workload, host string) error {
			w.Target.Location = engine.InSubdirectory(w.Target.Location, host)
			return nil
		},
	})
}

// cleanKept removes what writes left at t: the objects of every write
// record under its prefix (runs killed at any moment) and the records,
// those of every kept write's metadata there (the target's own, and each
// host's of a run on several hosts), then the bucket if cephbench made it
// and it is empty.
func cleanKept(ctx context.Context, t spec.Target, j *writeahead.Judge) error {
	_, _, err := cleanAll(ctx, t.Location, Credentials{}, j)
	return err
}

// Session is an open bucket prefix. Geometry, Do, Get, Stat, List and
// Delete are safe for concurrent use; Close is called once, after every
// op has finished.
type Session struct {
	c *client
	// name prefixes the names of the session's objects under the
	// target's prefix: "benchmark_data_<host>_<pid>" for a new write, the
	// recorded one for a session that opened an earlier write's objects.
	// The key of object N is base + N.
	name    string
	base    string
	objSize int64
	opSize  int64
	keep    bool
	writes  bool
	geo     engine.Geometry
	// opTimeout bounds each op: the workload's, or DefaultOpTimeout.
	opTimeout time.Duration
	// preexisting are the objects named like this session's that were
	// there at Open: they are never removed.
	preexisting map[string]bool
	// createdBucket is set when Open created the bucket; keptBucket when
	// the metadata of a kept write says cephbench created it.
	createdBucket bool
	keptBucket    bool
	// record is the key of the write record Open put before any write,
	// "" if none (a read, or objects another record names).
	record string
}

// DefaultOpTimeout bounds an op when the workload sets no op timeout: a
// service that stops answering (hung, or cut off) then fails each op
// after it, counted, instead of holding the run's end forever. It bounds
// the wait for a response's headers of setup and cleanup requests too.
const DefaultOpTimeout = 60 * time.Second

var (
	_ engine.Session    = (*Session)(nil)
	_ engine.KindNamer  = (*Session)(nil)
	_ engine.ErrorNamer = (*Session)(nil)
)

// ErrorClass names an error the service answered by its S3 error code
// (NoSuchKey, SlowDown...), or returns "".
func (s *Session) ErrorClass(err error) string {
	var re *RequestError
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}

// Kinds names the ops in S3's words: get (with its time to first byte,
// get-ttfb), put, delete, list and stat.
func (s *Session) Kinds() []engine.KindName {
	return []engine.KindName{
		{Kind: engine.Write, Name: "put"},
		{Kind: engine.Read, Name: "get", FirstByte: "get-ttfb"},
		{Kind: engine.Delete, Name: "delete"},
		{Kind: engine.List, Name: "list"},
		{Kind: engine.Stat, Name: "stat"},
	}
}

// Open opens w's target with credentials from the environment or the
// shared credentials file; see OpenWith.
func Open(ctx context.Context, w *spec.Workload) (*Session, error) {
	return OpenWith(ctx, w, Credentials{})
}

// OpenWith opens w's target with creds, or, when they are empty, as Open
// does. A workload that only reads opens the objects of the last kept
// write at the target; one that also reads and finds such objects reads
// and writes them; a write-only workload writes objects of its own. A
// workload that writes creates the bucket if it is missing. Errors are
// *engine.UsageError (a missing bucket or nothing to read, wrong keys,
// an endpoint that cannot be reached), unless ctx ended.
func OpenWith(ctx context.Context, w *spec.Workload, creds Credentials) (*Session, error) {
	t, err := ParseTarget(w.Target.Location)
	if err != nil {
		return nil, err
	}
	if w.Writes() && w.EffectiveObjectSize() != w.BlockSize {
		return nil, engine.Usagef("s3: objects are written whole: the object size %s must be the block size %s", w.EffectiveObjectSize(), w.BlockSize)
	}
	c, exists, err := dial(ctx, t, creds, w.Workers*w.QueueDepth)
	if err != nil {
		return nil, err
	}
	s := &Session{
		c: c, name: radosbench.ObjectPrefix(os.Getpid()), objSize: int64(w.BlockSize), opSize: int64(w.BlockSize),
		keep: w.Keep, writes: w.Writes(), geo: engine.Geometry{Layout: engine.Objects}, opTimeout: w.OpTimeout.D(),
	}
	if s.opTimeout <= 0 {
		s.opTimeout = DefaultOpTimeout
	}
	fail := func(err error) (*Session, error) {
		if s.createdBucket {
			_ = c.ctl.RemoveBucket(context.WithoutCancel(ctx), t.Bucket) // Open failed: nothing is in it
		}
		c.close()
		return nil, err
	}
	if w.Reads() && exists {
		m, ok, err := c.readMetadata(ctx)
		if err != nil {
			return fail(err)
		}
		if ok {
			switch {
			case int64(w.BlockSize) > m.ObjectSize:
				return fail(engine.Usagef("s3: the objects at %s are %s, smaller than the block size %s", t, spec.Size(m.ObjectSize), w.BlockSize))
			case w.Writes() && int64(w.BlockSize) != m.ObjectSize:
				return fail(engine.Usagef("s3: the objects at %s are %s: a workload that rewrites them needs that block size, not %s", t, spec.Size(m.ObjectSize), w.BlockSize))
			}
			s.name, s.objSize, s.opSize, s.keptBucket = m.Prefix, m.ObjectSize, m.OpSize, m.CreatedBucket
			s.geo.ObjectCount, s.geo.ObjectSize = m.Objects, m.ObjectSize
		}
	}
	s.base = t.Prefix + s.name + "_object"
	if exists {
		names, err := c.objects(ctx, s.base)
		if err != nil {
			return fail(c.setupError(ctx, "list", err))
		}
		s.preexisting = make(map[string]bool, len(names))
		for _, n := range names {
			s.preexisting[n] = true
		}
	}
	if !s.writes && (s.geo.ObjectCount == 0 || len(s.preexisting) == 0) {
		if !exists {
			return fail(engine.Usagef("s3: bucket %s does not exist, so there is nothing to read", t.Bucket))
		}
		return fail(engine.Usagef("s3: no objects to read at %s: run a write that keeps its objects first", t))
	}
	if !exists {
		err := c.ctl.MakeBucket(ctx, t.Bucket, minio.MakeBucketOptions{Region: t.region()})
		switch {
		case err == nil:
			s.createdBucket = true
		case code(err) == "BucketAlreadyOwnedByYou":
			// Created since the probe, by someone else: not ours to remove.
		default:
			return fail(c.setupError(ctx, "create bucket", err))
		}
	}
	if s.writes {
		if err := s.putRecord(ctx, t); err != nil {
			return fail(err)
		}
	}
	if err := c.useRegion(ctx); err != nil {
		return fail(errors.Join(err, s.dropRecord(context.WithoutCancel(ctx))))
	}
	return s, nil
}

// putRecord puts the session's write record under the target's prefix,
// before any object, unless a record of its objects is there already.
func (s *Session) putRecord(ctx context.Context, t Target) error {
	r := writeahead.Record{Stem: s.name + "_object", CreatedBucket: s.createdBucket || s.keptBucket}.Mine()
	key := t.Prefix + r.Name()
	_, err := s.c.ctl.StatObject(ctx, t.Bucket, key, minio.StatObjectOptions{})
	switch {
	case err == nil:
		return nil
	case code(err) != minio.NoSuchKey && code(err) != "NotFound":
		return s.c.setupError(ctx, "HEAD "+key, err)
	}
	b := r.Encode()
	if _, err := s.c.ctl.PutObject(ctx, t.Bucket, key, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{ContentType: "application/json"}); err != nil {
		return s.c.setupError(ctx, "PUT "+key, err)
	}
	s.record = key
	return nil
}

// dropRecord removes the session's write record, if it put one.
func (s *Session) dropRecord(ctx context.Context) error {
	if s.record == "" {
		return nil
	}
	if err := s.c.ctl.RemoveObject(ctx, s.c.target.Bucket, s.record, minio.RemoveObjectOptions{}); err != nil {
		return opError("DELETE", s.record, err)
	}
	s.record = ""
	return nil
}

// Key is the key of object n.
func (s *Session) Key(n int64) string { return s.base + strconv.FormatInt(n, 10) }

// Geometry reports the Objects layout and, for sessions that read the
// objects of an earlier write, how many there are and their size.
func (s *Session) Geometry() engine.Geometry { return s.geo }

// putOptions send one PUT per object, whatever its size, with an
// unsigned payload.
var putOptions = minio.PutObjectOptions{DisableMultipart: true, DisableContentSha256: true}

// Do writes a whole object with one PUT; reads op's part of an object
// with one GET (see Get), setting op.FirstByte; sends a HEAD for the
// object, which fails unless it has the session's object size; deletes
// it (see Delete); or lists (see List). A write of part of an object
// fails: S3 has no partial writes. Do returns when the request has, when
// ctx is done, or after the workload's op timeout (DefaultOpTimeout
// without one), with an error of kind timeout.
func (s *Session) Do(ctx context.Context, op *engine.Op) error {
	ctx, cancel := context.WithTimeoutCause(ctx, s.opTimeout, engine.ErrTimeout)
	defer cancel()
	var err error
	switch op.Kind {
	case engine.Write:
		return s.put(ctx, op)
	case engine.Read:
		op.FirstByte, err = s.Get(ctx, op)
	case engine.Stat:
		var size int64
		if size, err = s.Stat(ctx, op.Object); err == nil && size != s.objSize {
			err = fmt.Errorf("s3: HEAD %s: %d bytes, want %d", s.Key(op.Object), size, s.objSize)
		}
	case engine.Delete:
		err = s.Delete(ctx, op.Object)
	case engine.List:
		_, err = s.List(ctx)
	default:
		err = fmt.Errorf("s3: no %s ops", op.Kind)
	}
	return err
}

// put writes op's object whole with one PUT.
func (s *Session) put(ctx context.Context, op *engine.Op) error {
	if op.Object < 0 {
		return fmt.Errorf("s3: invalid object number %d", op.Object)
	}
	key := s.Key(op.Object)
	if op.Offset != 0 || int64(len(op.Buf)) != s.objSize {
		return fmt.Errorf("s3: PUT %s: objects are written whole, not %d bytes at offset %d of %d", key, len(op.Buf), op.Offset, s.objSize)
	}
	if _, err := s.c.data.PutObject(ctx, s.c.target.Bucket, key, bytes.NewReader(op.Buf), int64(len(op.Buf)), putOptions); err != nil {
		return opError("PUT", key, err)
	}
	return nil
}

// Get reads len(op.Buf) bytes at op.Offset of object op.Object with one
// GET, ranged unless it reads the whole object, and returns when the
// first byte of the response (its status line) arrived, on the
// engine.Now clock. A whole-object read of an object of another size
// fails, as does a read past its end (io.ErrUnexpectedEOF); a missing
// object's error matches fs.ErrNotExist.
func (s *Session) Get(ctx context.Context, op *engine.Op) (firstByte time.Duration, err error) {
	if op.Object < 0 {
		return 0, fmt.Errorf("s3: invalid object number %d", op.Object)
	}
	key := s.Key(op.Object)
	var first atomic.Int64
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotFirstResponseByte: func() { first.Store(int64(engine.Now())) },
	})
	n := int64(len(op.Buf))
	var opts minio.GetObjectOptions
	if op.Offset != 0 || n != s.objSize {
		if err := opts.SetRange(op.Offset, op.Offset+n-1); err != nil {
			return 0, fmt.Errorf("s3: GET %s: %w", key, err)
		}
	}
	body, _, _, err := minio.Core{Client: s.c.data}.GetObject(ctx, s.c.target.Bucket, key, opts)
	if err != nil {
		return 0, opError("GET", key, err)
	}
	defer body.Close()
	if _, err := io.ReadFull(body, op.Buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, opError("GET", key, err)
	}
	// Reading to the end also lets the connection serve the next request.
	var more [1]byte
	if k, _ := body.Read(more[:]); k > 0 {
		return 0, fmt.Errorf("s3: GET %s: the object is longer than the %d bytes expected", key, n)
	}
	return time.Duration(first.Load()), nil
}

// Stat sends a HEAD for object n and returns its size.
func (s *Session) Stat(ctx context.Context, n int64) (int64, error) {
	key := s.Key(n)
	info, err := s.c.data.StatObject(ctx, s.c.target.Bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return 0, opError("HEAD", key, err)
	}
	return info.Size, nil
}

// ListPage is how many keys one List asks for: S3's most.
const ListPage = 1000

// List sends one LIST request (ListObjectsV2) for up to ListPage keys
// named like the session's objects and returns how many came back.
func (s *Session) List(ctx context.Context) (int, error) {
	n := 0
	opts := minio.ListObjectsOptions{Prefix: s.base, MaxKeys: ListPage, Recursive: true}
	for obj := range s.c.data.ListObjectsIter(ctx, s.c.target.Bucket, opts) {
		if obj.Err != nil {
			return n, opError("LIST", s.base, obj.Err)
		}
		// A full page ends the op: the iterator would send another request.
		if n++; n == ListPage {
			break
		}
	}
	return n, nil
}

// Delete removes object n with one DELETE. It refuses an object that was
// there when the session opened: a session removes only what it created.
func (s *Session) Delete(ctx context.Context, n int64) error {
	key := s.Key(n)
	if s.preexisting[key] {
		return fmt.Errorf("s3: refusing to delete %s, which was there before this run", key)
	}
	if err := s.c.data.RemoveObject(ctx, s.c.target.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return opError("DELETE", key, err)
	}
	return nil
}

// Close, with keep, records this session's objects in the metadata object
// when the workload wrote; without keep it removes the objects this
// session created. Either way it then removes the bucket if Open created
// it and it is empty. Objects that were there at Open always stay.
func (s *Session) Close(ctx context.Context) error {
	defer s.c.close()
	if !s.writes {
		return nil
	}
	names, err := s.c.objects(ctx, s.base)
	if err != nil {
		return err
	}
	if s.keep && len(names) > 0 {
		if err := s.writeMetadata(ctx, names); err != nil {
			return err
		}
		return s.dropRecord(ctx) // the metadata names the objects now
	}
	if !s.keep {
		created := names[:0]
		for _, n := range names {
			if !s.preexisting[n] {
				created = append(created, n)
			}
		}
		if _, err := s.c.remove(ctx, created); err != nil {
			return err
		}
	}
	if err := s.dropRecord(ctx); err != nil {
		return err
	}
	if s.createdBucket {
		return s.c.removeBucketIfEmpty(ctx)
	}
	return nil
}

func (s *Session) writeMetadata(ctx context.Context, names []string) error {
	m := Metadata{Prefix: s.name, ObjectSize: s.objSize, OpSize: s.opSize, CreatedBucket: s.createdBucket || s.keptBucket}
	for _, name := range names {
		n, _ := objectNumber(name, s.base)
		m.Objects = max(m.Objects, n+1)
	}
	return s.c.writeMetadata(ctx, m)
}

// objectNumber returns N for a key base+N spelled as Key spells it.
func objectNumber(key, base string) (int64, bool) {
	return radosbench.ObjectNumber(key, strings.TrimSuffix(base, "_object"))
}
