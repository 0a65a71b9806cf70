package fiojob

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cephbench/cephbench/spec"
)

// setBSSplit reads fio's bssplit: "SIZE/PERCENT:SIZE/PERCENT..." for
// every direction, or "READS,WRITES[,TRIMS]"; an empty list leaves its
// direction alone. Sizes take fio's units and kb_base; what is stored is
// in bytes, in spec.BlockSizes' syntax.
func setBSSplit(o *opts, v string) error {
	return setSizeDists(o, v, func(list string) (string, error) {
		var parts []string
		for entry := range strings.SplitSeq(list, ":") {
			if strings.TrimSpace(entry) == "" {
				break // fio stops at an empty entry
			}
			size, perc, hasPerc := strings.Cut(entry, "/")
			n, err := blockSize(size, o.kbBase)
			if err != nil {
				return "", err
			}
			if hasPerc {
				if _, err := strconv.ParseUint(strings.TrimSpace(perc), 10, 31); err != nil {
					return "", fmt.Errorf("%q: the share %q is not a whole percentage", entry, perc)
				}
				parts = append(parts, fmt.Sprintf("%d/%s", n, strings.TrimSpace(perc)))
				continue
			}
			parts = append(parts, strconv.FormatInt(n, 10))
		}
		return strings.Join(parts, ":"), nil
	})
}

// setBSRange reads fio's bsrange: "MIN-MAX" for every direction, or
// "READS,WRITES[,TRIMS]"; fio also takes "MIN:MAX".
func setBSRange(o *opts, v string) error {
	return setSizeDists(o, v, func(r string) (string, error) {
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			lo, hi, ok = strings.Cut(r, ":")
		}
		if !ok {
			return "", fmt.Errorf("%q is not a range MIN-MAX", r)
		}
		min, err := blockSize(lo, o.kbBase)
		if err != nil {
			return "", fmt.Errorf("its least size: %w", err)
		}
		max, err := blockSize(hi, o.kbBase)
		if err != nil {
			return "", fmt.Errorf("its largest size: %w", err)
		}
		return fmt.Sprintf("%d-%d", min, max), nil
	})
}

// setSizeDists parses each direction's list with parse and checks it as
// the workload will, so that an error names the option.
func setSizeDists(o *opts, v string, parse func(string) (string, error)) error {
	lists := strings.Split(v, ",")
	if len(lists) > 3 {
		return errors.New("more than three lists (read, write, trim)")
	}
	for dir := range 2 {
		list := lists[min(dir, len(lists)-1)]
		if strings.TrimSpace(list) == "" {
			continue
		}
		text, err := parse(list)
		if err != nil {
			return err
		}
		d, _, err := spec.BlockSizes(text).Directions()
		if err != nil {
			return err
		}
		o.bsDist[dir], o.bs[dir] = text, int64(d.Max)
	}
	return nil
}

// blockSize is one positive block size in fio's units.
func blockSize(s string, kb int64) (int64, error) {
	n, err := parseSize(s, kb)
	if err == nil && n == 0 {
		err = errors.New("a block size must be positive")
	}
	return n, err
}

// setRWSequencer reads fio's rw_sequencer: what happens between the new
// offsets of rw=randread:N.
func setRWSequencer(o *opts, v string) error {
	switch strings.TrimSpace(v) {
	case "sequential":
		o.rwIdentical = false
	case "identical":
		o.rwIdentical = true
	default:
		return errors.New("want sequential or identical")
	}
	return nil
}

// offsetModifier applies rw=MODE:N to w, as fio's str_rw_cb reads N: for
// a random mode, how many ops share each new offset (fio's atoi: leading
// digits); for a sequential one, the bytes skipped after each op, in
// fio's units, negative going backwards.
func offsetModifier(o *opts, w *spec.Workload) error {
	n := strings.TrimSpace(o.rwPostfix)
	if n == "" {
		return nil
	}
	if w.Pattern == spec.Random {
		digits := len(n) - len(strings.TrimLeft(n, "0123456789"))
		every, err := strconv.Atoi(n[:digits])
		if err != nil || every < 1 {
			return fmt.Errorf("rw=%s:%s: want a count of ops per random offset", o.rw, n)
		}
		w.NewOffsetEvery, w.RepeatOffset = every, o.rwIdentical
		return nil
	}
	abs, neg := strings.CutPrefix(n, "-")
	skip, err := parseSize(abs, o.kbBase)
	if err != nil {
		return fmt.Errorf("rw=%s:%s: %v", o.rw, n, err)
	}
	if neg {
		skip = -skip
	}
	w.SeqSkip = skip
	return nil
}

// blockSizes sets w's op sizes from bs, bsrange and bssplit, for the
// directions the job issues, and its offsets' alignment from blockalign.
func blockSizes(o *opts, w *spec.Workload) error {
	var dists [2]string
	for d := range dists {
		dists[d] = o.bsDist[d]
		if dists[d] == "" {
			dists[d] = strconv.FormatInt(o.bs[d], 10)
		}
	}
	align := o.blockalign
	switch {
	case !w.Writes():
		dists[1], align[1] = dists[0], align[0]
	case !w.Reads():
		dists[0], align[0] = dists[1], align[1]
	}
	if align[0] != align[1] {
		return errors.New("blockalign: different alignments for reads and writes are not supported")
	}
	w.BlockAlign = spec.Size(align[0])
	if err := w.SetBlockSizes(dists[0] + "," + dists[1]); err != nil {
		return err
	}
	if w.BlockSizes != "" && w.BlockSizes == spec.BlockSizes(dists[0]+","+dists[0]) {
		w.BlockSizes = spec.BlockSizes(dists[0])
	}
	w.BlockUnaligned = o.bsUnaligned
	return offsetModifier(o, w)
}

// bsHeader is each direction's size bounds as fio's job header prints
// them, "4096B-64.0KiB".
func bsHeader(o *opts) [3]string {
	var dirs [3]string
	for i := range dirs {
		lo, hi := o.bs[i], o.bs[i]
		if d := o.bsDist[min(i, 1)]; d != "" {
			r, _, _ := spec.BlockSizes(d).Directions()
			lo, hi = int64(r.Min), int64(r.Max)
		}
		dirs[i] = num2str(uint64(lo), 4, o.kbBase == 1024, "B") + "-" + num2str(uint64(hi), 4, o.kbBase == 1024, "B")
	}
	return dirs
}
