package multihost

import (
	"slices"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/metrics"
)

// MergeTicks is one second of the whole run from the hosts' ticks of that
// second: counts added, histograms added (so its percentiles are those of
// every op of every host, never averages), in-flight ops added. Its time
// and length are the first tick's; a kind is Derived if any host's is.
// The histograms are new: the result does not alias the ticks'.
func MergeTicks(ticks []metrics.Tick) metrics.Tick {
	if len(ticks) == 0 {
		return metrics.Tick{}
	}
	out := metrics.Tick{
		Second:     metrics.Second{T: ticks[0].T, Dur: ticks[0].Dur, Kinds: map[string]metrics.KindSecond{}},
		Histograms: map[string]*hdr.Histogram{},
	}
	last := map[string]int64{}
	counts := map[string]metrics.KindSecond{}
	for _, t := range ticks {
		out.Started += t.Started
		out.Finished += t.Finished
		out.InFlight += t.InFlight
		out.InFlightBytes += t.InFlightBytes
		out.Short = out.Short || t.Short
		for _, d := range t.Derived {
			if !slices.Contains(out.Derived, d) {
				out.Derived = append(out.Derived, d)
			}
		}
		for kind, ks := range t.Kinds {
			c := counts[kind]
			c.Ops += ks.Ops
			c.Bytes += ks.Bytes
			c.Errors += ks.Errors
			counts[kind] = c
			last[kind] = ks.LastNs
			if h := t.Histograms[kind]; h != nil {
				if out.Histograms[kind] == nil {
					out.Histograms[kind] = metrics.NewHistogram()
				}
				out.Histograms[kind].Merge(h)
			}
		}
	}
	for kind, c := range counts {
		h := out.Histograms[kind]
		if h == nil {
			h = metrics.NewHistogram()
		}
		out.Kinds[kind] = metrics.NewKindSecond(c.Ops, c.Bytes, c.Errors, last[kind], h)
	}
	return out
}
