package workload

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// seqWrites is a write-only sequential source over a file of blocks
// 4 KiB blocks: offsets 0, 4096, ...
func seqWrites(blocks int64) Source {
	geo := engine.Geometry{Layout: engine.Blocks, Files: 1, Size: blocks * 4096}
	return New(blockWorkload(spec.Sequential, 0, 1), geo, 0, &Shared{}, 1)
}

// trace runs n ops of src one at a time, each done before the next, and
// names them "w0" (write of block 0), "r3" (read of block 3).
func trace(src Source, n int) []string {
	op := &engine.Op{Buf: make([]byte, 4096)}
	var out []string
	for range n {
		if !src.Next(op) {
			break
		}
		kind := "w"
		if op.Kind == engine.Read {
			kind = "r"
		}
		out = append(out, fmt.Sprintf("%s%d", kind, op.Offset/4096))
		src.Done(op, nil)
	}
	return out
}

func TestBacklogReadsBackEachBatchAfterEveryWrites(t *testing.T) {
	got := trace(NewBacklog(seqWrites(64), 4, 4), 17)
	want := []string{"w0", "w1", "w2", "w3", "r0", "r1", "r2", "r3", "w4", "w5", "w6", "w7", "r4", "r5", "r6", "r7", "w8"}
	if !slices.Equal(got, want) {
		t.Fatalf("ops %v\nwant %v", got, want)
	}
}

func TestBacklogSmallerBatchReadsTheOldestAsFioDoes(t *testing.T) {
	// fio reads back the oldest unverified writes, so a batch of 2 every 4
	// starts after 4 writes and then reads 2 back every 2 writes, each
	// write once.
	got := trace(NewBacklog(seqWrites(64), 4, 2), 14)
	want := []string{"w0", "w1", "w2", "w3", "r0", "r1", "w4", "w5", "r2", "r3", "w6", "w7", "r4", "r5"}
	if !slices.Equal(got, want) {
		t.Fatalf("ops %v\nwant %v", got, want)
	}
}

func TestBacklogWaitsForWritesInFlightAndRestReadsTheLeft(t *testing.T) {
	b := NewBacklog(seqWrites(64), 2, 2)
	ops := make([]*engine.Op, 4)
	for i := range ops {
		ops[i] = &engine.Op{Buf: make([]byte, 4096)}
		if !b.Next(ops[i]) || ops[i].Kind != engine.Write {
			t.Fatalf("op %d: %v at %d before any write ended; want a write", i, ops[i].Kind, ops[i].Offset)
		}
	}
	b.Done(ops[0], nil)
	b.Done(ops[3], engine.ErrNotIssued) // the bound refused it
	read := &engine.Op{Buf: make([]byte, 4096)}
	if !b.Next(read) || read.Kind != engine.Read || read.Offset != 0 {
		t.Fatalf("after write 0 ended: %v at %d; want a read of 0", read.Kind, read.Offset)
	}
	b.Done(ops[1], nil)
	b.Done(ops[2], nil)
	got := trace(b.Rest(), 10)
	if want := []string{"r1", "r2"}; !slices.Equal(got, want) {
		t.Fatalf("rest %v; want %v (block 3 never written)", got, want)
	}
}
