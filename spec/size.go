// Package spec holds the typed, validated description of a benchmark: the
// target, the workload and its limits. Every front end (the run command, rados
// bench, fio job files, plans) builds a Workload; nothing here does I/O.
package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Size is a byte count. It parses the way fio and rados users write sizes:
// a bare number is bytes, and k/K/KB/KiB, m/M/MB/MiB, g, t, p are powers of
// 1024 (fio's default kb_base and rados bench's -b both treat 4K as 4096).
type Size int64

var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
	"p": 1 << 50, "pb": 1 << 50, "pib": 1 << 50,
}

// ParseSize parses "4k", "4K", "4KiB", "4M", "1G", "512" or "1.5G". The
// error names the offending text.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("invalid size %q (want a number with an optional unit: 512, 4k, 4KiB, 4M, 1G)", s)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > (1<<62)/mult {
			return 0, fmt.Errorf("invalid size %q: out of range", s)
		}
		return Size(n * mult), nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return Size(f * float64(mult)), nil
}

// String formats the size in the largest binary unit that divides it
// exactly, so that ParseSize(s.String()) == s.
func (s Size) String() string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"P", 1 << 50}, {"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if s != 0 && int64(s)%u.mult == 0 {
			return strconv.FormatInt(int64(s)/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// Set implements flag.Value so a Size can be a command-line flag.
func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = n
	return nil
}

// Type names the flag's value type in help output.
func (*Size) Type() string { return "size" }

// MarshalText writes the size as its canonical string.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText accepts anything ParseSize accepts.
func (s *Size) UnmarshalText(b []byte) error { return s.Set(string(b)) }

// Duration is a time span. It parses Go durations ("10s", "2m", "1h30m",
// "500ms") and, as fio's runtime= and rados bench's SECONDS do, a bare
// number as seconds.
type Duration time.Duration

// ParseDuration parses "10s", "2m", "1h", "250ms" or "10" (seconds). Negative
// durations are an error.
func ParseDuration(s string) (Duration, error) {
	t := strings.TrimSpace(s)
	if n, err := strconv.ParseFloat(t, 64); err == nil && t != "" {
		if n < 0 {
			return 0, fmt.Errorf("invalid duration %q: negative", s)
		}
		// NaN and numbers past time.Duration's 292 years have no duration.
		if ns := n * float64(time.Second); math.IsNaN(ns) || ns >= math.MaxInt64 {
			return 0, fmt.Errorf("invalid duration %q: out of range", s)
		}
		return Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (want e.g. 10s, 2m, 1h or a number of seconds)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("invalid duration %q: negative", s)
	}
	return Duration(d), nil
}

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats like time.Duration ("10s", "2m0s"), and zero as "0": the
// flag package shows no default for "0", and zero means "not set".
func (d Duration) String() string {
	if d == 0 {
		return "0"
	}
	return time.Duration(d).String()
}

// Set implements flag.Value.
func (d *Duration) Set(v string) error {
	n, err := ParseDuration(v)
	if err != nil {
		return err
	}
	*d = n
	return nil
}

// Type names the flag's value type in help output.
func (*Duration) Type() string { return "duration" }

// MarshalText writes the duration as time.Duration prints it.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText accepts anything ParseDuration accepts.
func (d *Duration) UnmarshalText(b []byte) error { return d.Set(string(b)) }
