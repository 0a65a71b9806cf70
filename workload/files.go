package workload

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// region is one file of a worker on a block target: where the worker
// addresses it, and where it is in its pass over it.
type region struct {
	file        int   // op.File
	start, size int64 // the bytes it addresses: size from start
	// cursor is where the last op of each kind ended, last where it
	// started, from start.
	cursor, last [engine.NumOpKinds]int64
	sizers       [2]sizer  // reads', writes'
	picks        [2]picker // their random offsets, in units of the sizer's align
	done         int64     // bytes of ops on it in the current pass
}

// passed reports whether the region's current pass is done.
func (r *region) passed() bool { return r.done >= r.size }

// workerFiles returns the files worker addresses on a block target of
// geometry geo: FilesPerWorker of its own when the target holds that many
// per worker, else file worker%Files (workers may share a file).
func workerFiles(w *spec.Workload, geo engine.Geometry, worker int) []int {
	files := max(geo.Files, 1)
	if nf := w.FilesPerWorker; nf > 1 && files == w.Workers*nf {
		out := make([]int, nf)
		for i := range out {
			out[i] = worker*nf + i
		}
		return out
	}
	return []int{worker % files}
}

// Region is where worker addresses file on a block target of geometry
// geo (see spec.Workload.Region): length bytes from start; length is 0
// when the file ends before one block fits.
func Region(w *spec.Workload, geo engine.Geometry, worker, file int) (start, length int64) {
	size := geo.Size
	if w.MinFileSize > 0 {
		size = min(size, FileSize(w, file))
	}
	return w.Region(worker, size)
}

// CheckRegions says which worker's region holds no op of a block target
// of geometry geo, or what w asks of a region that an object target has
// not, or returns nil.
func CheckRegions(w *spec.Workload, geo engine.Geometry) error {
	if geo.Layout != engine.Blocks {
		if w.BlockSizes != "" {
			return fmt.Errorf("block sizes per direction work on files and block devices: %s:// targets hold objects", w.Target.Scheme)
		}
		if w.Offset > 0 || w.OffsetIncrement > 0 || w.OffsetPercent > 0 || w.SizePercent > 0 || w.FilesPerWorker > 1 {
			return errors.New("offsets and files per worker apply to files and block devices, not to objects")
		}
		return nil
	}
	if nf := w.FilesPerWorker; nf > 1 && geo.Files != w.Workers*nf {
		return fmt.Errorf("%d files per worker: the target holds %d files for %d workers", nf, geo.Files, w.Workers)
	}
	least := int64(w.MinRegion())
	for worker := range w.Workers {
		for _, file := range workerFiles(w, geo, worker) {
			if start, length := Region(w, geo, worker, file); length < least {
				return fmt.Errorf("worker %d's region of file %d starts at offset %d, where the file leaves no %s block", worker, file, start, w.MinRegion())
			}
		}
	}
	return nil
}

// newRegions sets up worker's files on a block target.
func (g *Generator) newRegions(worker int) {
	w, geo := g.w, g.geo
	bs := int64(w.BlockSize)
	dist, _ := spec.ParseDistribution(w.Distribution) // w is valid
	files := max(geo.Files, 1)
	for _, file := range workerFiles(w, geo, worker) {
		r := region{file: file}
		r.start, r.size = Region(w, geo, worker, file)
		r.size = max(r.size, int64(w.MinRegion()))
		r.sizers = sizers(w, r.size)
		for i, s := range r.sizers {
			if i > 0 && s.blocks == r.sizers[0].blocks && s.align == r.sizers[0].align {
				// One map or distribution for both directions, as fio
				// has one per file.
				r.picks[i] = r.picks[0]
				continue
			}
			r.picks[i] = newPicker(dist, s.blocks, s.align, w.RandomMap, g.rng)
		}
		if workersOnFile := (w.Workers + files - 1) / files; workersOnFile > 1 && w.OffsetIncrement == 0 {
			// Workers sharing a file start sequential runs at evenly spaced
			// places, so they do not all read the same cached blocks.
			start := r.size / bs * int64(worker/files) / int64(workersOnFile) * bs
			for k := range r.cursor {
				r.cursor[k] = start
			}
		}
		g.regions = append(g.regions, r)
	}
	g.service, g.switchEvery, _ = spec.ParseFileService(w.FileService) // w is valid
}

// nextRegion picks the file of the next op as fio's file_service_type
// does: each file gets one pass (as many ops as it has blocks) before any
// gets a second; roundrobin moves to the next file after every
// switchEvery ops, random to a random one, sequential only once a file's
// pass is done.
func (g *Generator) nextRegion() *region {
	if len(g.regions) == 1 {
		return &g.regions[0]
	}
	left := 0
	for i := range g.regions {
		if !g.regions[i].passed() {
			left++
		}
	}
	if left == 0 { // a new pass over every file
		for i := range g.regions {
			g.regions[i].done = 0
		}
		left = len(g.regions)
	}
	cur := &g.regions[g.current]
	if !cur.passed() && (g.service == spec.FileSequential || g.sinceSwitch < g.switchEvery) {
		g.sinceSwitch++
		return cur
	}
	switch g.service {
	case spec.FileRandom:
		g.current = g.undone(g.rng.IntN(left))
	default:
		for {
			g.current = (g.current + 1) % len(g.regions)
			if !g.regions[g.current].passed() {
				break
			}
		}
	}
	g.sinceSwitch = 1
	return &g.regions[g.current]
}

// undone returns the index of the nth file whose pass is not done.
func (g *Generator) undone(n int) int {
	for i := range g.regions {
		if !g.regions[i].passed() {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return 0
}

// FileSize is the size of file (an index of a directory target's files)
// when w's files have sizes of their own: uniform in [w.MinFileSize,
// w.FileSize], rounded down to whole blocks, as fio's filesize=LOW-HIGH
// draws them. It depends only on w's file prefix and file, so that the
// engine that lays the files out and the generators that address them
// agree, and a run finds the files an earlier one of the same job left.
func FileSize(w *spec.Workload, file int) int64 {
	lo, hi, bs := int64(w.MinFileSize), int64(w.FileSize), int64(w.BlockSize)
	if lo == 0 {
		return hi
	}
	h := uint64(14695981039346656037) // FNV-1a of the prefix
	for i := range len(w.FilePrefix) {
		h = (h ^ uint64(w.FilePrefix[i])) * 1099511628211
	}
	n := lo + rand.New(rand.NewPCG(h, uint64(file))).Int64N(hi-lo+1)
	return max(n-n%bs, bs)
}

// Shares splits w's byte and op bounds among its workers when it bounds
// each worker (spec.Workload.BoundsPerWorker): in proportion to their
// regions on a block target of geometry geo, evenly otherwise, the first
// workers taking what does not divide. Shares of ops of one size are
// whole ops.
func Shares(w *spec.Workload, geo engine.Geometry) (bytes, ops []int64) {
	weights := make([]uint64, w.Workers)
	var all uint64
	for worker := range weights {
		weights[worker] = 1
		if geo.Layout == engine.Blocks {
			weights[worker] = 0
			for _, file := range workerFiles(w, geo, worker) {
				_, n := Region(w, geo, worker, file)
				weights[worker] += uint64(max(n, 1))
			}
		}
		all += weights[worker]
	}
	unit := int64(1)
	if w.MinBlockSize == 0 && w.BlockSizes == "" {
		unit = max(int64(w.BlockSize), 1)
	}
	bytes, ops = make([]int64, w.Workers), make([]int64, w.Workers)
	var before uint64
	for worker, mine := range weights {
		// The shares of workers 0..k-1 end at total*cumulative/all, rounded
		// up, so that they add up to the total exactly.
		part := func(total int64) int64 {
			return mulDivUp(total, before+mine, all) - mulDivUp(total, before, all)
		}
		bytes[worker], ops[worker] = part(int64(w.TotalBytes)/unit)*unit, part(w.TotalOps)
		before += mine
	}
	bytes[0] += int64(w.TotalBytes) % unit
	return bytes, ops
}

// mulDivUp is a*b/c rounded up, without overflowing.
func mulDivUp(a int64, b, c uint64) int64 {
	hi, lo := bits.Mul64(uint64(a), b)
	q, r := bits.Div64(hi, lo, c)
	if r > 0 {
		q++
	}
	return int64(q)
}
