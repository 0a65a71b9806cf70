//go:build ceph

package rados

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ceph/go-ceph/rados"

	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/peer/radosbench"
)

// putRecord creates r's record object, before any of r's objects, and
// reports whether it did: a record of the same objects that is there
// already (an earlier kept write's) is not this caller's to remove.
func putRecord(ioctx *rados.IOContext, r writeahead.Record) (bool, error) {
	switch err := ioctx.Create(r.Name(), rados.CreateExclusive); {
	case errors.Is(err, rados.ErrObjectExists):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("creating %s: %w", r.Name(), ErrnoOf(err))
	}
	// Killed here, the record is empty, and no object of it exists yet.
	if err := ioctx.WriteFull(r.Name(), r.Encode()); err != nil {
		return true, fmt.Errorf("writing %s: %w", r.Name(), ErrnoOf(err))
	}
	return true, nil
}

// dropRecord removes a record object; one already gone is not an error.
func dropRecord(ioctx *rados.IOContext, name string) error {
	// FULL_TRY, as the objects' removal: a full pool is when a run's
	// record most needs to go.
	op := rados.CreateWriteOp()
	defer op.Release()
	op.Remove()
	if err := op.Operate(ioctx, name, rados.OperationFullTry); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("removing %s: %w", name, ErrnoOf(err))
	}
	return nil
}

// records says what cleanRecords found.
type records struct {
	found   bool                // the pool held a write record
	removed int64               // objects removed
	live    []writeahead.Record // records of runs that may still write
}

// cleanRecords removes, for each write record in the pool whose run j
// judges ended, its objects, then the metadata object it names if that
// describes them, then the record: what runs killed at any moment, and
// kept runs on several hosts, left. A record whose objects were never
// made, or are gone, is removed alone; one that is not a valid record
// stays, and is an error.
func cleanRecords(ctx context.Context, ioctx *rados.IOContext, j *writeahead.Judge) (records, error) {
	var names, candidates []string
	err := ioctx.ListObjects(func(oid string) {
		switch {
		case writeahead.IsName(oid):
			names = append(names, oid)
		case strings.HasPrefix(oid, radosbench.Prefix), strings.HasPrefix(oid, "cephbench_"):
			candidates = append(candidates, oid)
		}
	})
	if err != nil {
		return records{}, fmt.Errorf("listing objects: %w", err)
	}
	recs := records{found: len(names) > 0}
	var errs []error
	for _, name := range names {
		errs = append(errs, cleanRecord(ctx, ioctx, j, name, candidates, &recs))
	}
	return recs, errors.Join(errs...)
}

func cleanRecord(ctx context.Context, ioctx *rados.IOContext, j *writeahead.Judge, name string, candidates []string, recs *records) error {
	buf := make([]byte, 8<<10)
	n, err := ioctx.Read(name, buf, 0)
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, ErrnoOf(err))
	}
	if n > 0 {
		r, err := writeahead.Decode(name, buf[:n])
		if err != nil {
			return err
		}
		st, err := ioctx.Stat(name)
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, ErrnoOf(err))
		}
		if !j.Ended(r, st.ModTime) {
			recs.live = append(recs.live, r)
			return nil
		}
		var owned []string
		for _, c := range candidates {
			if r.Owns(c) {
				owned = append(owned, c)
			}
		}
		err = removeAll(ctx, ioctx, len(owned), func(i int, b []byte) []byte { return append(b, owned[i]...) })
		if err != nil {
			return err // the record stays for a second cleanup
		}
		recs.removed += int64(len(owned))
		if m, err := ReadMetadata(ioctx, r.Metadata); r.Metadata != "" && err == nil && strings.HasSuffix(r.Stem, "_"+strconv.Itoa(m.PID)+"_object") {
			if err := dropRecord(ioctx, r.Metadata); err != nil {
				return err
			}
		}
	}
	return dropRecord(ioctx, name)
}
