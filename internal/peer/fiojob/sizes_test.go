package fiojob

import (
	"testing"

	"github.com/cephbench/cephbench/spec"
)

// What the block-size options make of a job: the sizes per direction in
// bytes, the offsets' modifiers, and fio's job header.
func TestBlockSizeOptionsMapOntoTheWorkload(t *testing.T) {
	for _, c := range []struct {
		args   []string
		sizes  spec.BlockSizes
		bs     spec.Size
		header [3]string
		check  func(w spec.Workload) bool
	}{
		{args: []string{"--rw=randwrite", "--bssplit=4k/10:64k/50:32k/40"}, sizes: "4096/10:65536/50:32768/40", bs: 64 << 10,
			header: [3]string{"4096B-64.0KiB", "4096B-64.0KiB", "4096B-64.0KiB"}},
		{args: []string{"--rw=randrw", "--bs=4k,64k"}, sizes: "4096,65536", bs: 64 << 10,
			header: [3]string{"4096B-4096B", "64.0KiB-64.0KiB", "64.0KiB-64.0KiB"}},
		// A read-only job ignores the writes' size.
		{args: []string{"--rw=read", "--bs=4k,64k"}, bs: 4 << 10,
			header: [3]string{"4096B-4096B", "64.0KiB-64.0KiB", "64.0KiB-64.0KiB"}},
		{args: []string{"--rw=rw", "--bsrange=1k-4k,2k-8k", "--bs_unaligned"}, sizes: "1024-4096,2048-8192", bs: 8 << 10,
			header: [3]string{"1024B-4096B", "2048B-8192B", "2048B-8192B"},
			check:  func(w spec.Workload) bool { return w.BlockUnaligned }},
		// The last of bs and bssplit wins.
		{args: []string{"--bssplit=4k/50:8k", "--bs=16k"}, bs: 16 << 10,
			header: [3]string{"16.0KiB-16.0KiB", "16.0KiB-16.0KiB", "16.0KiB-16.0KiB"}},
		{args: []string{"--rw=read:8k"}, bs: 4 << 10, header: [3]string{"4096B-4096B", "4096B-4096B", "4096B-4096B"},
			check: func(w spec.Workload) bool { return w.SeqSkip == 8<<10 }},
		{args: []string{"--rw=write:-8k"}, bs: 4 << 10, header: [3]string{"4096B-4096B", "4096B-4096B", "4096B-4096B"},
			check: func(w spec.Workload) bool { return w.SeqSkip == -8<<10 }},
		{args: []string{"--rw=randread:4", "--rw_sequencer=identical", "--ba=512"}, bs: 4 << 10,
			header: [3]string{"4096B-4096B", "4096B-4096B", "4096B-4096B"},
			check:  func(w spec.Workload) bool { return w.NewOffsetEvery == 4 && w.RepeatOffset && w.BlockAlign == 512 }},
	} {
		args := append([]string{"--filename=/dev/sdx", "--size=1g"}, append(c.args, "--name=j")...)
		j := jobNamed(t, mustParse(t, args, nil, nil), "j")
		w := j.Workload
		if w.BlockSizes != c.sizes || w.BlockSize != c.bs || j.BSDirs != c.header || c.check != nil && !c.check(w) {
			t.Errorf("%v: sizes %q, bs %s, header %q, %+v; want %q, %s, %q", c.args, w.BlockSizes, w.BlockSize, j.BSDirs, w, c.sizes, c.bs, c.header)
		}
	}
}
