package report

import (
	"fmt"
	"io"
	"time"

	"github.com/cephbench/cephbench/metrics"
)

// Live is the one-line progress display of a step on a terminal: elapsed
// and remaining time, this second's and the average bandwidth and IOPS,
// and this second's p99 latency, redrawn in place every second. It is fed
// from one goroutine (a metrics.Subscriber) and is not safe for
// concurrent use.
type Live struct {
	w     io.Writer
	label string
	// total is the step's measured duration; zero when it is bounded by
	// bytes or ops, and the remaining time is unknown.
	total      time.Duration
	bytes, ops int64
	drawn      bool
}

// NewLive returns the display of the step called label, bounded by total
// (zero: unknown).
func NewLive(w io.Writer, label string, total time.Duration) *Live {
	return &Live{w: w, label: label, total: total}
}

// Tick redraws the line with the second that ended; a short final
// interval leaves it as it is.
func (l *Live) Tick(t metrics.Tick) {
	if t.Short {
		return
	}
	ops, bytes, p99 := counted(t)
	l.ops += ops
	l.bytes += bytes
	elapsed := time.Duration(t.Second.T * float64(time.Second)).Round(time.Second)
	clock := elapsed.String()
	if l.total > 0 {
		clock += " of " + l.total.String() + ", " + max(l.total-elapsed, 0).String() + " left"
	}
	fmt.Fprintf(l.w, "\r\x1b[K%s  %s  now %s MiB/s %s IOPS p99 %s  avg %s MiB/s %s IOPS",
		l.label, clock,
		MiBps(float64(bytes)/t.Second.Dur), IOPS(float64(ops)/t.Second.Dur), Latency(float64(p99)),
		MiBps(float64(l.bytes)/t.Second.T), IOPS(float64(l.ops)/t.Second.T))
	l.drawn = true
}

// Clear erases the line, so that what is printed next starts clean.
func (l *Live) Clear() {
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.drawn = false
	}
}
