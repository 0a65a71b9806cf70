// Package report renders results: the per-second progress table, step
// summaries and the table of all steps.
package report

import (
	"fmt"
	"strconv"
	"time"
)

// Latency formats nanoseconds with a unit that keeps three or four
// significant digits: "850ns", "412.3µs", "3.21ms", "1.024s".
func Latency(ns float64) string {
	switch {
	case ns <= 0:
		return "-"
	case ns < 1e3:
		return fmt.Sprintf("%.0fns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.1fµs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.2fms", ns/1e6)
	}
	return fmt.Sprintf("%.3fs", ns/1e9)
}

// MiBps formats bytes per second in MiB/s (2^20 bytes, what rados bench
// calls MB/s).
func MiBps(bps float64) string { return fmt.Sprintf("%.1f", bps/(1<<20)) }

// IOPS formats an op rate.
func IOPS(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// cg formats like C++ ostream's default (6 significant digits, %g style),
// which is how rados bench prints its tables.
func StreamFloat(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// Seconds formats a duration in seconds the way rados bench does.
func Seconds(d time.Duration) string { return StreamFloat(d.Seconds()) }
