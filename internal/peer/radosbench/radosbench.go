// Package radosbench holds what makes objects interchangeable with Ceph's
// own rados bench: object names, the metadata object that lets seq, rand
// and cleanup find a write's objects, and the data each op writes, so that
// Ceph's tools read, verify and remove cephbench's objects and the other
// way round. It does no I/O.
package radosbench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Names rados bench uses.
const (
	// MetadataObject is the default run name: the object that records the
	// last write for seq, rand and cleanup.
	MetadataObject = "benchmark_last_metadata"
	// Prefix starts every benchmark object's name; rados cleanup refuses
	// other prefixes.
	Prefix = "benchmark_data"
)

// ObjectPrefix is the prefix of the objects written by process pid on this
// host: "benchmark_data_<host>_<pid>". Like rados bench, it keeps at most
// 29 bytes of the host name.
func ObjectPrefix(pid int) string {
	host, _ := os.Hostname()
	if len(host) > 29 {
		host = host[:29]
	}
	return Prefix + "_" + host + "_" + strconv.Itoa(pid)
}

// ObjectName is the name of object n under prefix.
func ObjectName(prefix string, n int64) string {
	return prefix + "_object" + strconv.FormatInt(n, 10)
}

// ObjectNumber parses a name made by ObjectName under prefix. It takes
// only the digits ObjectName writes (no sign, no leading zero), so that a
// name that merely looks alike is never taken for one of ours.
func ObjectNumber(name, prefix string) (int64, bool) {
	digits, ok := strings.CutPrefix(name, prefix+"_object")
	if !ok || digits == "" || digits[0] == '0' && len(digits) > 1 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil
}

// Metadata is what a write leaves in the metadata object.
type Metadata struct {
	ObjectSize int64 // bytes
	Ops        int64 // writes made; the objects are ceil(Ops / (ObjectSize/OpSize))
	PID        int   // the writer's pid, which names its objects
	OpSize     int64 // bytes
}

// Objects is the number of objects the write made.
func (m Metadata) Objects() int64 {
	per := max(m.ObjectSize/max(m.OpSize, 1), 1)
	return (m.Ops + per - 1) / per
}

// Encode returns the metadata as rados bench stores it: Ceph's
// little-endian encoding of (u64 object size, i32 ops, i32 pid, u64 op
// size).
func (m Metadata) Encode() []byte {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint64(b[0:], uint64(m.ObjectSize))
	binary.LittleEndian.PutUint32(b[8:], uint32(int32(m.Ops)))
	binary.LittleEndian.PutUint32(b[12:], uint32(int32(m.PID)))
	binary.LittleEndian.PutUint64(b[16:], uint64(m.OpSize))
	return b
}

// DecodeMetadata parses a metadata object. Old writers leave out the op
// size, which then equals the object size.
func DecodeMetadata(b []byte) (Metadata, error) {
	if len(b) < 16 {
		return Metadata{}, fmt.Errorf("benchmark metadata of %d bytes is too short", len(b))
	}
	m := Metadata{
		ObjectSize: int64(binary.LittleEndian.Uint64(b[0:])),
		Ops:        int64(int32(binary.LittleEndian.Uint32(b[8:]))),
		PID:        int(int32(binary.LittleEndian.Uint32(b[12:]))),
	}
	m.OpSize = m.ObjectSize
	if len(b) >= 24 {
		m.OpSize = int64(binary.LittleEndian.Uint64(b[16:]))
	}
	if m.ObjectSize <= 0 || m.OpSize <= 0 || m.Ops < 0 || m.ObjectSize%m.OpSize != 0 {
		return Metadata{}, errors.New("benchmark metadata is corrupt")
	}
	return m, nil
}

// zs is a block of the filler byte, copied rather than written byte by
// byte, since a 4M object is filled or checked on every op.
var zs = bytes.Repeat([]byte{'z'}, 64<<10)

// Fill writes the data of write number op (counting from 0 across the
// run) into buf: "I'm the <op, 16 wide>th op!", a NUL, then 'z' to the
// end, which is what rados bench writes and checks.
func Fill(buf []byte, op int64) {
	for i := 0; i < len(buf); i += len(zs) {
		copy(buf[i:], zs)
	}
	Stamp(buf, op)
}

// Stamp rewrites the text at the start of a buffer Fill filled, for op:
// what differs between two ops' data, so a reused buffer costs a few bytes
// per op, not a refill (as in rados bench). A longer text ends where the
// previous one did, since every op's text has the same width.
func Stamp(buf []byte, op int64) {
	if len(buf) == 0 {
		return
	}
	// snprintf(buf, len, ...) writes at most len-1 characters and a NUL.
	var text [64]byte
	s := fmt.Appendf(text[:0], "I'm the %16dth op!", op)
	n := copy(buf[:len(buf)-1], s)
	buf[n] = 0
}

// Check reports whether buf holds the data of write number op.
func Check(buf []byte, op int64) bool {
	var head [64]byte
	want := head[:min(len(buf), len(head))]
	Fill(want, op)
	if !bytes.Equal(buf[:len(want)], want) {
		return false
	}
	for rest := buf[len(want):]; len(rest) > 0; {
		n := min(len(rest), len(zs))
		if !bytes.Equal(rest[:n], zs[:n]) {
			return false
		}
		rest = rest[n:]
	}
	return true
}
