package fiojob

import (
	"slices"
	"strings"
	"testing"
)

// iomem (mem), iomem_align (mem_align) and hugepage-size say where the
// buffers are, as in fio: a job without them is in malloc'd ordinary
// pages, like fio's.
func TestBufferMemoryOptions(t *testing.T) {
	plan := mustParse(t, []string{"m.fio"}, files{"m.fio": `[global]
ioengine=null
size=1m
[plain]
[huge]
mem=mmaphuge
hugepage-size=1g
[shared]
iomem=shmhuge
[aligned]
iomem_align=64k
mem=mmapshared
[hugefile]
mem=mmaphuge:/mnt/huge/fio
`}, nil)
	for name, want := range map[string]struct {
		memory    string
		hugepage  int64
		alignment int64
	}{
		"plain":    {"", 0, 0},
		"huge":     {"mmaphuge", 1 << 30, 0},
		"shared":   {"shmhuge", 0, 0},
		"aligned":  {"mmapshared", 0, 64 << 10},
		"hugefile": {"mmaphuge", 0, 0},
	} {
		w := jobNamed(t, plan, name).Workload
		if w.BufferMemory != want.memory || int64(w.HugepageSize) != want.hugepage || int64(w.BufferAlign) != want.alignment {
			t.Errorf("%s: memory %q, huge pages of %d, aligned to %d; want %+v", name, w.BufferMemory, w.HugepageSize, w.BufferAlign, want)
		}
		if name == "plain" && w.Buffers() != "malloc" {
			t.Errorf("a job without mem= has its buffers in %s, want malloc as fio", w.Buffers())
		}
	}
	if !slices.ContainsFunc(plan.Notes, func(n string) bool { return strings.Contains(n, "not the file /mnt/huge/fio") }) {
		t.Errorf("notes %q do not say that mmaphuge's file is not used", plan.Notes)
	}
}

func TestBufferMemoryBadInput(t *testing.T) {
	base := []string{"--name=j", "--ioengine=null", "--size=1m"}
	for opt, want := range map[string]string{
		"--mem=cudamalloc":   "want malloc, mmap, mmaphuge, mmapshared, shm or shmhuge",
		"--mem=thp":          "want malloc, mmap, mmaphuge, mmapshared, shm or shmhuge",
		"--mem=mmap:/tmp/f":  "a file for mmap is not supported",
		"--iomem_align=3000": "power of two",
		"--hugepage-size=3m": "power of two",
	} {
		wantContains(t, parseErr(t, append(append([]string{}, base...), opt), nil, nil), want)
	}
}
