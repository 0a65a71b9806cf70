package workload

import (
	"slices"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// offsetsOf draws n ops of worker's generator and returns their offsets.
func offsetsOf(w *spec.Workload, geo engine.Geometry, worker, n int, seed uint64) []int64 {
	g := New(w, geo, worker, &Shared{}, seed)
	op := &engine.Op{Buf: make([]byte, w.BlockSize)}
	offs := make([]int64, n)
	for i := range offs {
		g.Next(op)
		offs[i] = op.Offset
	}
	return offs
}

// With a random map every block of the region comes once per pass, in
// another order each pass, whatever the block count.
func TestRandomMapVisitsEveryBlockOncePerPass(t *testing.T) {
	for _, blocks := range []int{1, 2, 3, 7, 64, 1000} {
		w := blockWorkload(spec.Random, 0, 1)
		w.RandomMap = true
		geo := engine.Geometry{Layout: engine.Blocks, Files: 1, Size: int64(blocks) * 4096}
		offs := offsetsOf(w, geo, 0, 3*blocks, 5)
		for pass := range 3 {
			got := slices.Sorted(slices.Values(offs[pass*blocks : (pass+1)*blocks]))
			for i, off := range got {
				if off != int64(i)*4096 {
					t.Fatalf("%d blocks, pass %d: offsets %v, want each block once", blocks, pass, got)
				}
			}
		}
		if blocks >= 64 && slices.Equal(offs[:blocks], offs[blocks:2*blocks]) {
			t.Errorf("%d blocks: two passes in the same order", blocks)
		}
	}
}

// Worker N addresses FileSize bytes from Offset+N*OffsetIncrement; a
// region the target cannot hold is an error naming the worker.
func TestRegionsFollowOffsetAndIncrement(t *testing.T) {
	w := blockWorkload(spec.Sequential, 0, 3)
	w.FileSize, w.Offset, w.OffsetIncrement = 2*4096, 4096, 3*4096
	geo := engine.Geometry{Layout: engine.Blocks, Files: 3, Size: 10 * 4096}
	for worker, want := range [][]int64{{1, 2, 1}, {4, 5, 4}, {7, 8, 7}} {
		got := offsetsOf(w, geo, worker, 3, 1)
		for i := range got {
			got[i] /= 4096
		}
		if !slices.Equal(got, want) {
			t.Errorf("worker %d: blocks %v, want %v", worker, got, want)
		}
	}
	if err := CheckRegions(w, geo); err != nil {
		t.Errorf("regions within the target: %v", err)
	}
	w.OffsetIncrement = 5 * 4096
	err := CheckRegions(w, geo)
	if err == nil || !strings.Contains(err.Error(), "worker 2") {
		t.Errorf("worker 2's region beyond the target: error %v, want one naming worker 2", err)
	}
}

// A zoned distribution sends each zone its share of the ops, inside it.
func TestZonedSharesOfTheOps(t *testing.T) {
	w := blockWorkload(spec.Random, 100, 1)
	w.Distribution = "zoned:70/10:30/90"
	geo := engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 1000 * 4096}
	inFirst := 0
	const n = 20000
	for _, off := range offsetsOf(w, geo, 0, n, 3) {
		if off < 100*4096 {
			inFirst++
		}
	}
	if share := 100 * float64(inFirst) / n; share < 68 || share > 72 {
		t.Errorf("the first 10%% of the blocks got %.1f%% of the ops, want 70", share)
	}
}

// Bounded per worker, each worker's share of the bytes is in proportion
// to its region: of 20 blocks, 16 for a region of 8 blocks and 4 for one
// of 2; ops of one size are shared in whole ops, the first workers taking
// what does not divide.
func TestSharesByRegion(t *testing.T) {
	w := blockWorkload(spec.Random, 0, 2)
	w.BoundsPerWorker, w.TotalBytes, w.TotalOps = true, 20*4096+5, 7
	w.OffsetIncrement = 6 * 4096
	geo := engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 8 * 4096} // worker 1 starts at block 6
	bytes, ops := Shares(w, geo)
	if !slices.Equal(bytes, []int64{16*4096 + 5, 4 * 4096}) || !slices.Equal(ops, []int64{6, 1}) {
		t.Errorf("shares of bytes %v, of ops %v; want [65541 16384] and [6 1]", bytes, ops)
	}
	w.OffsetIncrement = 0
	if bytes, ops = Shares(w, geo); !slices.Equal(bytes, []int64{10*4096 + 5, 10 * 4096}) || !slices.Equal(ops, []int64{4, 3}) {
		t.Errorf("even regions: shares of bytes %v, of ops %v; want [40965 40960] and [4 3]", bytes, ops)
	}
}

// Every distribution's offsets repeat with the seed, and change with it.
func TestDistributionsFollowTheSeed(t *testing.T) {
	geo := engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 4096 * 4096}
	for _, d := range []string{"random", "zipf:1.2", "pareto:0.3", "normal:5", "zoned:60/10:40/90", "zoned_abs:50/1M:50/15M"} {
		w := blockWorkload(spec.Random, 100, 1)
		w.Distribution = d
		a, b, c := offsetsOf(w, geo, 0, 64, 1), offsetsOf(w, geo, 0, 64, 1), offsetsOf(w, geo, 0, 64, 2)
		if !slices.Equal(a, b) || slices.Equal(a, c) {
			t.Errorf("%s: the same seed gives the same offsets %v, another seed other offsets %v", d, slices.Equal(a, b), !slices.Equal(a, c))
		}
	}
}

// Ops of sizes that vary stay inside each worker's region, which is not
// rounded to the largest size: a split of 4k and 16k over regions of
// 40k, 48k apart, random with zipf and sequential with a hole after each
// op. Near a region's end only 4k ops fit, so they are more than half.
func TestSizesThatVaryStayInTheirRegions(t *testing.T) {
	geo := engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 200 << 10}
	for _, p := range []spec.Pattern{spec.Random, spec.Sequential} {
		w := blockWorkload(p, 50, 3)
		w.BlockSize, w.BlockSizes, w.FileSize = 16<<10, "4k/50:16k/50", 40<<10
		w.Offset, w.OffsetIncrement = 8<<10, 48<<10
		if p == spec.Random {
			w.Distribution, w.NewOffsetEvery = "zipf:1.2", 3
		} else {
			w.SeqSkip = 4 << 10
		}
		for worker := range 3 {
			g := New(w, geo, worker, &Shared{}, 1)
			op := &engine.Op{Buf: make([]byte, w.BlockSize)}
			sizes := map[int]int{}
			start := int64(8<<10 + worker*48<<10)
			for range 2000 {
				g.Next(op)
				sizes[len(op.Buf)]++
				if op.Offset < start || op.Offset+int64(len(op.Buf)) > start+40<<10 || op.Offset%(4<<10) != 0 {
					t.Fatalf("%s, worker %d: op of %d bytes at %d, outside its region [%d, %d) or off 4k", p, worker, len(op.Buf), op.Offset, start, start+40<<10)
				}
			}
			if sizes[4<<10] < 900 || sizes[16<<10] < 400 {
				t.Errorf("%s, worker %d: sizes %v, want 4k at least 45%% and 16k at least 20%% of the time", p, worker, sizes)
			}
		}
	}
}

// A new random offset every 4 ops draws from the distribution; the ops
// between follow it.
func TestNewOffsetEveryFollowsTheDistribution(t *testing.T) {
	w := blockWorkload(spec.Random, 100, 1)
	w.Distribution, w.NewOffsetEvery = "zoned:100/10", 4
	geo := engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 1000 * 4096}
	offs := offsetsOf(w, geo, 0, 400, 1)
	for i, off := range offs {
		if i%4 == 3 && off >= 100*4096 {
			t.Fatalf("op %d: a new offset at block %d, outside the zone of the first 100 blocks", i, off/4096)
		}
		if i%4 != 3 && i > 3 && off != offs[i-1]+4096 && off != 0 {
			t.Fatalf("op %d at block %d does not follow op %d at block %d", i, off/4096, i-1, offs[i-1]/4096)
		}
	}
}
