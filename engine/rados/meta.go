//go:build ceph

package rados

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ceph/go-ceph/rados"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/peer/radosbench"
)

var errNoMetadata = errors.New("no benchmark metadata")

func metadataName(runName string) string {
	if runName == "" {
		return radosbench.MetadataObject
	}
	return runName
}

// ReadMetadata reads the metadata object of runName ("" for rados bench's
// default); errNoMetadata means there is none.
func ReadMetadata(ioctx *rados.IOContext, runName string) (radosbench.Metadata, error) {
	buf := make([]byte, 64)
	n, err := ioctx.Read(metadataName(runName), buf, 0)
	switch {
	case errors.Is(err, rados.ErrNotFound), err == nil && n == 0:
		return radosbench.Metadata{}, errNoMetadata
	case err != nil:
		return radosbench.Metadata{}, fmt.Errorf("reading %s: %w", metadataName(runName), err)
	}
	return radosbench.DecodeMetadata(buf[:n])
}

// removeObjects removes objects from..to-1 of prefix. Missing objects are
// not an error.
func removeObjects(ctx context.Context, ioctx *rados.IOContext, prefix string, from, to int64) error {
	return removeAll(ctx, ioctx, int(max(to-from, 0)), func(i int, b []byte) []byte {
		b = append(append(b, prefix...), "_object"...)
		return strconv.AppendInt(b, from+int64(i), 10)
	})
}

// CleanupResult says what Cleanup removed.
type CleanupResult struct {
	Removed int64
	Prefix  string
}

// Cleanup removes benchmark objects as `rados cleanup` does: those of the
// write recorded in runName's metadata object, and that metadata object; or,
// with a prefix, every object whose name starts with it. A prefix that
// does not start with "benchmark_data" is refused, so cleanup can never
// remove data a benchmark did not write.
func Cleanup(ctx context.Context, ioctx *rados.IOContext, runName, prefix string) (CleanupResult, error) {
	return cleanup(ctx, ioctx, runName, prefix, nil)
}

// cleanup is Cleanup sparing the objects of the records in live, whose
// runs may still write them.
func cleanup(ctx context.Context, ioctx *rados.IOContext, runName, prefix string, live []writeahead.Record) (CleanupResult, error) {
	if prefix != "" {
		if !strings.HasPrefix(prefix, radosbench.Prefix) {
			return CleanupResult{}, fmt.Errorf("refusing to remove objects with prefix %q: only %s* objects are benchmark objects", prefix, radosbench.Prefix)
		}
		return cleanupPrefix(ctx, ioctx, prefix, live)
	}
	m, err := ReadMetadata(ioctx, runName)
	if err != nil {
		if errors.Is(err, errNoMetadata) {
			return CleanupResult{}, fmt.Errorf("%w: no %s object records a write to clean up (use --prefix %s to remove by name)", errNoMetadata, metadataName(runName), radosbench.Prefix)
		}
		return CleanupResult{}, err
	}
	p := radosbench.ObjectPrefix(m.PID)
	if err := removeObjects(ctx, ioctx, p, 0, m.Objects()); err != nil {
		return CleanupResult{}, err
	}
	meta := metadataName(runName)
	if err := removeAll(ctx, ioctx, 1, func(_ int, b []byte) []byte { return append(b, meta...) }); err != nil {
		return CleanupResult{}, err
	}
	return CleanupResult{Removed: m.Objects(), Prefix: p}, nil
}

func cleanupPrefix(ctx context.Context, ioctx *rados.IOContext, prefix string, live []writeahead.Record) (CleanupResult, error) {
	var names []string
	err := ioctx.ListObjects(func(oid string) {
		if strings.HasPrefix(oid, prefix) && !slices.ContainsFunc(live, func(r writeahead.Record) bool { return r.Owns(oid) }) {
			names = append(names, oid)
		}
	})
	if err != nil {
		return CleanupResult{}, fmt.Errorf("listing objects: %w", err)
	}
	if err := removeAll(ctx, ioctx, len(names), func(i int, b []byte) []byte { return append(b, names[i]...) }); err != nil {
		return CleanupResult{Prefix: prefix}, err
	}
	return CleanupResult{Removed: int64(len(names)), Prefix: prefix}, nil
}

// LastWrite connects to t's cluster and returns the metadata of the last
// write recorded under t's run name; nothing recorded is an
// *engine.UsageError, as rados bench's "Must write data before running a
// read benchmark!".
func LastWrite(t Target) (radosbench.Metadata, error) {
	conn, err := Connect(t, 0)
	if err != nil {
		return radosbench.Metadata{}, err
	}
	defer conn.Shutdown()
	if _, err := conn.GetPoolByName(t.Pool); err != nil {
		return radosbench.Metadata{}, engine.Usagef("pool %q does not exist", t.Pool)
	}
	ioctx, err := conn.OpenIOContext(t.Pool)
	if err != nil {
		return radosbench.Metadata{}, err
	}
	defer ioctx.Destroy()
	m, err := ReadMetadata(ioctx, t.RunName)
	if errors.Is(err, errNoMetadata) {
		return m, engine.Usagef("no %s object in pool %s: write data (with --no-cleanup) before running a read benchmark", metadataName(t.RunName), t.Pool)
	}
	return m, err
}

// CleanupTarget connects to t's cluster and removes, in its pool, what
// the write records of the runs j judges ended name, then what Cleanup
// removes with t's run name and prefix, leaving any object a record of a
// run still writing names; it returns how many objects it removed. No
// metadata object is an error only in a pool without write records.
func CleanupTarget(ctx context.Context, t Target, prefix string, j *writeahead.Judge) (int64, error) {
	pool, err := OpenPool(t)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	return pool.cleanup(ctx, prefix, j)
}

func (p *Pool) cleanup(ctx context.Context, prefix string, j *writeahead.Judge) (int64, error) {
	recs, err := cleanRecords(ctx, p.ioctx, j)
	if err != nil {
		return recs.removed, err
	}
	res, err := cleanup(ctx, p.ioctx, p.target.RunName, prefix, recs.live)
	if errors.Is(err, errNoMetadata) && recs.found {
		err = nil
	}
	return recs.removed + res.Removed, err
}

// refuseFull fails when the cluster says writes to pool would block: a full
// OSD or pool makes librados wait for space, so a write bench would hang
// instead of measuring. It returns the snapshot it looked at, nil when the
// monitors did not answer (no verdict: the run finds out).
func refuseFull(conn *rados.Conn, pool string) (*cluster.Snapshot, error) {
	s, err := cluster.Collect(conn)
	if err != nil {
		return nil, nil
	}
	if msg, full := s.Health.Checks["OSD_FULL"]; full {
		return nil, engine.Usagef("pool %s cannot take writes: %s (OSD_FULL)", pool, msg)
	}
	for _, p := range s.Pools {
		flags := strings.Split(p.Flags, ",")
		if p.Name == pool && (slices.Contains(flags, "full") || slices.Contains(flags, "full_quota")) {
			return nil, engine.Usagef("pool %s cannot take writes: it is full (flags %s)", pool, p.Flags)
		}
	}
	return s, nil
}
