package loadgen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cephbench/cephbench/spec"
)

// Rate is --target-throughput's value (a pflag.Value): bytes per second
// with the size units (20M), as Ceph 16's rados reads it. It remembers a
// value given without a unit, which older rados releases read as MB/s.
type Rate struct {
	Bytes spec.Size
	bare  bool
}

// Set parses s as a size; its error is spec.ParseSize's.
func (r *Rate) Set(s string) error {
	n, err := spec.ParseSize(s)
	if err != nil {
		return err
	}
	_, numErr := strconv.ParseFloat(strings.TrimSpace(s), 64)
	r.Bytes, r.bare = n, numErr == nil
	return nil
}

// String is the rate as a size, in bytes per second.
func (r *Rate) String() string { return r.Bytes.String() }

// Type names the flag's unit in help.
func (*Rate) Type() string { return "bytes/s" }

// UnitNote warns of a rate given without a unit and under 1 MiB/s, which
// older rados releases would have read as MB/s; it is "" for any other.
func (r *Rate) UnitNote() string {
	if !r.bare || r.Bytes <= 0 || r.Bytes >= 1<<20 {
		return ""
	}
	n := int64(r.Bytes)
	return fmt.Sprintf("--target-throughput %d is %d bytes/s, as Ceph 16's rados reads it; older releases read MB/s: write %dM for that", n, n, n)
}
