package spec

import (
	"slices"
	"strings"
	"testing"
)

func TestBlockSizesFollowFiosShareRules(t *testing.T) {
	r, w, err := BlockSizes("4k/10:64k/50:32k/40").Directions()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Sizes, []Size{4 << 10, 32 << 10, 64 << 10}) || !slices.Equal(r.Cumulative, []int{10, 50, 100}) {
		t.Errorf("split drawn as %v at %v; want by share, smallest first", r.Sizes, r.Cumulative)
	}
	if r.Min != 4<<10 || r.Max != 64<<10 || !slices.Equal(w.Sizes, r.Sizes) {
		t.Errorf("bounds %s-%s, writes %v; want 4K-64K for both directions", r.Min, r.Max, w.Sizes)
	}
	// Sizes without a share split what is left evenly.
	r, _, _ = BlockSizes("4k/40:8k:16k").Directions()
	if !slices.Equal(r.Cumulative, []int{30, 60, 100}) {
		t.Errorf("4k/40:8k:16k shares %v; want 30, 30, 40 cumulated", r.Cumulative)
	}
	r, w, _ = BlockSizes("1k-4k,4k/50:8k/50").Directions()
	if r.Sizes != nil || r.Min != 1<<10 || r.Max != 4<<10 || w.Max != 8<<10 {
		t.Errorf("per direction: reads %+v, writes %+v", r, w)
	}
}

func TestBlockSizeErrorsNameTheProblem(t *testing.T) {
	for in, want := range map[string]string{
		"4k/60:8k/50":  "more than 100%",
		"4k/x":         `share "x"`,
		"4q/10:8k/90":  `"4q"`,
		"8k-4k":        "backwards",
		"0/50:4k/50":   "must be positive",
		"4k,2g":        "over the 1G limit",
		"4k/-5:8k/100": "not a whole percentage",
	} {
		_, _, err := BlockSizes(in).Directions()
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v; want one line with %q", in, err, want)
		}
	}
	w := Workload{Target: Target{Scheme: "file", Location: "x"}, Pattern: Sequential, Workers: 1, QueueDepth: 1, TotalOps: 1}
	if err := w.SetBlockSizes("4k/20:64k/80"); err != nil || w.BlockSize != 64<<10 {
		t.Fatalf("SetBlockSizes: %v, block size %s; want 64K, the largest", err, w.BlockSize)
	}
	w.BlockSize = 4 << 10
	if err := w.Validate(); err == nil || !strings.Contains(err.Error(), "largest") {
		t.Errorf("block size below the split's largest: %v", err)
	}
	if err := w.SetBlockSizes("4k,4k"); err != nil || w.BlockSizes != "" {
		t.Errorf("one size for both directions kept as %q (%v); want plain BlockSize", w.BlockSizes, err)
	}
}
