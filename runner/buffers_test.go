package runner

import (
	"os"
	"strings"
	"testing"
)

func TestBufferArenaAlignsAndSeparates(t *testing.T) {
	for _, align := range []int{0, 512, 4096, 65536} {
		a, err := newBufferArena(5, 3000, align, "", 0, align > 512)
		if err != nil {
			t.Fatal(err)
		}
		var bufs [][]byte
		for i := range 5 {
			b := a.buffer(i)
			if len(b) != 3000 || cap(b) != 3000 {
				t.Fatalf("align %d: buffer of len %d cap %d, want 3000", align, len(b), cap(b))
			}
			if align > 1 && uintptrOf(b)%uintptr(align) != 0 {
				t.Fatalf("align %d: buffer at %#x", align, uintptrOf(b))
			}
			for i := range b {
				b[i] = byte(len(bufs))
			}
			bufs = append(bufs, b)
		}
		for i, b := range bufs {
			if b[0] != byte(i) || b[len(b)-1] != byte(i) {
				t.Fatalf("align %d: buffer %d overwritten by a neighbour", align, i)
			}
		}
		if err := a.release(); err != nil {
			t.Fatal(err)
		}
	}
}

// The buffers are in the memory the workload names, as /proc/self/smaps
// sees the mapping: ordinary pages by default, as fio's malloc, and huge
// pages the system reserved for mmaphuge and shmhuge.
func TestBufferArenaMemory(t *testing.T) {
	const count, size = 4, 1 << 20 // 4 MiB: two huge pages' worth
	// Where the system gives every large mapping transparent huge pages,
	// fio's malloc'd buffers get them too.
	enabled, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	thpAlways := strings.Contains(string(enabled), "[always]")
	for _, c := range []struct {
		memory   string
		pageKiB  int  // KernelPageSize
		reserved bool // needs vm.nr_hugepages
	}{
		{"", 4, false},
		{"malloc", 4, false},
		{"mmap", 4, false},
		{"mmapshared", 4, false},
		{"shm", 4, false},
		{"mmaphuge", 2048, true},
		{"shmhuge", 2048, true},
	} {
		if c.reserved {
			reserveHugePages(t, 4)
		}
		a, err := newBufferArena(count, size, 4096, c.memory, 0, true)
		if err != nil {
			t.Fatalf("%q: %v", c.memory, err)
		}
		for i := range count {
			clear(a.buffer(i)) // touched, so that the pages exist
		}
		m := smapsOf(t, a.mapping)
		if m["KernelPageSize"] != c.pageKiB {
			t.Errorf("%q: pages of %d KiB, want %d", c.memory, m["KernelPageSize"], c.pageKiB)
		}
		if thp := m["AnonHugePages"] + m["ShmemPmdMapped"]; !c.reserved && thp != 0 && !thpAlways {
			t.Errorf("%q: %d KiB in transparent huge pages, want none", c.memory, thp)
		}
		if err := a.release(); err != nil {
			t.Fatal(err)
		}
	}
}

// Without reserved huge pages, mmaphuge fails before any I/O, naming the
// setting that gives them.
func TestBufferArenaWithoutHugePagesSaysWhy(t *testing.T) {
	setHugePages(t, 0)
	_, err := newBufferArena(4, 1<<20, 4096, "mmaphuge", 0, false)
	if err == nil || !strings.Contains(err.Error(), "vm.nr_hugepages") {
		t.Errorf("mmaphuge with no huge page reserved: %v; want an error naming vm.nr_hugepages", err)
	}
}

// Buffers about to be filled are made by the kernel at once; others only
// as they are touched.
func TestBufferArenaPopulatesWhatItFills(t *testing.T) {
	for _, filled := range []bool{false, true} {
		a, err := newBufferArena(4, 1<<20, 4096, "", 0, filled)
		if err != nil {
			t.Fatal(err)
		}
		rss := smapsOf(t, a.mapping)["Rss"]
		if filled && rss < 4<<10 || !filled && rss != 0 {
			t.Errorf("filled %v: %d KiB resident before any touch", filled, rss)
		}
		if err := a.release(); err != nil {
			t.Fatal(err)
		}
	}
}
