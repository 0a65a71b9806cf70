package spec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// BlockSizes is a workload's op sizes per direction, in fio's bssplit and
// bsrange syntax: "4k/10:64k/90" is a split, each size drawn at its percent
// share (sizes without a share split what the others leave evenly, as
// fio's bssplit does); "1k-4k" is a range, the multiples of 1k from 1k to
// 4k drawn equally often (fio's bsrange); "64k" is one size. "READS,WRITES"
// gives each direction its own: "4k,64k", "4k/50:8k/50,1m". It is a string
// so that a Workload stays comparable and reads as typed.
type BlockSizes string

// SizeDist is one direction's op sizes, parsed from BlockSizes.
type SizeDist struct {
	// Sizes and Cumulative are a split's sizes in the order fio draws
	// them (by share, smallest first) and their running share in percent:
	// a draw u in [0,100) takes the first size whose Cumulative exceeds
	// u, and the last when the shares sum to less than 100. Empty for a
	// range.
	Sizes      []Size
	Cumulative []int
	// Min and Max bound the sizes; a range draws between them.
	Min, Max Size
}

// Fixed reports whether every op of the direction has the same size.
func (d SizeDist) Fixed() bool { return d.Min == d.Max }

// Directions parses the sizes into reads' and writes' distributions. One
// list serves both. Errors are one line and name the part at fault.
func (b BlockSizes) Directions() (reads, writes SizeDist, err error) {
	r, w, two := strings.Cut(string(b), ",")
	if reads, err = parseSizeDist(r); err != nil {
		return reads, writes, err
	}
	if !two {
		return reads, reads, nil
	}
	// fio's third list is for trims, which cephbench does not issue.
	w, _, _ = strings.Cut(w, ",")
	writes, err = parseSizeDist(w)
	return reads, writes, err
}

// Largest is the largest size either direction draws, 0 if the sizes do
// not parse.
func (b BlockSizes) Largest() Size {
	r, w, err := b.Directions()
	if err != nil {
		return 0
	}
	return max(r.Max, w.Max)
}

func parseSizeDist(s string) (SizeDist, error) {
	s = strings.TrimSpace(s)
	if lo, hi, ok := strings.Cut(s, "-"); ok && !strings.ContainsAny(s, "/:") {
		min, err := parseBlock(lo)
		if err != nil {
			return SizeDist{}, fmt.Errorf("block size range %q: %w", s, err)
		}
		max, err := parseBlock(hi)
		if err != nil {
			return SizeDist{}, fmt.Errorf("block size range %q: %w", s, err)
		}
		if min > max {
			return SizeDist{}, fmt.Errorf("block size range %q runs backwards", s)
		}
		return SizeDist{Min: min, Max: max}, nil
	}
	return parseSplit(s)
}

// parseSplit reads "SIZE/PERCENT:SIZE:..." as fio's bssplit_ddir does: a
// share over 100 counts as 100, a share of 0 or none takes an even part
// of what the others leave.
func parseSplit(s string) (SizeDist, error) {
	type share struct {
		size Size
		perc int // -1: not given
	}
	var shares []share
	given, missing := 0, 0
	for part := range strings.SplitSeq(s, ":") {
		sz, pc, hasPerc := strings.Cut(strings.TrimSpace(part), "/")
		size, err := parseBlock(sz)
		if err != nil {
			return SizeDist{}, err
		}
		p := -1
		if hasPerc {
			n, err := strconv.Atoi(strings.TrimSpace(pc))
			if err != nil || n < 0 {
				return SizeDist{}, fmt.Errorf("%q: the share %q is not a whole percentage", part, pc)
			}
			if n > 0 {
				p = min(n, 100)
			}
		}
		if p < 0 {
			missing++
		} else {
			given += p
		}
		shares = append(shares, share{size, p})
	}
	if given > 100 {
		return SizeDist{}, fmt.Errorf("block size shares %q add up to more than 100%%", s)
	}
	d := SizeDist{Min: shares[0].size, Max: shares[0].size}
	for i := range shares {
		if shares[i].perc < 0 {
			shares[i].perc = (100 - given) / missing
		}
		d.Min, d.Max = min(d.Min, shares[i].size), max(d.Max, shares[i].size)
	}
	slices.SortStableFunc(shares, func(a, b share) int { return a.perc - b.perc })
	cum := 0
	for _, sh := range shares {
		if sh.perc == 0 {
			continue // fio never draws a size whose share rounded to 0
		}
		cum += sh.perc
		d.Sizes, d.Cumulative = append(d.Sizes, sh.size), append(d.Cumulative, cum)
	}
	if len(d.Sizes) == 0 {
		return SizeDist{}, fmt.Errorf("block size shares %q leave no size a share", s)
	}
	return d, nil
}

func parseBlock(s string) (Size, error) {
	n, err := ParseSize(s)
	switch {
	case err != nil:
		return 0, err
	case n <= 0:
		return 0, fmt.Errorf("block size %q must be positive", s)
	case n > 1<<30:
		return 0, fmt.Errorf("block size %s is over the 1G limit", n)
	}
	return n, nil
}

// BlockSizesFlag is a command-line flag (a pflag.Value) that sets W's op
// sizes with SetBlockSizes: "4k", "4k/10:64k/90", "1k-4k", "4k,64k".
type BlockSizesFlag struct{ W *Workload }

// Set parses s into W's BlockSize and BlockSizes.
func (f BlockSizesFlag) Set(s string) error { return f.W.SetBlockSizes(s) }

// String is the sizes as given, or the one block size.
func (f BlockSizesFlag) String() string {
	if f.W == nil {
		return ""
	}
	if f.W.BlockSizes != "" {
		return string(f.W.BlockSizes)
	}
	return f.W.BlockSize.String()
}

// Type names the value in usage text.
func (f BlockSizesFlag) Type() string { return "sizes" }
