package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/failpoint"
)

// MetadataName is the object, under the target's prefix, in which a kept
// write records its objects, as rados bench's metadata object of the same
// name does.
const MetadataName = "benchmark_last_metadata"

// maxMetadata bounds what is read of a metadata object: anything larger
// is not cephbench's.
const maxMetadata = 64 << 10

// Metadata describes the objects of the last kept write at a target.
type Metadata struct {
	// Prefix names the objects, under the target's prefix: Prefix +
	// "_object" + N.
	Prefix string `json:"prefix"`
	// Objects is one more than the highest object number.
	Objects int64 `json:"objects"`
	// ObjectSize and OpSize are in bytes (equal: objects are written
	// whole).
	ObjectSize int64 `json:"object_size"`
	OpSize     int64 `json:"op_size"`
	// CreatedBucket says cephbench created the bucket, so the cleanup
	// removes it once it is empty.
	CreatedBucket bool `json:"created_bucket,omitempty"`
}

// ErrNothingKept is wrapped by the error of Cleanup and LastWrite when
// the target holds no record of a kept write.
var ErrNothingKept = errors.New("no objects kept")

// readMetadata reads the metadata object of the client's target; ok is
// false, with a nil error, when there is none. An object that is not
// valid metadata is an *engine.UsageError, so that nothing is read or
// removed on its word.
func (c *client) readMetadata(ctx context.Context) (m Metadata, ok bool, err error) {
	key := c.target.Prefix + MetadataName
	body, _, _, err := minio.Core{Client: c.ctl}.GetObject(ctx, c.target.Bucket, key, minio.GetObjectOptions{})
	if code(err) == minio.NoSuchKey {
		return Metadata{}, false, nil
	}
	if err != nil {
		return Metadata{}, false, c.setupError(ctx, "GET "+key, err)
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxMetadata+1))
	if err != nil {
		return Metadata{}, false, fmt.Errorf("s3: reading %s: %w", key, err)
	}
	if json.Unmarshal(b, &m) != nil || len(b) > maxMetadata || !strings.HasPrefix(m.Prefix, "benchmark_data_") ||
		strings.Contains(m.Prefix, "/") || m.Objects < 0 || m.ObjectSize <= 0 || m.OpSize <= 0 {
		return Metadata{}, false, engine.Usagef("s3: %s in bucket %s is not cephbench object metadata", key, c.target.Bucket)
	}
	return m, true, nil
}

func (c *client) writeMetadata(ctx context.Context, m Metadata) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	key := c.target.Prefix + MetadataName
	_, err = c.ctl.PutObject(ctx, c.target.Bucket, key, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{ContentType: "application/json"})
	if err != nil {
		return opError("PUT", key, err)
	}
	return nil
}

// objects lists the keys base+N in the bucket.
func (c *client) objects(ctx context.Context, base string) ([]string, error) {
	var keys []string
	for obj := range c.ctl.ListObjectsIter(ctx, c.target.Bucket, minio.ListObjectsOptions{Prefix: base, Recursive: true}) {
		if obj.Err != nil {
			return nil, opError("LIST", base, obj.Err)
		}
		if _, ok := objectNumber(obj.Key, base); ok {
			keys = append(keys, obj.Key)
		}
	}
	return keys, nil
}

// remove deletes keys with multi-object deletes, and returns how many it
// removed. Keys a delete did not confirm (a response cut short, a
// connection lost on the way) are deleted again, up to controlRetries
// times in all: deleting is idempotent, and a run must not leave its
// objects behind over one lost response.
func (c *client) remove(ctx context.Context, keys []string) (int64, error) {
	var removed int64
	var errs []error
	for try := 1; len(keys) > 0 && try <= controlRetries && ctx.Err() == nil; try++ {
		if try > 1 {
			time.Sleep(time.Duration(try-1) * 100 * time.Millisecond)
		}
		var n int64
		n, keys, errs = c.removeOnce(ctx, keys)
		removed += n
	}
	if err := ctx.Err(); err != nil && len(keys) > 0 {
		errs = append(errs, fmt.Errorf("s3: cleanup of %s interrupted: %w", c.target, err))
	}
	if len(keys) > 0 {
		return removed, fmt.Errorf("s3: %d of %d objects not removed: %w", len(keys), int64(len(keys))+removed, errors.Join(errs...))
	}
	return removed, nil
}

// removeOnce deletes keys with multi-object deletes once, and returns how
// many it removed, the keys it did not, and the first few errors.
func (c *client) removeOnce(ctx context.Context, keys []string) (int64, []string, []error) {
	objs := func(yield func(minio.ObjectInfo) bool) {
		for _, k := range keys {
			failpoint.Hit(failpoint.Remove)
			if !yield(minio.ObjectInfo{Key: k}) {
				return
			}
		}
	}
	results, err := c.ctl.RemoveObjectsWithIter(ctx, c.target.Bucket, objs, minio.RemoveObjectsOptions{})
	if err != nil {
		return 0, keys, []error{err}
	}
	confirmed := make(map[string]bool, len(keys))
	var errs []error
	for r := range results {
		if r.Err != nil {
			if len(errs) < 3 {
				errs = append(errs, opError("DELETE", r.ObjectName, r.Err))
			}
			continue
		}
		confirmed[r.ObjectName] = true
	}
	left := keys[:0:0]
	for _, k := range keys {
		if !confirmed[k] {
			left = append(left, k)
		}
	}
	return int64(len(keys) - len(left)), left, errs
}

// removeBucketIfEmpty removes the bucket unless something is in it:
// someone else's objects keep it.
func (c *client) removeBucketIfEmpty(ctx context.Context) error {
	err := c.ctl.RemoveBucket(ctx, c.target.Bucket)
	switch {
	case err == nil, code(err) == "BucketNotEmpty", code(err) == minio.NoSuchBucket:
		return nil
	}
	return opError("DELETE", "bucket "+c.target.Bucket, err)
}

// kept connects to the target location (BUCKET[/PREFIX][?options]) with
// creds, or the environment's as for Open, and reads the record of the
// last kept write there. No record is an *engine.UsageError wrapping
// ErrNothingKept. The caller closes the client.
func kept(ctx context.Context, location string, creds Credentials) (*client, Metadata, error) {
	t, err := ParseTarget(location)
	if err != nil {
		return nil, Metadata{}, err
	}
	c, exists, err := dial(ctx, t, creds, 0)
	if err != nil {
		return nil, Metadata{}, err
	}
	m, ok := Metadata{}, false
	if exists {
		m, ok, err = c.readMetadata(ctx)
	}
	switch {
	case err != nil:
	case !exists:
		err = &engine.UsageError{Err: fmt.Errorf("s3: %w: bucket %s does not exist", ErrNothingKept, t.Bucket)}
	case !ok:
		err = &engine.UsageError{Err: fmt.Errorf("s3: %w at %s: it holds no %s", ErrNothingKept, t, MetadataName)}
	}
	if err != nil {
		c.close()
		return nil, Metadata{}, err
	}
	return c, m, nil
}

// LastWrite returns the record of the last kept write at the target
// location, as Cleanup finds it.
func LastWrite(ctx context.Context, location string, creds Credentials) (Metadata, error) {
	c, m, err := kept(ctx, location, creds)
	if err == nil {
		c.close()
	}
	return m, err
}

// Cleanup removes what cleanAll removes at the target location
// (BUCKET[/PREFIX][?options]): the objects of the last kept write, as
// recorded in its metadata object, then the metadata object; the objects
// of the write records of runs j judges ended, then the records; then the
// bucket if cephbench created it and it is empty. It returns how many
// objects it removed, and removes only objects a metadata object or a
// record names. Credentials are creds, or the environment's as for Open.
// With neither metadata nor record there, the error wraps ErrNothingKept.
func Cleanup(ctx context.Context, location string, creds Credentials, j *writeahead.Judge) (int64, error) {
	n, found, err := cleanAll(ctx, location, creds, j)
	if err == nil && !found {
		err = &engine.UsageError{Err: fmt.Errorf("s3: %w at %s: it holds no %s and no write record", ErrNothingKept, location, MetadataName)}
	}
	return n, err
}

// cleanKept removes the objects m records under the client's prefix, then
// the metadata object.
func (c *client) cleanKept(ctx context.Context, m Metadata) (int64, error) {
	t := c.target
	keys, err := c.objects(ctx, t.Prefix+m.Prefix+"_object")
	if err != nil {
		return 0, err
	}
	removed, err := c.remove(ctx, keys)
	if err != nil {
		// Keep the metadata, so that a second cleanup can finish the job.
		return removed, err
	}
	key := t.Prefix + MetadataName
	if err := c.ctl.RemoveObject(ctx, t.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return removed, opError("DELETE", key, err)
	}
	return removed, nil
}

// cleanAll removes what writes left at the target location: for each
// write record under its prefix (at any depth: the hosts of a run on
// several hosts write under prefixes of their own), the record's objects
// next to it, then the record; for each kept write's metadata object
// there, its objects, then it; then the bucket if a record or metadata
// says cephbench made it and it is now empty. A record whose run j does
// not judge ended stays, with its objects. It returns how many objects it
// removed, and whether it found a record or metadata object. A missing
// bucket holds nothing to clean.
func cleanAll(ctx context.Context, location string, creds Credentials, j *writeahead.Judge) (removed int64, found bool, err error) {
	t, err := ParseTarget(location)
	if err != nil {
		return 0, false, err
	}
	c, exists, err := dial(ctx, t, creds, 0)
	if err != nil {
		return 0, false, err
	}
	defer c.close()
	if !exists {
		return 0, false, nil
	}
	var records, metas, keys []string
	written := map[string]time.Time{}
	for obj := range c.ctl.ListObjectsIter(ctx, t.Bucket, minio.ListObjectsOptions{Prefix: t.Prefix, Recursive: true}) {
		if obj.Err != nil {
			return 0, false, opError("LIST", t.Prefix, obj.Err)
		}
		switch base := path.Base(obj.Key); {
		case writeahead.IsName(base):
			records = append(records, obj.Key)
			written[obj.Key] = obj.LastModified
		case base == MetadataName:
			metas = append(metas, obj.Key)
		case strings.HasPrefix(base, "benchmark_data_"):
			keys = append(keys, obj.Key)
		}
	}
	found = len(records)+len(metas) > 0
	bucket := false
	for _, key := range records {
		n, created, err := c.cleanRecord(ctx, key, written[key], keys, j)
		removed += n
		if err != nil {
			return removed, found, err
		}
		bucket = bucket || created
	}
	for _, key := range metas {
		sub := *c
		sub.target.Prefix = strings.TrimSuffix(key, MetadataName)
		m, ok, err := sub.readMetadata(ctx)
		if err != nil || !ok {
			return removed, found, err
		}
		n, err := sub.cleanKept(ctx, m)
		removed += n
		if err != nil {
			return removed, found, err
		}
		bucket = bucket || m.CreatedBucket
	}
	if bucket {
		return removed, found, c.removeBucketIfEmpty(ctx)
	}
	return removed, found, nil
}

// cleanRecord removes the objects among keys that the write record at key
// names (next to it), then the record, and reports whether the record
// says cephbench made the bucket; written is when the store wrote the
// record. A record whose run j does not judge ended stays, with its
// objects.
func (c *client) cleanRecord(ctx context.Context, key string, written time.Time, keys []string, j *writeahead.Judge) (int64, bool, error) {
	body, _, _, err := minio.Core{Client: c.ctl}.GetObject(ctx, c.target.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return 0, false, opError("GET", key, err)
	}
	b, err := io.ReadAll(io.LimitReader(body, maxMetadata))
	body.Close()
	if err != nil {
		return 0, false, fmt.Errorf("s3: reading %s: %w", key, err)
	}
	dir, name := path.Split(key)
	r, err := writeahead.Decode(name, b)
	if err != nil {
		return 0, false, fmt.Errorf("s3: %w", err)
	}
	if !j.Ended(r, written) {
		return 0, false, nil
	}
	var owned []string
	for _, k := range keys {
		if d, n := path.Split(k); d == dir && r.Owns(n) {
			owned = append(owned, k)
		}
	}
	removed, err := c.remove(ctx, owned)
	if err != nil {
		return removed, false, err // the record stays for a second cleanup
	}
	if err := c.ctl.RemoveObject(ctx, c.target.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return removed, false, opError("DELETE", key, err)
	}
	return removed, r.CreatedBucket, nil
}
