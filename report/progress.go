package report

import (
	"fmt"
	"io"

	"github.com/cephbench/cephbench/metrics"
)

// Progress prints a rados-bench style per-second table: the columns of
// rados bench, then this second's IOPS and p99 latency. It is fed from one
// goroutine (a metrics.Subscriber) and is not safe for concurrent use.
type Progress struct {
	w     io.Writer
	rows  int
	bytes int64
	ops   int64
	latNs float64 // sum of latencies, for the cumulative average
}

// NewProgress prints the table's header to w and returns the printer of
// its rows.
func NewProgress(w io.Writer) *Progress {
	fmt.Fprint(w, progressHeader)
	return &Progress{w: w}
}

const progressHeader = "  sec Cur ops   started  finished  avg MB/s  cur MB/s  cur IOPS  avg lat(s)  p99 lat(s)\n"

// Tick prints one row, and the header again every 20 rows; a short final
// interval gets none.
func (p *Progress) Tick(t metrics.Tick) {
	if t.Short {
		return
	}
	if p.rows > 0 && p.rows%20 == 0 {
		fmt.Fprint(p.w, progressHeader)
	}
	p.rows++
	var ops, bytes int64
	var p99 int64
	for name, k := range t.Second.Kinds {
		if !t.Counted(name) {
			continue
		}
		ops += k.Ops
		bytes += k.Bytes
		p.latNs += k.MeanNs * float64(k.Ops)
		p99 = max(p99, k.Percentiles.At(99))
	}
	p.ops += ops
	p.bytes += bytes
	cur := float64(bytes) / (1 << 20) / t.Second.Dur
	avg := float64(p.bytes) / (1 << 20) / t.Second.T
	avgLat := "-"
	if p.ops > 0 {
		avgLat = StreamFloat(p.latNs / float64(p.ops) / 1e9)
	}
	fmt.Fprintf(p.w, "%5.0f %7d %9d %9d %9s %9s %9s %11s %11s\n",
		t.Second.T, t.InFlight, t.Started, t.Finished, StreamFloat(avg), StreamFloat(cur),
		IOPS(float64(ops)/t.Second.Dur), avgLat, StreamFloat(float64(p99)/1e9))
}

// HostRow prints, beneath the row of a second of a run on many hosts, one
// host's part of it: the host's label, its MB/s (MiB) and IOPS over the
// second's length dur (seconds; the merged row's, so that the hosts' rows
// add up to it) and its own p99 latency of that second (seconds). It is
// labelled, not in columns, to fit under any command's table.
func HostRow(w io.Writer, label string, t metrics.Tick, dur float64) {
	ops, bytes, p99 := counted(t)
	fmt.Fprintf(w, "      %s: cur MB/s %s, cur IOPS %s, p99 lat(s) %s\n", label, StreamFloat(float64(bytes)/(1<<20)/dur),
		IOPS(float64(ops)/dur), StreamFloat(float64(p99)/1e9))
}

// counted is the second's ops and bytes of the kinds that count ops, and
// the highest of their p99 latencies (ns).
func counted(t metrics.Tick) (ops, bytes, p99 int64) {
	for name, k := range t.Second.Kinds {
		if !t.Counted(name) {
			continue
		}
		ops += k.Ops
		bytes += k.Bytes
		p99 = max(p99, k.Percentiles.At(99))
	}
	return ops, bytes, p99
}
