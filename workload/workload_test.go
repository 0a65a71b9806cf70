package workload

import (
	"errors"
	"slices"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

func blockWorkload(p spec.Pattern, reads, workers int) *spec.Workload {
	return &spec.Workload{Pattern: p, ReadPercent: reads, BlockSize: 4096, Workers: workers, QueueDepth: 1}
}

func TestSequentialBlocksWrapAndAlign(t *testing.T) {
	geo := engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 4 * 4096}
	g := New(blockWorkload(spec.Sequential, 0, 1), geo, 0, &Shared{}, 1)
	op := &engine.Op{Buf: make([]byte, 4096)}
	var offs []int64
	for range 6 {
		g.Next(op)
		offs = append(offs, op.Offset)
	}
	want := []int64{0, 4096, 8192, 12288, 0, 4096}
	for i := range want {
		if offs[i] != want[i] {
			t.Fatalf("offsets %v; want %v", offs, want)
		}
	}
}

func TestRandomBlocksStayInRangeAndMix(t *testing.T) {
	geo := engine.Geometry{Layout: engine.Blocks, Files: 3, Size: 1 << 20}
	g := New(blockWorkload(spec.Random, 70, 3), geo, 2, &Shared{}, 7)
	op := &engine.Op{Buf: make([]byte, 4096)}
	reads := 0
	for range 10000 {
		g.Next(op)
		if op.Offset < 0 || op.Offset+4096 > 1<<20 || op.Offset%4096 != 0 || op.File != 2 {
			t.Fatalf("op out of range: file %d offset %d", op.File, op.Offset)
		}
		if op.Kind == engine.Read {
			reads++
		}
	}
	if reads < 6700 || reads > 7300 {
		t.Errorf("%d reads in 10000 ops at 70%% reads", reads)
	}
}

func TestSameSeedSameOps(t *testing.T) {
	geo := engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 1 << 30}
	a := New(blockWorkload(spec.Random, 50, 1), geo, 0, &Shared{}, 42)
	b := New(blockWorkload(spec.Random, 50, 1), geo, 0, &Shared{}, 42)
	x, y := &engine.Op{Buf: make([]byte, 4096)}, &engine.Op{Buf: make([]byte, 4096)}
	for range 100 {
		a.Next(x)
		b.Next(y)
		if x.Offset != y.Offset || x.Kind != y.Kind {
			t.Fatal("same seed gave different ops")
		}
	}
}

func TestObjectWritesStopAtTheLimit(t *testing.T) {
	w := &spec.Workload{Pattern: spec.Sequential, BlockSize: 1 << 20, ObjectSize: 4 << 20, Objects: 3, Workers: 2, QueueDepth: 1}
	geo := engine.Geometry{Layout: engine.Objects}
	shared := &Shared{}
	gens := []*Generator{New(w, geo, 0, shared, 1), New(w, geo, 1, shared, 1)}
	op := &engine.Op{Buf: make([]byte, 1<<20)}
	seen := map[[2]int64]bool{}
	n := 0
	for gens[n%2].Next(op) {
		key := [2]int64{op.Object, op.Offset}
		if seen[key] || op.Object >= 3 || op.Offset >= 4<<20 {
			t.Fatalf("object %d offset %d repeated or out of range", op.Object, op.Offset)
		}
		seen[key] = true
		n++
	}
	if n != 12 {
		t.Errorf("%d ops; want 3 objects x 4 ops", n)
	}
}

func TestObjectReadsUseExistingObjects(t *testing.T) {
	w := &spec.Workload{Pattern: spec.Sequential, ReadPercent: 100, BlockSize: 4096, Workers: 1, QueueDepth: 1}
	g := New(w, engine.Geometry{Layout: engine.Objects, ObjectCount: 3}, 0, &Shared{}, 1)
	op := &engine.Op{Buf: make([]byte, 4096)}
	var objs []int64
	for range 5 {
		if !g.Next(op) {
			t.Fatal("ran out of objects to read")
		}
		objs = append(objs, op.Object)
	}
	if objs[0] != 0 || objs[2] != 2 || objs[3] != 0 {
		t.Errorf("sequential reads visited %v; want 0 1 2 0 1", objs)
	}
	empty := New(w, engine.Geometry{Layout: engine.Objects}, 0, &Shared{}, 1)
	if empty.Next(op) {
		t.Error("a read with no objects produced an op")
	}
}

func TestDataVerifies(t *testing.T) {
	op := &engine.Op{Object: 5, Offset: 8192, Buf: make([]byte, 4096)}
	Fill(op.Buf)
	Stamp(op)
	if err := Check(op); err != nil {
		t.Fatalf("fresh block does not verify: %v", err)
	}
	other := &engine.Op{Object: 6, Offset: 8192, Buf: op.Buf}
	if err := Check(other); !errors.Is(err, engine.ErrVerify) {
		t.Errorf("block 5 read as block 6: %v; want ErrVerify", err)
	}
	op.Buf[100] ^= 1
	if err := Check(op); !errors.Is(err, engine.ErrVerify) {
		t.Errorf("a flipped bit: %v; want ErrVerify", err)
	}
	zero := &engine.Op{Buf: make([]byte, 4096)}
	if Check(zero) == nil {
		t.Error("an all-zero block verifies")
	}
}

func TestCyclingObjectWritesStartOver(t *testing.T) {
	w := &spec.Workload{Pattern: spec.Sequential, BlockSize: 4096, Objects: 3, Cycle: true, Workers: 1, QueueDepth: 1}
	g := New(w, engine.Geometry{Layout: engine.Objects}, 0, &Shared{}, 1)
	op := &engine.Op{Buf: make([]byte, 4096)}
	var objs []int64
	for range 7 {
		if !g.Next(op) {
			t.Fatal("a cycling write stopped")
		}
		objs = append(objs, op.Object)
	}
	want := []int64{0, 1, 2, 0, 1, 2, 0}
	for i := range want {
		if objs[i] != want[i] {
			t.Fatalf("objects %v; want %v", objs, want)
		}
	}
}

func TestOpLengthsVaryWithinTheRange(t *testing.T) {
	w := blockWorkload(spec.Random, 50, 1)
	w.BlockSize, w.MinBlockSize = 64<<10, 1<<10
	g := New(w, engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 1 << 30}, 0, &Shared{}, 3)
	op := &engine.Op{Buf: make([]byte, 64<<10)}
	lo, hi, sum := int64(1<<62), int64(0), int64(0)
	for range 10000 {
		g.Next(op)
		n := int64(len(op.Buf))
		lo, hi, sum = min(lo, n), max(hi, n), sum+n
		if op.Offset%(64<<10) != 0 {
			t.Fatalf("offset %d does not step by the block size", op.Offset)
		}
	}
	if lo < 1<<10 || hi > 64<<10 || lo > 2<<10 || hi < 63<<10 {
		t.Errorf("lengths in [%d, %d]; want them spread over [1K, 64K]", lo, hi)
	}
	if mean := sum / 10000; mean < 31<<10 || mean > 34<<10 {
		t.Errorf("mean length %d; want about 32.5K, uniform", mean)
	}
}

func TestObjectsOfTheirOwnSizes(t *testing.T) {
	w := &spec.Workload{Pattern: spec.Random, ReadPercent: 70, BlockSize: 64 << 10, MinBlockSize: 1 << 10,
		Objects: 20, ObjectSize: 300 << 10, MinObjectSize: 10 << 10, OffsetAlign: 4096, Workers: 1, QueueDepth: 1}
	sizes := ObjectSizes(w, 9)
	if again := ObjectSizes(w, 9); len(sizes) != 20 || !slices.Equal(sizes, again) {
		t.Fatalf("sizes %v, then %v; want 20, the same for the same seed", sizes, again)
	}
	for _, s := range sizes {
		if s < 10<<10 || s > 300<<10 {
			t.Fatalf("object size %d outside [10K, 300K]", s)
		}
	}
	if slices.Min(sizes) >= 64<<10 {
		t.Fatalf("sizes %v: none under the longest op, so no op is cut; pick another seed", sizes)
	}
	g := New(w, engine.Geometry{Layout: engine.Objects, ObjectCount: 20}, 0, &Shared{ObjectSizes: sizes}, 1)
	op := &engine.Op{Buf: make([]byte, 64<<10)}
	seen := map[int64]bool{}
	cut := 0
	for range 20000 {
		if !g.Next(op) {
			t.Fatal("no op")
		}
		size := sizes[op.Object]
		if op.Offset < 0 || op.Offset+int64(len(op.Buf)) > size || op.Offset%4096 != 0 || len(op.Buf) < 1 {
			t.Fatalf("op [%d, +%d) on object %d of %d bytes", op.Offset, len(op.Buf), op.Object, size)
		}
		if int64(len(op.Buf)) == size {
			cut++
		}
		seen[op.Object] = true
	}
	if len(seen) != 20 {
		t.Errorf("ops on %d of the 20 objects", len(seen))
	}
	if cut == 0 {
		t.Errorf("no op was cut to its object's size, though object sizes go down to %d", slices.Min(sizes))
	}
}

func TestBlockSplitSharesAndSequentialFit(t *testing.T) {
	w := blockWorkload(spec.Sequential, 0, 1)
	w.BlockSize, w.BlockSizes = 64<<10, "4k/20:64k/80"
	size := int64(256 << 20)
	g := New(w, engine.Geometry{Layout: engine.Blocks, Files: 1, Size: size}, 0, &Shared{}, 5)
	op := &engine.Op{Buf: make([]byte, 64<<10)}
	counts := map[int]int{}
	next, total := int64(0), int64(0)
	for total < size {
		g.Next(op)
		if op.Offset != next {
			t.Fatalf("op at %d; want it where the last ended, %d", op.Offset, next)
		}
		next, total = op.Offset+int64(len(op.Buf)), total+int64(len(op.Buf))
		counts[len(op.Buf)]++
	}
	if total != size {
		t.Errorf("one pass wrote %d bytes; want the region's %d", total, size)
	}
	ops := counts[4<<10] + counts[64<<10]
	if share := float64(counts[4<<10]) / float64(ops) * 100; share < 18 || share > 22 {
		t.Errorf("4k ops are %.1f%% of %d; want 20%% (%v)", share, ops, counts)
	}
}

func TestPerDirectionSizesAndHoles(t *testing.T) {
	w := blockWorkload(spec.Sequential, 50, 1)
	w.BlockSize, w.BlockSizes, w.SeqSkip = 64<<10, "4k,64k", 4<<10
	g := New(w, engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 1 << 20}, 0, &Shared{}, 5)
	op := &engine.Op{Buf: make([]byte, 64<<10)}
	var last [2]int64
	for i := range 200 {
		g.Next(op)
		want := map[engine.OpKind]int{engine.Read: 4 << 10, engine.Write: 64 << 10}[op.Kind]
		if len(op.Buf) != want {
			t.Fatalf("%v of %d bytes; want %d", op.Kind, len(op.Buf), want)
		}
		d := direction(op.Kind)
		if i > 1 && op.Offset != 0 && op.Offset != last[d]+int64(want)+4<<10 {
			t.Fatalf("%v at %d after one at %d; want a 4k hole", op.Kind, op.Offset, last[d])
		}
		last[d] = op.Offset
	}
}

func TestRandomOffsetsRepeatOrFollow(t *testing.T) {
	for _, repeat := range []bool{false, true} {
		w := blockWorkload(spec.Random, 100, 1)
		w.NewOffsetEvery, w.RepeatOffset = 4, repeat
		g := New(w, engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 1 << 30}, 0, &Shared{}, 5)
		op := &engine.Op{Buf: make([]byte, 4096)}
		var offs []int64
		for range 12 {
			g.Next(op)
			offs = append(offs, op.Offset)
		}
		for i := 1; i < len(offs); i++ {
			step := offs[i] - offs[i-1]
			fresh := (i+1)%4 == 0
			if !fresh && (repeat && step != 0 || !repeat && step != 4096) {
				t.Fatalf("repeat=%v: offsets %v; want a new one every 4th op, repeated or followed between", repeat, offs)
			}
		}
	}
}

// Sizes drawn over many ops land on each size at its share within 2
// points: a three-way split with a share left to fill, and a range, whose
// multiples of its smallest size are equally likely.
func TestDrawnSizeShares(t *testing.T) {
	for sizes, want := range map[spec.BlockSizes]map[int]float64{
		"4k/10:64k/50:32k": {4 << 10: 10, 32 << 10: 40, 64 << 10: 50},
		"4k-16k":           {4 << 10: 25, 8 << 10: 25, 12 << 10: 25, 16 << 10: 25},
	} {
		w := blockWorkload(spec.Random, 0, 1)
		w.BlockSizes = sizes
		w.BlockSize = sizes.Largest()
		g := New(w, engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 1 << 30}, 0, &Shared{}, 9)
		op := &engine.Op{Buf: make([]byte, w.BlockSize)}
		counts := map[int]int{}
		const ops = 20000
		for range ops {
			g.Next(op)
			counts[len(op.Buf)]++
			if op.Offset%(4<<10) != 0 || op.Offset+int64(len(op.Buf)) > 1<<30 {
				t.Fatalf("%s: op of %d bytes at %d", sizes, len(op.Buf), op.Offset)
			}
		}
		for size, share := range want {
			if got := 100 * float64(counts[size]) / ops; got < share-2 || got > share+2 {
				t.Errorf("%s: %d-byte ops are %.1f%%; want %.0f%% (%v)", sizes, size, got, share, counts)
			}
		}
		if len(counts) != len(want) {
			t.Errorf("%s: sizes drawn %v; want only %v", sizes, counts, want)
		}
	}
}

func TestBackwardsSequentialWraps(t *testing.T) {
	w := blockWorkload(spec.Sequential, 100, 1)
	w.SeqSkip = -8 << 10
	g := New(w, engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 64 << 10}, 0, &Shared{}, 1)
	op := &engine.Op{Buf: make([]byte, 4096)}
	var offs []int64
	for range 6 {
		g.Next(op)
		offs = append(offs, op.Offset>>10)
	}
	// fio: the first op at 0, then each 8k before the end of the last,
	// wrapping to 8k before the end of the region.
	if want := []int64{0, 56, 52, 48, 44, 40}; !slices.Equal(offs, want) {
		t.Errorf("offsets (KiB) %v; want %v", offs, want)
	}
}

// A split whose smallest size has no share still ends each pass: the op
// that does not fit before the end starts over at 0.
func TestSplitWithoutTheSmallestEndsPasses(t *testing.T) {
	w := blockWorkload(spec.Sequential, 0, 1)
	w.BlockSize, w.BlockSizes = 8<<10, "4k/0:8k/100:6k"
	g := New(w, engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 14 << 10}, 0, &Shared{}, 1)
	op := &engine.Op{Buf: make([]byte, 8<<10)}
	for i := range 10 {
		g.Next(op)
		if len(op.Buf) != 8<<10 || op.Offset != 0 {
			t.Fatalf("op %d: %d bytes at %d; want 8K at 0 each time (4K and 6K are left no share)", i, len(op.Buf), op.Offset)
		}
	}
}
