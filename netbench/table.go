package netbench

import (
	"fmt"
	"io"
	"strings"

	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result/netresult"
)

// unit formats n as iperf3's adaptive units do: bytes in powers of 1024
// ("1.03 GByte"), bits in powers of 1000 ("8.83 Gbit"), three significant
// digits; the caller appends the plural "s".
func unit(n float64, bits bool) string {
	labels, base := []string{"Byte", "KByte", "MByte", "GByte", "TByte"}, 1024.0
	if bits {
		labels, base = []string{"bit", "Kbit", "Mbit", "Gbit", "Tbit"}, 1000.0
	}
	i := 0
	for n >= base && i < len(labels)-1 {
		n /= base
		i++
	}
	switch {
	case n < 9.995:
		return fmt.Sprintf("%4.2f %s", n, labels[i])
	case n < 99.95:
		return fmt.Sprintf("%4.1f %s", n, labels[i])
	}
	return fmt.Sprintf("%4.0f %s", n, labels[i])
}

const separator = "- - - - - - - - - - - - - - - - - - - - - - - - -"

// view prints one end's tables in iperf3's layout.
type view struct {
	w      io.Writer
	server bool
	p      Params
}

// sends says whether this end sends the streams of d.
func (v view) sends(d Direction) bool { return (d == Up) != v.server }

// role is iperf3's bidir column: [TX-C], [RX-S], ...; empty otherwise.
func (v view) role(d Direction) string {
	if v.p.Mode != Bidir {
		return ""
	}
	r := "[RX-"
	if v.sends(d) {
		r = "[TX-"
	}
	if v.server {
		return r + "S]"
	}
	return r + "C]"
}

func (v view) header(retr bool) {
	id := "[ ID]"
	if v.p.Mode == Bidir {
		id = "[ ID][Role]"
	}
	line := id + " Interval           Transfer     Bitrate"
	if retr {
		line += "         Retr"
	}
	fmt.Fprintln(v.w, line)
}

// row prints one line: retr < 0 leaves the Retr column out, and suffix
// ("sender", "receiver") ends summary lines.
func (v view) row(label, role string, start, end float64, bytes, retr int64, suffix string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s %6.2f-%-6.2f sec  %ss  %ss/sec", label, role, start, end,
		unit(float64(bytes), false), unit(bitsPerSec(bytes, end-start), true))
	switch {
	case retr >= 0:
		fmt.Fprintf(&b, "  %3d", retr)
		if suffix != "" {
			b.WriteString("             " + suffix)
		}
	case suffix != "":
		b.WriteString("                  " + suffix)
	}
	fmt.Fprintln(v.w, b.String())
}

func streamLabel(id int) string { return fmt.Sprintf("[%3d]", id) }

// retrOf is what row takes for the Retr column of a stream of d.
func (v view) retrOf(d Direction, n int64) int64 {
	if v.sends(d) {
		return n
	}
	return -1
}

// interval prints one interval: a line per stream and, with several
// streams, a [SUM] line per direction. As iperf3, it leaves out a final
// interval shorter than a tenth of a second (the streams draining after
// the stop): its rate is noise, and the summary counts its bytes.
func (v view) interval(iv Interval) {
	if iv.End-iv.Start < 0.1 {
		return
	}
	for _, d := range v.p.Directions() {
		for _, s := range iv.Streams {
			if s.Dir == d {
				v.row(streamLabel(s.ID), v.role(d), iv.Start, iv.End, s.Bytes, v.retrOf(d, s.Retransmits), "")
			}
		}
		if sum := iv.Up; v.p.Streams > 1 {
			if d == Down {
				sum = iv.Down
			}
			v.row("[SUM]", v.role(d), iv.Start, iv.End, sum.Bytes, v.retrOf(d, sum.Retransmits), "")
		}
	}
	if v.p.Streams > 1 || v.p.Mode == Bidir {
		fmt.Fprintln(v.w, separator)
	}
}

// ownSummary is the server's summary: its own count of each stream.
func (v view) ownSummary(counts []streamCount) {
	fmt.Fprintln(v.w, separator)
	v.header(true)
	for _, d := range v.p.Directions() {
		suffix := "receiver"
		if v.sends(d) {
			suffix = "sender"
		}
		var sum netresult.Count
		for _, c := range counts {
			if c.Dir == d {
				v.row(streamLabel(c.ID), v.role(d), 0, c.Count.Seconds, c.Count.Bytes, v.retrOf(d, c.Count.Retransmits), suffix)
				sum = addCount(sum, c.Count)
			}
		}
		if v.p.Streams > 1 {
			v.row("[SUM]", v.role(d), 0, sum.Seconds, sum.Bytes, v.retrOf(d, sum.Retransmits), suffix)
		}
	}
}

// addCount adds c to sum: bytes and retransmits add up, the time is the
// longest.
func addCount(sum, c netresult.Count) netresult.Count {
	sum.Bytes += c.Bytes
	sum.Retransmits += c.Retransmits
	sum.Seconds = max(sum.Seconds, c.Seconds)
	sum.BitsPerSec = bitsPerSec(sum.Bytes, sum.Seconds)
	return sum
}

// Summary prints r as iperf3 ends a test, a sender and a receiver line per
// stream (and per direction with several streams), then the round-trip
// latency.
func Summary(w io.Writer, r *Result) {
	v := view{w: w, p: r.Params}
	if r.Up != nil || r.Down != nil {
		fmt.Fprintln(w, separator)
		v.header(true)
	}
	for _, d := range r.Params.Directions() {
		t := r.Up
		if d == Down {
			t = r.Down
		}
		if t == nil {
			continue
		}
		for _, s := range r.Streams {
			if s.Dir == d {
				v.row(streamLabel(s.ID), v.role(d), 0, s.Sender.Seconds, s.Sender.Bytes, s.Sender.Retransmits, "sender")
				v.row(streamLabel(s.ID), v.role(d), 0, s.Receiver.Seconds, s.Receiver.Bytes, -1, "receiver")
			}
		}
		if r.Params.Streams > 1 {
			v.row("[SUM]", v.role(d), 0, t.Sender.Seconds, t.Sender.Bytes, t.Sender.Retransmits, "sender")
			v.row("[SUM]", v.role(d), 0, t.Receiver.Seconds, t.Receiver.Bytes, -1, "receiver")
		}
	}
	if r.RTT != nil {
		rttLine(w, r.RTT)
	}
	if r.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: the figures cover the time before the test was stopped")
	}
}

// rttLine prints the ping-pong phase's latency.
func rttLine(w io.Writer, r *netresult.RTT) {
	l := r.Latency
	p := func(q float64) string { return report.Latency(float64(l.Percentiles.At(q))) }
	fmt.Fprintf(w, "rtt: %d round trips of %d bytes in %.2f s: min %s avg %s p50 %s p90 %s p99 %s p99.9 %s max %s\n",
		r.RoundTrips, r.MessageBytes, r.Seconds, report.Latency(float64(l.MinNs)), report.Latency(l.MeanNs),
		p(50), p(90), p(99), p(99.9), report.Latency(float64(l.MaxNs)))
}
