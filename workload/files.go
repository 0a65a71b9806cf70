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
	file          int   // op.File
	start, blocks int64 // from start, blocks whole blocks
	// cursor is the next sequential block per op kind.
	cursor [engine.NumOpKinds]int64
	pick   picker // the block of a random op
	done   int64  // ops on it in the current pass
}

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
// geo (see spec.Workload.Region): from start, blocks whole blocks of
// w.BlockSize; blocks is 0 when the file ends before one block fits.
func Region(w *spec.Workload, geo engine.Geometry, worker, file int) (start, blocks int64) {
	size := geo.Size
	if w.MinFileSize > 0 {
		size = min(size, FileSize(w, file))
	}
	start, n := w.Region(worker, size)
	return start, n / int64(w.BlockSize)
}

// CheckRegions says which worker's region holds no block of a block
// target of geometry geo, or returns nil.
func CheckRegions(w *spec.Workload, geo engine.Geometry) error {
	if geo.Layout != engine.Blocks {
		if w.Offset > 0 || w.OffsetIncrement > 0 || w.OffsetPercent > 0 || w.SizePercent > 0 || w.FilesPerWorker > 1 {
			return errors.New("offsets and files per worker apply to files and block devices, not to objects")
		}
		return nil
	}
	if nf := w.FilesPerWorker; nf > 1 && geo.Files != w.Workers*nf {
		return fmt.Errorf("%d files per worker: the target holds %d files for %d workers", nf, geo.Files, w.Workers)
	}
	for worker := range w.Workers {
		for _, file := range workerFiles(w, geo, worker) {
			if start, blocks := Region(w, geo, worker, file); blocks == 0 {
				return fmt.Errorf("worker %d's region of file %d starts at offset %d, where the file leaves no %s block", worker, file, start, w.BlockSize)
			}
		}
	}
	return nil
}

// newRegions sets up worker's files on a block target.
func (g *Generator) newRegions(worker int) {
	w, geo := g.w, g.geo
	dist, _ := spec.ParseDistribution(w.Distribution) // w is valid
	files := max(geo.Files, 1)
	for _, file := range workerFiles(w, geo, worker) {
		r := region{file: file}
		r.start, r.blocks = Region(w, geo, worker, file)
		r.blocks = max(r.blocks, 1)
		r.pick = newPicker(dist, r.blocks, int64(w.BlockSize), w.RandomMap, g.rng)
		if workersOnFile := (w.Workers + files - 1) / files; workersOnFile > 1 && w.OffsetIncrement == 0 {
			// Workers sharing a file start sequential runs at evenly spaced
			// places, so they do not all read the same cached blocks.
			start := r.blocks * int64(worker/files) / int64(workersOnFile)
			for k := range r.cursor {
				r.cursor[k] = start
			}
		}
		g.regions = append(g.regions, r)
	}
	g.service, g.switchEvery, _ = spec.ParseFileService(w.FileService) // w is valid
}

// nextBlock addresses the next op of kind on a block target.
func (g *Generator) nextBlock(op *engine.Op, kind engine.OpKind) {
	r := g.nextRegion()
	var block int64
	if g.w.Pattern == spec.Random {
		block = r.pick.next(g.rng)
	} else {
		block = r.cursor[kind] % r.blocks
		r.cursor[kind] = block + 1
	}
	r.done++
	op.File = r.file
	op.Offset = r.start + block*int64(g.w.BlockSize)
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
		if g.regions[i].done < g.regions[i].blocks {
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
	if cur.done < cur.blocks && (g.service == spec.FileSequential || g.sinceSwitch < g.switchEvery) {
		g.sinceSwitch++
		return cur
	}
	switch g.service {
	case spec.FileRandom:
		g.current = g.undone(g.rng.IntN(left))
	default:
		for {
			g.current = (g.current + 1) % len(g.regions)
			if r := &g.regions[g.current]; r.done < r.blocks {
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
		if g.regions[i].done < g.regions[i].blocks {
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

// share sets the worker's part of the byte and op bounds when the
// workload bounds each worker (spec.Workload.BoundPerWorker): in
// proportion to its regions' blocks among every worker's.
func (g *Generator) share(worker int) {
	w := g.w
	if !w.BoundPerWorker {
		return
	}
	var before, mine, all uint64
	for other := range w.Workers {
		var blocks uint64
		for _, file := range workerFiles(w, g.geo, other) {
			_, n := Region(w, g.geo, other, file)
			blocks += uint64(max(n, 1))
		}
		if other < worker {
			before += blocks
		}
		if other == worker {
			mine = blocks
		}
		all += blocks
	}
	// The shares of workers 0..k-1 end at total*cumulative/all, so that
	// they add up to the total exactly.
	part := func(total int64) int64 {
		if total <= 0 {
			return 0
		}
		return mulDiv(total, before+mine, all) - mulDiv(total, before, all)
	}
	// Ops of one size get shares of whole ops.
	unit := int64(1)
	if w.MinBlockSize == 0 {
		unit = int64(w.BlockSize)
	}
	g.quotaBytes, g.quotaOps = part(int64(w.TotalBytes)/unit)*unit, part(w.TotalOps)
	g.bounded = g.quotaBytes > 0 || g.quotaOps > 0
}

// mulDiv is a*b/c without overflowing.
func mulDiv(a int64, b, c uint64) int64 {
	hi, lo := bits.Mul64(uint64(a), b)
	q, _ := bits.Div64(hi, lo, c)
	return int64(q)
}

// overShare reports whether an op of n bytes would take the worker past
// its share of the bounds, and counts it if not.
func (g *Generator) overShare(n int64) bool {
	if !g.bounded {
		return false
	}
	if g.quotaBytes > 0 && g.madeBytes+n > g.quotaBytes || g.quotaOps > 0 && g.madeOps >= g.quotaOps {
		g.shareDone = true
		return true
	}
	g.madeBytes += n
	g.madeOps++
	return false
}

// ShareDone reports whether the worker did its share of a workload
// bounded per worker, which ends its ops but not the run's.
func (g *Generator) ShareDone() bool { return g.shareDone }
