package spec

import (
	"encoding/json"
	"testing"

	"github.com/cephbench/cephbench/internal/fuzztest"
)

// The sizes, durations and targets of the field reports' command lines
// and job files, the README's, and the forms the parsers document.
var (
	sizeSeeds = []string{"4k", "4K", "4KiB", "4KB", "1m", "4M", "10M", "1G", "1.5G", "512", "0", "256K",
		"20M", "40M", "64", " 8m ", "1p", "1.", ".5k", "8Eb", "99999999999999999999", "1e3"}
	durationSeeds = []string{"10s", "2m", "1h30m", "500ms", "600", "1000", "0.5", "120", "-1s", "-3",
		"1e3", "inf", "NaN", "0x10", "1e400", "9223372036s", ""}
	targetSeeds = []string{"null://", "/dev/sdb", "./cephbench-data", "rados://bench", "rbd://rbd/img?create=true",
		"cephfs:///bench", "s3://bench/run1?endpoint=http://127.0.0.1:7480", "dirobj://./objs",
		"file:///data/x", "a://b://c", "://x", "RADOS://Pool", "", "/data/\xff"}
)

// FuzzParseSize: whatever the text, a size or a one-line error; a size
// is never negative and reads back from its String as itself.
func FuzzParseSize(f *testing.F) {
	for _, s := range sizeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		fuzztest.OneLine(t, s, err)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d, negative", s, n)
		}
		back, err := ParseSize(n.String())
		if err != nil || back != n {
			t.Fatalf("ParseSize(%q) = %d, whose String %q reads back as %d, %v", s, n, n.String(), back, err)
		}
	})
}

// FuzzParseDuration: a duration or a one-line error; a duration is never
// negative and reads back from its String as itself.
func FuzzParseDuration(f *testing.F) {
	for _, s := range durationSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		fuzztest.OneLine(t, s, err)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v, negative", s, d.D())
		}
		back, err := ParseDuration(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v, whose String %q reads back as %v, %v", s, d.D(), d.String(), back.D(), err)
		}
	})
}

// FuzzParseTarget: a target or a one-line error; a target reads back as
// itself from both its String and its Short form, and from JSON.
func FuzzParseTarget(f *testing.F) {
	for _, s := range targetSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		fuzztest.OneLine(t, s, err)
		if err != nil {
			return
		}
		b, _ := json.Marshal(tg)
		var fromJSON Target
		if err := json.Unmarshal(b, &fromJSON); err != nil || fromJSON != tg {
			t.Fatalf("ParseTarget(%q) = %+v, which comes back from JSON as %+v, %v", s, tg, fromJSON, err)
		}
		for _, form := range []string{tg.String(), tg.Short()} {
			back, err := ParseTarget(form)
			if err != nil || back != tg {
				t.Fatalf("ParseTarget(%q) = %+v, whose form %q reads back as %+v, %v", s, tg, form, back, err)
			}
		}
	})
}
