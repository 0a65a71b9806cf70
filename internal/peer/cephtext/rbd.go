package cephtext

import (
	"fmt"
	"io"
	"strconv"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
)

// RBDStart prints rbd bench's first line. ioType is read, write or
// readwrite (with readPercent of reads), pattern "sequential" or "random".
func RBDStart(w io.Writer, ioType string, readPercent int, ioSize int64, threads int, total int64, pattern string) {
	kind := ioType
	if ioType == "readwrite" {
		kind = fmt.Sprintf("readwrite read:write=%d:%d", readPercent, 100-readPercent)
	}
	fmt.Fprintf(w, "bench  type %s io_size %d io_threads %d bytes %d pattern %s\n", kind, ioSize, threads, total, pattern)
}

// rbdWindow is how many seconds rbd bench's OPS/SEC and BYTES/SEC
// average over.
const rbdWindow = 5

// RBDProgress prints rbd bench's per-second table: SEC, OPS (completed so
// far), and OPS/SEC and BYTES/SEC over the last five seconds. Not safe for
// concurrent use.
type RBDProgress struct {
	w      io.Writer
	window []rbdSecond
}

type rbdSecond struct {
	dur        float64
	ops, bytes int64
}

// NewRBDProgress prints the table's header and returns the printer of its
// rows.
func NewRBDProgress(w io.Writer) *RBDProgress {
	fmt.Fprint(w, "  SEC       OPS   OPS/SEC   BYTES/SEC\n")
	return &RBDProgress{w: w}
}

// Tick prints one second's row; a short final interval gets none.
func (p *RBDProgress) Tick(t metrics.Tick) {
	if t.Short {
		return
	}
	sec := rbdSecond{dur: t.Second.Dur}
	for _, k := range t.Second.Kinds {
		sec.ops += k.Ops
		sec.bytes += k.Bytes
	}
	p.window = append(p.window, sec)
	if len(p.window) > rbdWindow {
		p.window = p.window[1:]
	}
	var dur float64
	var ops, bytes int64
	for _, s := range p.window {
		dur += s.dur
		ops += s.ops
		bytes += s.bytes
	}
	if dur <= 0 {
		return
	}
	fmt.Fprintf(p.w, "%5d%10d%10s%10s/s\n", int64(t.Second.T), t.Finished, report.StreamFloat(float64(ops)/dur), byteU(float64(bytes)/dur))
}

// byteU is Ceph's byte_u_t: whole units of 1024, as rbd bench prints
// sizes and rates.
func byteU(v float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	n, i := uint64(max(v, 0)), 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return strconv.FormatUint(n, 10) + " " + units[i]
}

// RBDSummary prints rbd bench's closing lines (elapsed, ops, ops/sec,
// bytes/sec, and read_ and write_ lines for a mixed run), then what rbd
// bench lacks: latency percentiles per op kind, and errors.
func RBDSummary(w io.Writer, r *result.Result) {
	secs := r.ElapsedSeconds
	rate := func(n int64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs
	}
	read, write := r.Ops["read"], r.Ops["write"]
	ops, bytes := read.Ops+write.Ops, read.Bytes+write.Bytes
	fmt.Fprintf(w, "elapsed: %d   ops: %d   ops/sec: %s   bytes/sec: %s/s\n", int64(secs), ops, report.StreamFloat(rate(ops)), byteU(rate(bytes)))
	mixed := read.Ops > 0 && write.Ops > 0
	if mixed {
		fmt.Fprintf(w, "read_ops: %d   read_ops/sec: %s   read_bytes/sec: %s/s\n", read.Ops, report.StreamFloat(rate(read.Ops)), byteU(rate(read.Bytes)))
		fmt.Fprintf(w, "write_ops: %d   write_ops/sec: %s   write_bytes/sec: %s/s\n", write.Ops, report.StreamFloat(rate(write.Ops)), byteU(rate(write.Bytes)))
	}
	for _, kind := range []string{"read", "write"} {
		s := r.Ops[kind]
		if s.Ops == 0 {
			continue
		}
		prefix := ""
		if mixed {
			prefix = kind + "_"
		}
		fmt.Fprintf(w, "%slatency(ms): %s\n", prefix, rbdLatency(s.Latency))
	}
	if errs := read.Errors + write.Errors; errs > 0 {
		fmt.Fprintf(w, "errors: %d (%s)\n", errs, report.ErrorList(r.Errors))
	}
}

func rbdLatency(l metrics.Latency) string {
	ms := func(ns float64) string { return report.StreamFloat(ns / 1e6) }
	p := l.Percentiles
	return fmt.Sprintf("min %s avg %s p50 %s p90 %s p99 %s p99.9 %s p99.99 %s max %s",
		ms(float64(l.MinNs)), ms(l.MeanNs), ms(float64(p.At(50))), ms(float64(p.At(90))), ms(float64(p.At(99))),
		ms(float64(p.At(99.9))), ms(float64(p.At(99.99))), ms(float64(l.MaxNs)))
}
