package runner

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const nrHugePages = "/proc/sys/vm/nr_hugepages"

// setHugePages sets how many huge pages the system reserves, and puts the
// count back when the test ends; it skips a test that cannot (not root).
func setHugePages(t *testing.T, n int) {
	t.Helper()
	was, err := os.ReadFile(nrHugePages)
	if err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(nrHugePages, []byte(strconv.Itoa(n)), 0); err != nil {
		t.Skipf("reserving huge pages needs root: %v", err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(nrHugePages, was, 0); err != nil {
			t.Errorf("restoring %s: %v", nrHugePages, err)
		}
	})
}

// reserveHugePages makes n more 2 MiB huge pages free for the test.
func reserveHugePages(t *testing.T, n int) {
	t.Helper()
	was, err := os.ReadFile(nrHugePages)
	if err != nil {
		t.Skip(err)
	}
	have, err := strconv.Atoi(strings.TrimSpace(string(was)))
	if err != nil {
		t.Fatal(err)
	}
	setHugePages(t, have+n)
	if got, _ := os.ReadFile(nrHugePages); strings.TrimSpace(string(got)) != strconv.Itoa(have+n) {
		t.Skipf("the system reserved %s huge pages of the %d asked (memory too fragmented)", strings.TrimSpace(string(got)), have+n)
	}
}

// smapsOf returns the sizes (KiB) /proc/self/smaps gives for mapping.
// The kernel merges a new anonymous mapping with a neighbour of the same
// flags, whose pages smaps would count too: a flag of its own (no copy
// on fork) splits the mapping off first, so that its entry is its alone.
func smapsOf(t *testing.T, mapping []byte) map[string]int {
	t.Helper()
	if err := unix.Madvise(mapping, unix.MADV_DONTFORK); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := uintptrOf(mapping)
	header := fmt.Sprintf("%x-%x ", start, start+uintptr(len(mapping)))
	var m map[string]int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, header) {
			m = map[string]int{}
			continue
		}
		if m == nil {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok || strings.Contains(key, " ") || strings.Contains(key, "-") {
			break // the next mapping's header
		}
		if kb, ok := strings.CutSuffix(strings.TrimSpace(value), " kB"); ok {
			m[key], _ = strconv.Atoi(kb)
		}
	}
	if m == nil {
		t.Fatalf("no mapping %s in /proc/self/smaps", header)
	}
	return m
}
