package cephtext

import (
	"fmt"
	"io"
	"time"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
)

// RadosProgress prints rados bench's per-second table, column for column:
// sec, Cur ops, started, finished, avg MB/s, cur MB/s, last lat(s), avg
// lat(s), with a min/max/avg latency line and the header again every 20
// rows. MB/s is rados bench's: 2^20 bytes per second. Not safe for
// concurrent use.
type RadosProgress struct {
	w        io.Writer
	opSize   int64
	rows     int
	finished int64
	latSum   float64 // seconds
	min, max float64
}

const radosHeader = "  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)\n"

// NewRadosProgress prints the header and the second-0 row and returns the
// printer of the rows that follow.
func NewRadosProgress(w io.Writer, opSize int64) *RadosProgress {
	fmt.Fprint(w, radosHeader)
	fmt.Fprintf(w, "%5d %7d %9d %9d %9d %9d %11s %11d\n", 0, 0, 0, 0, 0, 0, "-", 0)
	return &RadosProgress{w: w, opSize: opSize, min: -1}
}

// Tick prints one second's row; a short final interval gets none.
func (p *RadosProgress) Tick(t metrics.Tick) {
	if t.Short {
		return
	}
	p.rows++
	if p.rows%20 == 0 {
		fmt.Fprintf(p.w, "%s min lat: %s max lat: %s avg lat: %s\n",
			time.Now().Format("2006-01-02T15:04:05.000000-0700"), report.StreamFloat(max(p.min, 0)), report.StreamFloat(p.max), report.StreamFloat(p.avg()))
		fmt.Fprint(p.w, radosHeader)
	}
	var ops int64
	var last int64
	for _, k := range t.Second.Kinds {
		ops += k.Ops
		p.latSum += k.MeanNs * float64(k.Ops) / 1e9
		last = max(last, k.LastNs)
		if k.Ops > 0 {
			if p.min < 0 || float64(minLat(k))/1e9 < p.min {
				p.min = float64(minLat(k)) / 1e9
			}
			p.max = max(p.max, float64(k.MaxNs)/1e9)
		}
	}
	p.finished += ops
	avgBW := float64(p.finished*p.opSize) / (1 << 20) / t.Second.T
	cur, lastLat := "0", "-"
	if ops > 0 {
		cur = report.StreamFloat(float64(ops*p.opSize) / (1 << 20) / t.Second.Dur)
		lastLat = report.StreamFloat(float64(last) / 1e9)
	}
	fmt.Fprintf(p.w, "%5.0f %7d %9d %9d %9s %9s %11s %11s\n",
		t.Second.T, t.InFlight, t.Started, t.Finished, report.StreamFloat(avgBW), cur, lastLat, report.StreamFloat(p.avg()))
}

// minLat approximates a second's fastest op by its lowest kept percentile;
// the exact minimum is in the run's summary.
func minLat(k metrics.KindSecond) int64 {
	if len(k.Percentiles) > 0 {
		return k.Percentiles[0].Ns
	}
	return k.MaxNs
}

func (p *RadosProgress) avg() float64 {
	if p.finished == 0 {
		return 0
	}
	return p.latSum / float64(p.finished)
}

// RadosSummary prints rados bench's summary of a write ("write") or read
// ("seq", "rand") step, line for line, then what rados bench lacks: the
// latency percentiles and where the JSON result is.
func RadosSummary(w io.Writer, r *result.Result, kind string) {
	s := r.Ops[kind]
	bs := int64(r.Spec.BlockSize)
	secs := r.ElapsedSeconds
	mbps := func(bps float64) string { return report.StreamFloat(bps / (1 << 20)) }
	lat := func(ns float64) string { return report.StreamFloat(ns / 1e9) }
	if kind == "write" {
		fmt.Fprintf(w, "Total time run:         %s\n", report.StreamFloat(secs))
		fmt.Fprintf(w, "Total writes made:      %d\n", s.Ops)
		fmt.Fprintf(w, "Write size:             %d\n", bs)
		fmt.Fprintf(w, "Object size:            %d\n", int64(r.Spec.EffectiveObjectSize()))
		fmt.Fprintf(w, "Bandwidth (MB/sec):     %s\n", mbps(s.BandwidthBps.Mean))
		fmt.Fprintf(w, "Stddev Bandwidth:       %s\n", mbps(s.BandwidthBps.Stddev))
		fmt.Fprintf(w, "Max bandwidth (MB/sec): %s\n", mbps(s.BandwidthBps.Max))
		fmt.Fprintf(w, "Min bandwidth (MB/sec): %s\n", mbps(s.BandwidthBps.Min))
		fmt.Fprintf(w, "Average IOPS:           %d\n", int64(s.IOPS.Mean))
		fmt.Fprintf(w, "Stddev IOPS:            %s\n", report.StreamFloat(s.IOPS.Stddev))
		fmt.Fprintf(w, "Max IOPS:               %d\n", int64(s.IOPS.Max))
		fmt.Fprintf(w, "Min IOPS:               %d\n", int64(s.IOPS.Min))
		fmt.Fprintf(w, "Average Latency(s):     %s\n", lat(s.Latency.MeanNs))
		fmt.Fprintf(w, "Stddev Latency(s):      %s\n", lat(s.Latency.StddevNs))
		fmt.Fprintf(w, "Max latency(s):         %s\n", lat(float64(s.Latency.MaxNs)))
		fmt.Fprintf(w, "Min latency(s):         %s\n", lat(float64(s.Latency.MinNs)))
	} else {
		fmt.Fprintf(w, "Total time run:       %s\n", report.StreamFloat(secs))
		fmt.Fprintf(w, "Total reads made:     %d\n", s.Ops)
		fmt.Fprintf(w, "Read size:            %d\n", bs)
		fmt.Fprintf(w, "Object size:          %d\n", int64(r.Spec.EffectiveObjectSize()))
		fmt.Fprintf(w, "Bandwidth (MB/sec):   %s\n", mbps(s.BandwidthBps.Mean))
		fmt.Fprintf(w, "Average IOPS:         %d\n", int64(s.IOPS.Mean))
		fmt.Fprintf(w, "Stddev IOPS:          %s\n", report.StreamFloat(s.IOPS.Stddev))
		fmt.Fprintf(w, "Max IOPS:             %d\n", int64(s.IOPS.Max))
		fmt.Fprintf(w, "Min IOPS:             %d\n", int64(s.IOPS.Min))
		fmt.Fprintf(w, "Average Latency(s):   %s\n", lat(s.Latency.MeanNs))
		fmt.Fprintf(w, "Max latency(s):       %s\n", lat(float64(s.Latency.MaxNs)))
		fmt.Fprintf(w, "Min latency(s):       %s\n", lat(float64(s.Latency.MinNs)))
	}
	p := s.Latency.Percentiles
	fmt.Fprintf(w, "Latency percentiles(s): p50 %s p90 %s p99 %s p99.9 %s p99.99 %s\n",
		lat(float64(p.At(50))), lat(float64(p.At(90))), lat(float64(p.At(99))), lat(float64(p.At(99.9))), lat(float64(p.At(99.99))))
	if s.Errors > 0 {
		fmt.Fprintf(w, "Errors:                 %d (%s)\n", s.Errors, report.ErrorList(r.Errors))
	}
}

// RadosJSON is rados bench's JSON output for a step, every value a string
// as rados bench writes them, plus the percentiles and the per-second
// series under the names rados bench uses.
func RadosJSON(r *result.Result, kind string, concurrent int, prefix string) map[string]any {
	s := r.Ops[kind]
	bs := int64(r.Spec.BlockSize)
	f := func(v float64) string { return fmt.Sprintf("%f", v) }
	d := func(v int64) string { return fmt.Sprintf("%d", v) }
	out := map[string]any{
		"object_size":     d(int64(r.Spec.EffectiveObjectSize())),
		"total_time_run":  f(r.ElapsedSeconds),
		"bandwidth":       f(s.BandwidthBps.Mean / (1 << 20)),
		"average_iops":    d(int64(s.IOPS.Mean)),
		"stddev_iops":     f(s.IOPS.Stddev),
		"max_iops":        d(int64(s.IOPS.Max)),
		"min_iops":        d(int64(s.IOPS.Min)),
		"average_latency": f(s.Latency.MeanNs / 1e9),
		"max_latency":     f(float64(s.Latency.MaxNs) / 1e9),
		"min_latency":     f(float64(s.Latency.MinNs) / 1e9),
	}
	if kind == "write" {
		out["concurrent_ios"] = d(int64(concurrent))
		out["op_size"] = d(bs)
		out["seconds_to_run"] = d(int64(r.Spec.Duration.D().Seconds()))
		out["max_objects"] = d(r.Spec.Objects)
		out["object_prefix"] = prefix
		out["total_writes_made"] = d(s.Ops)
		out["write_size"] = d(bs)
		out["stddev_bandwidth"] = f(s.BandwidthBps.Stddev / (1 << 20))
		out["max_bandwidth"] = f(s.BandwidthBps.Max / (1 << 20))
		out["min_bandwidth"] = f(s.BandwidthBps.Min / (1 << 20))
		out["stddev_latency"] = f(s.Latency.StddevNs / 1e9)
	} else {
		out["total_reads_made"] = d(s.Ops)
		out["read_size"] = d(bs)
	}
	var datas []map[string]string
	var finished int64
	var latSum float64
	for _, sec := range r.Series {
		k := sec.Kinds[kind]
		finished += k.Ops
		latSum += k.MeanNs * float64(k.Ops) / 1e9
		avgLat := 0.0
		if finished > 0 {
			avgLat = latSum / float64(finished)
		}
		datas = append(datas, map[string]string{
			"sec": fmt.Sprintf("%.0f", sec.T), "finished": d(finished),
			"avg_bw": f(float64(finished*bs) / (1 << 20) / sec.T), "cur_bw": f(float64(k.Bytes) / (1 << 20) / sec.Dur),
			"last_lat": f(float64(k.LastNs) / 1e9), "avg_lat": f(avgLat),
		})
	}
	out["datas"] = datas
	pcts := map[string]string{}
	for _, p := range s.Latency.Percentiles {
		pcts[fmt.Sprintf("%g", p.P)] = f(float64(p.Ns) / 1e9)
	}
	out["latency_percentiles"] = pcts
	return out
}
