package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// Heading prints the line that introduces a step: what runs, where, how
// concurrently and for how long.
func Heading(w io.Writer, name string, wl *spec.Workload) {
	var bounds []string
	if wl.Duration > 0 {
		bounds = append(bounds, wl.Duration.String())
	}
	if wl.TotalOps > 0 {
		bounds = append(bounds, fmt.Sprintf("%d ops", wl.TotalOps))
	}
	if wl.TotalBytes > 0 {
		bounds = append(bounds, wl.TotalBytes.String())
	}
	sizes := wl.BlockSize.String()
	if wl.BlockSizes != "" {
		sizes = string(wl.BlockSizes)
	}
	fmt.Fprintf(w, "== %s: %s %s %s on %s, workers %d x qd %d, up to %s\n",
		name, sizes, wl.Pattern, mix(wl.ReadPercent), wl.Target, wl.Workers, wl.QueueDepth,
		strings.Join(bounds, " or "))
}

// Summary prints a step's summary: one line per op kind with rates and
// latency percentiles, then rate spread, CPU, errors, the pacer's lag, a
// queue that was not kept full (result.QueueShort), notes, and what
// a time-to-first-byte kind (get-ttfb) measures.
func Summary(w io.Writer, r *result.Result) {
	how := "stopped at its " + r.StopReason + " bound"
	switch r.StopReason {
	case result.StopInterrupted:
		how = "INTERRUPTED"
	case result.StopExhausted:
		how = "stopped: no more objects to write or read"
	case result.StopMinRate:
		how = "FAILED: below its minimum rate"
		if r.BelowMinRate != nil {
			how = "FAILED: " + r.BelowMinRate.Error()
		}
	case result.StopSteady:
		how = "stopped: the rate held steady"
		if ss := r.SteadyState; ss != nil {
			how += fmt.Sprintf(" (%s over %s)", ss.Criterion, ss.Criterion.Window)
		}
	case result.StopError:
		how = "stopped at its first failed op (" + r.FirstError + ")"
	case result.StopTerminated:
		how = "stopped early by its caller"
	}
	fmt.Fprintf(w, "%s: %.1fs measured, %s\n", r.Name, r.ElapsedSeconds, how)
	for _, kind := range r.Kinds() {
		s := r.Ops[kind]
		l := s.Latency
		fmt.Fprintf(w, "  %-5s %d ops, %s IOPS, %s MiB/s, lat avg %s p50 %s p99 %s p99.9 %s max %s\n",
			kind, s.Ops, IOPS(s.IOPS.Mean), MiBps(s.BandwidthBps.Mean), Latency(l.MeanNs),
			Latency(float64(l.Percentiles.At(50))), Latency(float64(l.Percentiles.At(99))),
			Latency(float64(l.Percentiles.At(99.9))), Latency(float64(l.MaxNs)))
		if s.IOPS.Samples > 1 {
			fmt.Fprintf(w, "        per second: IOPS min %s max %s stddev %s; MiB/s min %s max %s stddev %s\n",
				IOPS(s.IOPS.Min), IOPS(s.IOPS.Max), IOPS(s.IOPS.Stddev),
				MiBps(s.BandwidthBps.Min), MiBps(s.BandwidthBps.Max), MiBps(s.BandwidthBps.Stddev))
		}
	}
	fmt.Fprintf(w, "  cpu %.1f%% (user %.2fs, sys %.2fs), errors: %s", r.CPU.Percent, r.CPU.UserSeconds, r.CPU.SystemSeconds, ErrorList(r.Errors))
	if r.Missed+r.Late > 0 {
		fmt.Fprintf(w, ", paced ops late %d, missed %d", r.Late, r.Missed)
	}
	fmt.Fprintln(w)
	if p := r.PacerLag; p != nil {
		fmt.Fprintf(w, "  pacer: %d ops waited for their time, issued late by p50 %s p99 %s max %s",
			p.Ops, Latency(float64(p.Lag.Percentiles.At(50))), Latency(float64(p.Lag.Percentiles.At(99))), Latency(float64(p.Lag.MaxNs)))
		if p.Lagged() {
			fmt.Fprintf(w, ": over %s at p99, the client could not keep the schedule, and the latencies include it", Latency(float64(result.LagLimit)))
		}
		fmt.Fprintln(w)
	}
	if held, short := r.QueueShort(); short {
		fmt.Fprintf(w, "  queue held %.1f of its %d slots on average (%.0f%%): the client, the engine or the target could not keep it full\n",
			r.MeanInFlight, r.Slots, 100*held)
	}
	for i, win := range r.Windows {
		what := "before the first loss"
		if i > 0 {
			what = win.Note
		}
		fmt.Fprintf(w, "  %s, %.1fs to %.1fs on %d hosts:", what, win.FromSeconds, win.ToSeconds, win.Hosts)
		for _, kind := range slices.Sorted(maps.Keys(win.Ops)) {
			wr := win.Ops[kind]
			fmt.Fprintf(w, " %s %s IOPS %s MiB/s;", kind, IOPS(wr.IOPS.Mean), MiBps(wr.BandwidthBps.Mean))
		}
		fmt.Fprintln(w)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	ClusterLines(w, r, "  ")
	for _, kind := range r.Kinds() {
		// A time-to-first-byte kind is its ops' latency again, cut short.
		if base, ok := strings.CutSuffix(kind, "-ttfb"); ok {
			fmt.Fprintf(w, "  (%s: from each %s's start to the first byte of its response; %s: to its last byte)\n", kind, base, base)
		}
	}
}

// ClusterLines prints what the cluster did during r's run, each line
// after indent: whether it was at rest, with what unsettled it, and what
// the watch could not read, and what --quiesce did. Nothing for a run not
// watched nor quiesced.
func ClusterLines(w io.Writer, r *result.Result, indent string) {
	if r.Cluster == nil {
		return
	}
	if q := r.Cluster.Quiesced; q != nil {
		fmt.Fprintf(w, "%s%s\n", indent, q.Line())
	}
	if r.Cluster.During == nil {
		return
	}
	for _, l := range r.Cluster.During.Lines() {
		fmt.Fprintf(w, "%s%s\n", indent, l)
	}
}

// ClusterFields prints what ClusterLines does as "Key: value" lines, the
// key and its colon padded to width, for the peer tools' summaries: CBT
// splits each line of rados bench's after its first at its one colon, so
// a colon in a value (a health check's message, an error) is written as
// " -" before a space and as "." elsewhere.
func ClusterFields(w io.Writer, r *result.Result, width int) {
	if r.Cluster == nil {
		return
	}
	var fields []cluster.Field
	if q := r.Cluster.Quiesced; q != nil {
		fields = append(fields, q.Field())
	}
	if r.Cluster.During != nil {
		fields = append(fields, r.Cluster.During.Fields()...)
	}
	for _, f := range fields {
		v := strings.ReplaceAll(strings.ReplaceAll(f.Value, ": ", " - "), ":", ".")
		fmt.Fprintf(w, "%-*s %s\n", width, f.Key+":", v)
	}
}

func mix(readPercent int) string {
	switch readPercent {
	case 0:
		return "write"
	case 100:
		return "read"
	}
	return fmt.Sprintf("%d%% read", readPercent)
}

func ErrorList(errs map[string]int64) string {
	if len(errs) == 0 {
		return "none"
	}
	var parts []string
	for k, n := range errs {
		parts = append(parts, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// Column is one column of a table of steps: its heading and its cell for
// one op kind of one result.
type Column struct {
	Heading string
	Cell    func(r *result.Result, s metrics.KindSummary) string
}

// The columns of Table, for tables that add or leave out some.
var (
	ColBlockSize = Column{"BS", func(r *result.Result, _ metrics.KindSummary) string {
		if r.Spec.BlockSizes != "" {
			return string(r.Spec.BlockSizes)
		}
		return r.Spec.BlockSize.String()
	}}
	ColQueueDepth = Column{"QD", func(r *result.Result, _ metrics.KindSummary) string { return strconv.Itoa(r.Spec.QueueDepth) }}
	ColIOPS       = Column{"IOPS", func(_ *result.Result, s metrics.KindSummary) string { return IOPS(s.IOPS.Mean) }}
	ColMiBps      = Column{"MiB/s", func(_ *result.Result, s metrics.KindSummary) string { return MiBps(s.BandwidthBps.Mean) }}
	ColMean       = Column{"AVG LAT", func(_ *result.Result, s metrics.KindSummary) string { return Latency(s.Latency.MeanNs) }}
	ColErrors     = Column{"ERRORS", func(_ *result.Result, s metrics.KindSummary) string { return strconv.FormatInt(s.Errors, 10) }}
)

// ColPercentile is the column of latency percentile p.
func ColPercentile(p float64) Column {
	return Column{"P" + strconv.FormatFloat(p, 'f', -1, 64), func(_ *result.Result, s metrics.KindSummary) string {
		return Latency(float64(s.Latency.Percentiles.At(p)))
	}}
}

// Table prints one row per step and op kind: the figures people copy into
// their reports. An interrupted step's name ends in "*".
func Table(w io.Writer, results []*result.Result) {
	TableOf(w, results, ColBlockSize, ColIOPS, ColMiBps, ColMean, ColPercentile(50), ColPercentile(99), ColPercentile(99.9), ColErrors)
}

// TableOf prints Table's rows (step name, op kind) with the given columns.
func TableOf(w io.Writer, results []*result.Result, cols ...Column) {
	// tabwriter right-aligns every column; padding the names by hand keeps
	// them left-aligned.
	width := len("STEP")
	for _, r := range results {
		width = max(width, len(r.Name)+1)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tOP\t", width, "STEP")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", c.Heading)
	}
	fmt.Fprintln(tw)
	for _, r := range results {
		name := r.Name
		if r.Interrupted {
			name += "*"
		}
		for _, kind := range r.Kinds() {
			fmt.Fprintf(tw, "%-*s\t%s\t", width, name, kind)
			for _, c := range cols {
				fmt.Fprintf(tw, "%s\t", c.Cell(r, r.Ops[kind]))
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
}

// HostLine prints one host's line beneath a merged summary: its label and,
// per op kind, its ops, rates and p99 latency.
func HostLine(w io.Writer, label string, r *result.Result) {
	fmt.Fprintf(w, "  %s:", label)
	for i, kind := range r.Kinds() {
		s := r.Ops[kind]
		if i > 0 {
			fmt.Fprint(w, ";")
		}
		fmt.Fprintf(w, " %s %d ops, %s IOPS, %s MiB/s, p99 %s", kind, s.Ops, IOPS(s.IOPS.Mean), MiBps(s.BandwidthBps.Mean),
			Latency(float64(s.Latency.Percentiles.At(99))))
	}
	fmt.Fprintln(w)
}
