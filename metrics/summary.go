package metrics

import (
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency summarises a latency histogram, in nanoseconds.
type Latency struct {
	MinNs       int64       `json:"min_ns"`
	MaxNs       int64       `json:"max_ns"`
	MeanNs      float64     `json:"mean_ns"`
	StddevNs    float64     `json:"stddev_ns"`
	Percentiles Percentiles `json:"percentiles_ns"`
}

// LatencyOf summarises h with the ReportedPercentiles.
func LatencyOf(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		MinNs: h.Min(), MaxNs: h.Max(), MeanNs: h.Mean(), StddevNs: h.StdDev(),
		Percentiles: percentilesOf(h, ReportedPercentiles),
	}
}

// KindSummary is one op kind's figures over the whole measured period.
type KindSummary struct {
	Ops    int64 `json:"ops"`
	Bytes  int64 `json:"bytes"`
	Errors int64 `json:"errors"`
	// IOPS and BandwidthBps are totals divided by the measured time; their
	// Min, Max and Stddev are over the seconds of the series.
	IOPS         Stats   `json:"iops"`
	BandwidthBps Stats   `json:"bandwidth_bytes_per_sec"`
	Latency      Latency `json:"latency"`
}

// Summary computes kind's summary over elapsed. Intervals shorter than half
// a second (the final partial one) are left out of the per-second min, max
// and stddev, since their rate is noise.
func (c *Collector) Summary(kind int, elapsed time.Duration) KindSummary {
	t := c.total[kind]
	s := KindSummary{Ops: t.ops, Bytes: t.bytes, Errors: t.errors, Latency: LatencyOf(t.hist)}
	var iops, bw []float64
	for _, sec := range c.series {
		if sec.Dur < 0.5 {
			continue
		}
		ks := sec.Kinds[c.names[kind]]
		iops = append(iops, float64(ks.Ops)/sec.Dur)
		bw = append(bw, float64(ks.Bytes)/sec.Dur)
	}
	s.IOPS, s.BandwidthBps = StatsOf(iops), StatsOf(bw)
	if secs := elapsed.Seconds(); secs > 0 {
		s.IOPS.Mean = float64(t.ops) / secs
		s.BandwidthBps.Mean = float64(t.bytes) / secs
	}
	return s
}

// CPU is the process's CPU use over a period.
type CPU struct {
	UserSeconds   float64 `json:"user_seconds"`
	SystemSeconds float64 `json:"system_seconds"`
	// Percent is (user+system)/wall: 100 is one core fully busy.
	Percent float64 `json:"percent"`
}

// CPUTimes returns the process's user and system CPU time so far.
func CPUTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// CPUSince returns the CPU used since (user0, sys0) were read, over wall.
func CPUSince(user0, sys0, wall time.Duration) CPU {
	u, s := CPUTimes()
	c := CPU{UserSeconds: (u - user0).Seconds(), SystemSeconds: (s - sys0).Seconds()}
	if wall > 0 {
		c.Percent = 100 * (c.UserSeconds + c.SystemSeconds) / wall.Seconds()
	}
	return c
}
