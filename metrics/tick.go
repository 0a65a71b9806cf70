package metrics

import (
	"math"
	"slices"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Tick is one closed interval of a run, as its subscribers see it: per op
// kind the ops, bytes and errors and the interval's latency histogram,
// and the run's op counts at the interval's end. Op kinds are names; a
// kind appears from the first interval in which it completed or failed an
// op.
type Tick struct {
	Second
	// Histograms holds, for each kind in Kinds, the latencies (ns) of the
	// ops it completed in the interval, tagged with the kind's name and
	// stamped with the interval's start and end in milliseconds since the
	// measurement started. They are the collector's and are reused for
	// the next interval: read them during the call, copy what you keep.
	Histograms map[string]*hdr.Histogram
	// Started and Finished count ops since the measurement began;
	// InFlight is how many are outstanding at the interval's end.
	Started, Finished, InFlight int64
	// InFlightBytes is the length of the ops outstanding at the
	// interval's end, when the workload bounds it (a byte backlog); zero
	// otherwise.
	InFlightBytes int64
	// Derived names the kinds whose ops are other kinds' ops again, timed
	// to another point (get-ttfb: a get's first byte): views that count
	// ops leave them out.
	Derived []string
	// Short marks a final interval the run's bound cut to under half an
	// interval: its rates are noise, so per-second tables leave it out,
	// but it is part of the series, which adds up to the run.
	Short bool
}

// Subscriber receives a run's ticks. A run calls its subscribers from one
// goroutine, one tick at a time in time order, each subscriber in the
// order given; a subscriber therefore needs no lock for its own state, and
// one that blocks delays the ticks after it (not the I/O).
type Subscriber func(Tick)

// Counted reports whether kind's ops are ops of their own, not Derived.
func (t *Tick) Counted(kind string) bool { return !slices.Contains(t.Derived, kind) }

// rateStats accumulates Stats of a rate one sample at a time (Welford's
// method), so a run's per-second spread needs no per-second memory.
type rateStats struct {
	n               int
	mean, m2        float64
	lowest, highest float64
}

// add counts one sample.
func (s *rateStats) add(x float64) {
	s.n++
	if s.n == 1 {
		s.lowest, s.highest = x, x
	}
	s.lowest, s.highest = min(s.lowest, x), max(s.highest, x)
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (x - s.mean)
}

// stats returns what StatsOf returns for the samples added.
func (s *rateStats) stats() Stats {
	if s.n == 0 {
		return Stats{}
	}
	st := Stats{Mean: s.mean, Min: s.lowest, Max: s.highest, Samples: s.n}
	if s.n > 1 {
		st.Stddev = math.Sqrt(s.m2 / float64(s.n-1))
	}
	return st
}

// AddTicks is one second of several runs at once (hosts', taken on one
// clock) from their ticks of that second: counts added, histograms added
// (so its percentiles are those of every op of every run, never
// averages), in-flight ops and their means added. Its end and length
// are the latest and longest of theirs, its last latency that of the last
// tick whose kind did ops; a kind is Derived if any tick's is. The histograms are new:
// the sum does not alias the ticks'.
func AddTicks(ticks []Tick) Tick {
	var s TickSum
	for _, t := range ticks {
		s.Add(t)
	}
	return s.Sum()
}

// TickSum adds ticks one at a time into the one AddTicks returns, so that
// a sum of many hosts' seconds holds one histogram per kind however many
// ticks it takes, and reuses them from one sum to the next (Reset). The
// zero value is an empty sum. It is not safe for concurrent use.
type TickSum struct {
	t      Tick
	last   map[string]int64
	counts map[string]KindSecond
	spare  map[string]*hdr.Histogram // histograms of an earlier sum, reset
	n      int
}

// Add adds t; it keeps nothing of t's.
func (s *TickSum) Add(t Tick) {
	if s.counts == nil {
		s.t = Tick{Second: Second{Kinds: map[string]KindSecond{}}, Histograms: map[string]*hdr.Histogram{}}
		s.last, s.counts = map[string]int64{}, map[string]KindSecond{}
	}
	s.n++
	out := &s.t
	out.T, out.Dur = max(out.T, t.T), max(out.Dur, t.Dur)
	out.Started += t.Started
	out.Finished += t.Finished
	out.InFlight += t.InFlight
	out.MeanInFlight += t.MeanInFlight
	out.InFlightBytes += t.InFlightBytes
	out.Short = out.Short || t.Short
	for _, d := range t.Derived {
		if !slices.Contains(out.Derived, d) {
			out.Derived = append(out.Derived, d)
		}
	}
	for kind, ks := range t.Kinds {
		c := s.counts[kind]
		c.Ops += ks.Ops
		c.Bytes += ks.Bytes
		c.Errors += ks.Errors
		s.counts[kind] = c
		if ks.Ops > 0 {
			s.last[kind] = ks.LastNs
		}
		if h := t.Histograms[kind]; h != nil {
			s.histogram(kind).Merge(h)
		}
	}
}

// AddPacked adds t, whose latencies are not in t.Histograms but in hists
// (per kind, sparse, as a tick decoded from the wire has them): a
// second of many hosts is added without a dense histogram per host.
func (s *TickSum) AddPacked(t Tick, hists map[string]*hdr.PackedHistogram) {
	t.Histograms = nil
	s.Add(t)
	for kind, h := range hists {
		h.MergeInto(s.histogram(kind))
	}
}

// Ticks is how many ticks were added since the sum was made or reset.
func (s *TickSum) Ticks() int { return s.n }

// histogram is kind's histogram in the sum, made or taken from the spares
// on first use.
func (s *TickSum) histogram(kind string) *hdr.Histogram {
	h := s.t.Histograms[kind]
	if h == nil {
		if h = s.spare[kind]; h != nil {
			delete(s.spare, kind)
		} else {
			h = NewHistogram()
		}
		s.t.Histograms[kind] = h
	}
	return h
}

// Sum is the ticks added, as AddTicks has it. Its histograms are the
// sum's own: they stay valid until the next Reset.
func (s *TickSum) Sum() Tick {
	if s.counts == nil {
		return Tick{Second: Second{Kinds: map[string]KindSecond{}}, Histograms: map[string]*hdr.Histogram{}}
	}
	for kind, c := range s.counts {
		s.t.Kinds[kind] = NewKindSecond(c.Ops, c.Bytes, c.Errors, s.last[kind], s.histogram(kind))
	}
	return s.t
}

// Reset empties the sum for the next one, keeping its histograms for
// reuse.
func (s *TickSum) Reset() {
	if s.counts == nil {
		return
	}
	if s.spare == nil {
		s.spare = map[string]*hdr.Histogram{}
	}
	for kind, h := range s.t.Histograms {
		h.Reset()
		s.spare[kind] = h
	}
	s.t = Tick{Second: Second{Kinds: map[string]KindSecond{}}, Histograms: map[string]*hdr.Histogram{}}
	clear(s.last)
	clear(s.counts)
	s.n = 0
}
