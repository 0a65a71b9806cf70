package cluster

import (
	"fmt"
	"math"
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// SlowOSD is an OSD whose latency, by one measure, stood out from the
// other OSDs' during a run.
type SlowOSD struct {
	ID int `json:"id"`
	// Measure is "queue latency" (the wait before an op is dequeued)
	// or "commit latency" (the object store's, from `osd perf`).
	Measure string `json:"measure"`
	// P99Ms is the 99th percentile of the OSD's seconds (one value a
	// sample), in milliseconds; OthersMs is the median of the other
	// OSDs' P99Ms.
	P99Ms    float64 `json:"p99_ms"`
	OthersMs float64 `json:"others_p99_ms"`
	// Seconds counts the samples that had a value for the OSD.
	Seconds int `json:"seconds"`
}

// String says it as a summary line does: "slow OSD osd.1: queue latency
// p99 148 ms over 10 s, against 0.74 ms for the other OSDs (median)".
func (o SlowOSD) String() string {
	return fmt.Sprintf("slow OSD osd.%d: %s", o.ID, o.measured())
}

// measured is how the OSD stood out: "queue latency p99 148 ms over 10 s,
// against 0.74 ms for the other OSDs (median)".
func (o SlowOSD) measured() string {
	return fmt.Sprintf("%s p99 %s over %d s, against %s for the other OSDs (median)",
		o.Measure, millis(o.P99Ms), o.Seconds, millis(o.OthersMs))
}

func millis(ms float64) string {
	switch {
	case ms >= 10:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

// The slow OSD rule: an OSD's p99 is above slowFactor times the others'
// median p99 and at least slowMarginMs above it, and its median second
// is above slowFactor times the others' median too, so that a healthy
// OSD's one bad second on a busy cluster does not name it. An OSD needs
// minSlowSeconds seconds to be judged, and there must be minOSDsCompared
// OSDs with values: with two, the other is no majority to stand out
// from.
const (
	slowFactor      = 3
	slowMarginMs    = 5
	minSlowSeconds  = 3
	minOSDsCompared = 3
)

// slowBy applies the rule to each OSD's seconds of one measure, in
// hists (see latencyDigits), and returns the slow OSDs by id.
func slowBy(measure string, hists map[int]*hdr.PackedHistogram) []SlowOSD {
	type osd struct {
		id       int
		p99, med float64
		n        int
	}
	var osds []osd
	for id, h := range hists {
		if n := int(h.TotalCount()); n >= minSlowSeconds {
			at := func(i int) float64 { return msAtRank(h, i) }
			osds = append(osds, osd{id, percentile(n, at, 0.99), percentile(n, at, 0.5), n})
		}
	}
	if len(osds) < minOSDsCompared {
		return nil
	}
	sort.Slice(osds, func(i, j int) bool { return osds[i].id < osds[j].id })
	var slow []SlowOSD
	for i, o := range osds {
		var p99s, meds []float64
		for j, other := range osds {
			if j != i {
				p99s, meds = append(p99s, other.p99), append(meds, other.med)
			}
		}
		othersP99, othersMed := percentileOf(p99s, 0.5), percentileOf(meds, 0.5)
		if o.p99 > slowFactor*othersP99 && o.p99-othersP99 >= slowMarginMs && o.med > slowFactor*othersMed {
			slow = append(slow, SlowOSD{ID: o.id, Measure: measure, P99Ms: round3(o.p99), OthersMs: round3(othersP99), Seconds: o.n})
		}
	}
	return slow
}

// percentile is the nearest-rank percentile p (0 to 1) of n values, n >
// 0, whose value of rank i (from 0, ascending) is at(i); the median of
// an even count is the mean of the two in the middle.
func percentile(n int, at func(i int) float64, p float64) float64 {
	if p == 0.5 && n%2 == 0 {
		return (at(n/2-1) + at(n/2)) / 2
	}
	return at(max(int(math.Ceil(p*float64(n)))-1, 0))
}

// percentileOf is percentile of values, which it sorts.
func percentileOf(values []float64, p float64) float64 {
	sort.Float64s(values)
	return percentile(len(values), func(i int) float64 { return values[i] }, p)
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
