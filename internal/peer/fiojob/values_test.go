package fiojob

import (
	"testing"
	"time"
)

// fio's units: with kb_base=1024 (its default) k, kb, KB are 1024 and
// KiB is 1000; kb_base=1000 swaps them.
func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		kb   int64
		want int64
	}{
		{"512", 1024, 512}, {"512b", 1024, 512}, {"4k", 1024, 4096}, {"4K", 1024, 4096},
		{"4kb", 1024, 4096}, {"4KB", 1024, 4096}, {"4KiB", 1024, 4000}, {"4kib", 1024, 4000},
		{"1m", 1024, 1 << 20}, {"10M", 1024, 10 << 20}, {"1MB", 1024, 1 << 20}, {"1MiB", 1024, 1000000},
		{"1g", 1024, 1 << 30}, {"1G", 1024, 1 << 30}, {"2t", 1024, 2 << 40}, {"1p", 1024, 1 << 50},
		{"0x10", 1024, 16}, {" 64k ", 1024, 65536}, {"0", 1024, 0},
		{"4k", 1000, 4000}, {"4KB", 1000, 4000}, {"4KiB", 1000, 4096}, {"1MiB", 1000, 1 << 20},
	} {
		got, err := parseSize(c.in, c.kb)
		if err != nil || got != c.want {
			t.Errorf("parseSize(%q, kb_base=%d) = %d, %v; want %d", c.in, c.kb, got, err, c.want)
		}
	}
	for _, in := range []string{"", "k", "4x", "-4k", "1.5g", "50%", "3z", "(1+2)", "4 kilo", "99999999999p", "4KK"} {
		if n, err := parseSize(in, 1024); err == nil {
			t.Errorf("parseSize(%q) = %d; want an error", in, n)
		}
	}
}

// fio's times: runtime=120 is seconds; us, ms, s, m (minutes), h, d.
func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"120": 120 * time.Second, "10s": 10 * time.Second, "2m": 2 * time.Minute, "1h": time.Hour,
		"500ms": 500 * time.Millisecond, "500msec": 500 * time.Millisecond, "20us": 20 * time.Microsecond,
		"20usec": 20 * time.Microsecond, "1d": 24 * time.Hour, "10S": 10 * time.Second, "0": 0,
	} {
		got, err := parseTime(in, time.Second)
		if err != nil || got != want {
			t.Errorf("parseTime(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "s", "2min", "1.5s", "1h30m", "-1", "10sec", "(5)"} {
		if d, err := parseTime(in, time.Second); err == nil {
			t.Errorf("parseTime(%q) = %s; want an error", in, d)
		}
	}
}

// fio's num2str, as its job header prints block sizes.
func TestNum2Str(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		pow2 bool
		want string
	}{
		{512, true, "512B"}, {4096, true, "4096B"}, {8192, true, "8192B"}, {16384, true, "16.0KiB"},
		{65536, true, "64.0KiB"}, {131072, true, "128KiB"}, {1 << 20, true, "1024KiB"},
		{4 << 20, true, "4096KiB"}, {16 << 20, true, "16.0MiB"}, {4000, true, "4000B"},
		{4096, false, "4096B"}, {16384, false, "16.4kB"}, {1 << 20, false, "1049kB"},
	} {
		if got := num2str(c.n, 4, c.pow2, "B"); got != c.want {
			t.Errorf("num2str(%d, pow2 %v) = %q; want %q", c.n, c.pow2, got, c.want)
		}
	}
}

func TestSplitDirs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [3]int64
	}{
		{"4k", [3]int64{4096, 4096, 4096}},
		{"4k,8k", [3]int64{4096, 8192, 8192}},
		{"4k,8k,16k", [3]int64{4096, 8192, 16384}},
		{",8k", [3]int64{1, 8192, 8192}},
		{"4k,", [3]int64{4096, 1, 1}},
		{"4k:8k", [3]int64{4096, 8192, 8192}},
		{"4k-8k", [3]int64{4096, 8192, 8192}},
	} {
		got := [3]int64{1, 1, 1}
		if err := setDirs(&got, c.in, func(s string) (int64, error) { return parseSize(s, 1024) }); err != nil || got != c.want {
			t.Errorf("setDirs(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}
