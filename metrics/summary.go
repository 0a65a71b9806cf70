package metrics

import (
	"maps"
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
	// OpsBySize counts the ops by their bytes, in runs whose op sizes
	// vary (fio's bssplit and bsrange); nil in the others.
	OpsBySize map[int64]int64 `json:"ops_by_size,omitempty"`
}

// Summary computes kind's summary over elapsed. Intervals shorter than half
// a second (the final partial one) are left out of the per-second min, max
// and stddev, since their rate is noise.
func (c *Collector) Summary(kind int, elapsed time.Duration) KindSummary {
	t := c.total[kind]
	s := KindSummary{Ops: t.ops, Bytes: t.bytes, Errors: t.errors, Latency: LatencyOf(t.hist), OpsBySize: maps.Clone(t.sizes)}
	s.IOPS, s.BandwidthBps = c.rates[kind].iops.stats(), c.rates[kind].bw.stats()
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
	// WallSeconds is the period the figures cover.
	WallSeconds float64 `json:"wall_seconds,omitempty"`
	// ContextSwitches (voluntary and involuntary), MajorFaults and
	// MinorFaults are the process's over the period, as getrusage counts
	// them. CPUSince does not read them: they are zero in its figures.
	ContextSwitches int64 `json:"context_switches,omitempty"`
	MajorFaults     int64 `json:"major_faults,omitempty"`
	MinorFaults     int64 `json:"minor_faults,omitempty"`
}

// Usage is the process's resource use so far; two readings make a CPU.
type Usage struct {
	User, System    time.Duration
	ContextSwitches int64
	MajorFaults     int64
	MinorFaults     int64
}

// ReadUsage reads the process's resource use so far; a reading that fails
// is zero.
func ReadUsage() Usage {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return Usage{}
	}
	return Usage{
		User: time.Duration(ru.Utime.Nano()), System: time.Duration(ru.Stime.Nano()),
		ContextSwitches: int64(ru.Nvcsw) + int64(ru.Nivcsw), MajorFaults: int64(ru.Majflt), MinorFaults: int64(ru.Minflt),
	}
}

// Since returns the CPU used from start to u, a later reading, over wall.
func (u Usage) Since(start Usage, wall time.Duration) CPU {
	c := CPU{
		UserSeconds: (u.User - start.User).Seconds(), SystemSeconds: (u.System - start.System).Seconds(),
		WallSeconds:     wall.Seconds(),
		ContextSwitches: u.ContextSwitches - start.ContextSwitches,
		MajorFaults:     u.MajorFaults - start.MajorFaults,
		MinorFaults:     u.MinorFaults - start.MinorFaults,
	}
	if wall > 0 {
		c.Percent = 100 * (c.UserSeconds + c.SystemSeconds) / wall.Seconds()
	}
	return c
}

// CPUTimes returns the process's user and system CPU time so far.
func CPUTimes() (user, sys time.Duration) {
	u := ReadUsage()
	return u.User, u.System
}

// CPUSince returns the CPU used since (user0, sys0) were read, over wall.
func CPUSince(user0, sys0, wall time.Duration) CPU {
	c := ReadUsage().Since(Usage{User: user0, System: sys0}, wall)
	c.ContextSwitches, c.MajorFaults, c.MinorFaults = 0, 0, 0
	return c
}
