package workload

import (
	"math/rand/v2"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// sizer draws one direction's op sizes and places its random offsets, as
// fio's get_next_buflen and last_block do.
type sizer struct {
	dist      spec.SizeDist
	uniform   bool  // any byte length in [Min, Max] (rados load-gen), not fio's multiples
	unaligned bool  // fio's bs_unaligned: drawn sizes are not rounded to Min
	align     int64 // random offsets are multiples of it
	blocks    int64 // random offsets there are
	stride    int64 // a sequential op's step; 0: its own length
	least     int64 // the smallest size a draw can return
}

// sizers returns the reads' and writes' sizers of w on a region of size
// bytes.
func sizers(w *spec.Workload, size int64) [2]sizer {
	bs := int64(w.BlockSize)
	fixed := spec.SizeDist{Min: w.BlockSize, Max: w.BlockSize}
	dists := [2]spec.SizeDist{fixed, fixed}
	if w.BlockSizes != "" {
		// Validate has parsed them.
		dists[0], dists[1], _ = w.BlockSizes.Directions()
	}
	var s [2]sizer
	for i, d := range dists {
		s[i] = sizer{dist: d, unaligned: w.BlockUnaligned, align: int64(d.Min)}
		if w.MinBlockSize > 0 {
			// Lengths vary within each block; offsets step by blocks.
			s[i].dist.Min, s[i].uniform, s[i].align, s[i].stride = w.MinBlockSize, true, bs, bs
		}
		if w.BlockAlign > 0 {
			s[i].align = int64(w.BlockAlign)
		}
		span := size
		if lo := int64(s[i].dist.Min); lo > s[i].align && w.MinBlockSize == 0 {
			span -= lo - s[i].align // the last offset still holds the smallest op
		}
		s[i].blocks = max(span/s[i].align, 1)
		s[i].least = s[i].leastSize()
	}
	return s
}

// leastSize is the smallest size draw returns: a split's smallest with a
// share, rounded as draw rounds it, which is more than Min when Min's
// share is 0.
func (s *sizer) leastSize() int64 {
	lo := int64(s.dist.Min)
	if len(s.dist.Sizes) == 0 {
		return lo
	}
	least := int64(s.dist.Max)
	for _, n := range s.dist.Sizes {
		if !s.unaligned {
			n -= n % s.dist.Min
		}
		least = min(least, int64(n))
	}
	return least
}

// direction is the index of kind's sizer.
func direction(kind engine.OpKind) int {
	if kind == engine.Read {
		return 0
	}
	return 1
}

// draw returns an op size that fits in room bytes, or 0 if the smallest
// does not. A split draws its sizes at their shares, falling through to
// the next when one does not fit; a range draws fio's way, Min plus a
// uniform share of Max, rounded down to a multiple of Min and capped at
// Max, which makes the multiples of Min equally likely.
func (s *sizer) draw(rng *rand.Rand, room int64) int64 {
	lo, hi := int64(s.dist.Min), int64(s.dist.Max)
	if lo == hi {
		return lo
	}
	if s.uniform {
		return lo + rng.Int64N(hi-lo+1)
	}
	if room < s.least {
		return 0 // no size fits: without this, the loop below never ends
	}
	for {
		var n int64
		if len(s.dist.Sizes) == 0 {
			n = lo + int64(float64(hi)*rng.Float64())
		} else {
			u := rng.IntN(100)
			for i, c := range s.dist.Cumulative {
				n = int64(s.dist.Sizes[i])
				if u < c && n <= room {
					break
				}
			}
		}
		if !s.unaligned {
			n -= n % lo
		}
		n = min(n, hi)
		if n <= room {
			return n
		}
	}
}

// blockOffset places a block or file op of kind in region r, from its
// start: a random offset, or the next sequential one (fio's
// get_next_block and get_next_seq_offset).
func (g *Generator) blockOffset(r *region, kind engine.OpKind) int64 {
	newOffset := true
	if every := int64(g.w.NewOffsetEvery); every > 1 {
		g.opsSinceOffset++
		newOffset = g.opsSinceOffset%every == 0
	}
	switch dir := direction(kind); {
	case !newOffset && g.w.RepeatOffset:
		return r.last[kind]
	case g.w.Pattern == spec.Random && (newOffset || r.cursor[kind] >= r.size):
		return r.picks[dir].next(g.rng) * r.sizers[dir].align
	}
	pos := r.cursor[kind]
	if pos >= r.size {
		pos = 0 // the end: start over, as fio's loops and time_based do
	}
	if skip := g.w.SeqSkip; pos != 0 && skip != 0 {
		pos += skip
		if pos < 0 || pos >= r.size {
			pos = 0
			if skip < 0 {
				pos = r.size + skip
			}
		}
	}
	return pos
}

// nextBlock fills op with a block or file op of kind.
func (g *Generator) nextBlock(op *engine.Op, kind engine.OpKind) {
	r := g.nextRegion()
	s := &r.sizers[direction(kind)]
	off := g.blockOffset(r, kind)
	n := s.draw(g.rng, r.size-off)
	if n == 0 || off+n > r.size {
		// The smallest op does not fit before the end: start over.
		off, n = 0, s.draw(g.rng, r.size)
	}
	op.File, op.Offset, op.Buf = r.file, r.start+off, op.Buf[:n]
	r.last[kind] = off
	r.cursor[kind] = off + max(n, s.stride)
	// A hole is part of the pass: a file is done when its ops reach its
	// end, as in fio.
	r.done += max(n, s.stride) + max(g.w.SeqSkip, 0)
}
