package cephtext

import (
	"fmt"
	"io"
	"strconv"

	"github.com/cephbench/cephbench/metrics"
)

// LoadGenProgress prints rados load-gen's line a second, "N: throughput=X
// MB/sec pending data=Y": the throughput completed since the start (MB/s
// of 2^20 bytes, three significant digits) and the bytes in flight. A
// final interval shorter than a second goes into the run's totals without
// a line, as in rados. Not safe for concurrent use.
type LoadGenProgress struct {
	w         io.Writer
	completed int64 // bytes
}

// NewLoadGenProgress returns the printer of load-gen's lines to w.
func NewLoadGenProgress(w io.Writer) *LoadGenProgress { return &LoadGenProgress{w: w} }

// Tick prints one second's line.
func (p *LoadGenProgress) Tick(t metrics.Tick) {
	for _, k := range t.Second.Kinds {
		p.completed += k.Bytes
	}
	if t.Second.Dur < 1 {
		return
	}
	rate := float64(p.completed) / (1 << 20) / t.Second.T
	fmt.Fprintf(p.w, "%5d: throughput=%sMB/sec pending data=%d\n", int(t.Second.T), strconv.FormatFloat(rate, 'g', 3, 64), t.InFlightBytes)
}
