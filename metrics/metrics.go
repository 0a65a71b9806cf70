// Package metrics measures a run: one HDR latency histogram per worker and
// op kind, merged exactly by adding counts; per-second snapshots; rate
// statistics over the seconds; process CPU. It imports no project package.
package metrics

import (
	"math"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 ns to one hour at three significant digits (0.1%
// error), the same for every histogram so they merge and encode alike.
const (
	lowestNs   = 1
	highestNs  = int64(time.Hour)
	sigFigures = 3
)

// NewHistogram returns an empty latency histogram in nanoseconds.
func NewHistogram() *hdr.Histogram { return hdr.New(lowestNs, highestNs, sigFigures) }

// HistogramSettings are a latency histogram's range (nanoseconds) and
// precision. Histograms add exactly only when theirs are equal, so
// results carry them to be compared before they are merged.
type HistogramSettings struct {
	LowestNs           int64 `json:"lowest_ns"`
	HighestNs          int64 `json:"highest_ns"`
	SignificantFigures int64 `json:"significant_figures"`
}

// StandardHistogram is the settings of every histogram NewHistogram makes,
// which cephbench records its latencies in.
func StandardHistogram() HistogramSettings {
	return HistogramSettings{LowestNs: lowestNs, HighestNs: highestNs, SignificantFigures: sigFigures}
}

// SettingsOf reads h's settings.
func SettingsOf(h *hdr.Histogram) HistogramSettings {
	return HistogramSettings{LowestNs: h.LowestTrackableValue(), HighestNs: h.HighestTrackableValue(), SignificantFigures: h.SignificantFigures()}
}

// SettingsOfPacked reads a sparse histogram's settings.
func SettingsOfPacked(h *hdr.PackedHistogram) HistogramSettings {
	return HistogramSettings{LowestNs: h.LowestTrackableValue(), HighestNs: h.HighestTrackableValue(), SignificantFigures: h.SignificantFigures()}
}

// ReportedPercentiles are the latency percentiles every summary reports.
var ReportedPercentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// SecondPercentiles are the percentiles kept for each second of the series.
var SecondPercentiles = []float64{50, 90, 99, 99.9}

// counts are the per-kind tallies of an interval.
type counts struct {
	hist   *hdr.Histogram // allocated on first use: a read-only run has no write histogram
	ops    int64
	bytes  int64
	errors int64
	sizes  map[int64]int64 // ops by their bytes, when the collector counts them
	// The latency of the op that completed last, and when (on any
	// monotonic clock): rados bench's "last lat" column.
	lastEnd, lastLat time.Duration
}

// Recorder collects one worker's measurements. Its methods are safe for
// concurrent use: the goroutines that serve one worker's queue share it,
// and the collector drains it once a second.
type Recorder struct {
	mu         sync.Mutex
	kinds      []counts
	countSizes bool
	errors     map[string]int64
	queue      QueueCounts // cumulative: the collector sums it, never drains it
}

// Record adds one completed op of kind (an index into the collector's
// kind names) that ended at end (monotonic), took latency and moved n
// bytes.
func (r *Recorder) Record(kind int, latency time.Duration, n int64, end time.Duration) {
	v := int64(latency)
	if v < lowestNs {
		v = lowestNs
	} else if v > highestNs {
		v = highestNs
	}
	r.mu.Lock()
	c := &r.kinds[kind]
	if c.hist == nil {
		c.hist = NewHistogram()
	}
	_ = c.hist.RecordValue(v) // cannot fail: v is clamped to the range
	c.ops++
	c.bytes += n
	if r.countSizes && n > 0 {
		if c.sizes == nil {
			c.sizes = map[int64]int64{}
		}
		c.sizes[n]++
	}
	if end >= c.lastEnd {
		c.lastEnd, c.lastLat = end, latency
	}
	r.mu.Unlock()
}

// RecordError counts one failed op of kind, by error class (such as "EIO"
// or "timeout"). Failed ops are not in the latency figures.
func (r *Recorder) RecordError(kind int, class string) {
	r.mu.Lock()
	r.kinds[kind].errors++
	r.errors[class]++
	r.mu.Unlock()
}

// QueueBuckets is the number of buckets of each QueueCounts distribution.
const QueueBuckets = 7

// QueueCounts are fio's queue distributions ("IO depths", "submit" and
// "complete"), counted the way fio buckets them so its reports can be
// printed from them.
type QueueCounts struct {
	// Depth counts ops by how many of their worker's ops were in flight
	// when each started, itself included: 1, 2-3, 4-7, 8-15, 16-31, 32-63,
	// 64 and more.
	Depth [QueueBuckets]int64 `json:"depth"`
	// Submit counts the calls that handed ops to the engine by how many
	// ops each handed over, and Complete the calls that collected
	// completions by how many each collected: 0, 1-4, 5-8, 9-16, 17-32,
	// 33-64, more than 64. A call is one Do or Submit, or one Reap; an
	// engine may batch several of them into one system call.
	Submit   [QueueBuckets]int64 `json:"submit"`
	Complete [QueueBuckets]int64 `json:"complete"`
}

// AddDepth counts one op that started with n ops in flight, itself
// included.
func (q *QueueCounts) AddDepth(n int) {
	i := 0
	for lim := 2; n >= lim && i < QueueBuckets-1; lim *= 2 {
		i++
	}
	q.Depth[i]++
}

// batchBucket is fio's bucket for a call that moved n ops.
func batchBucket(n int) int {
	i := 0
	for lim := 0; n > lim && i < QueueBuckets-1; lim = max(4, 2*lim) {
		i++
	}
	return i
}

// AddSubmit counts one call that handed n ops to the engine.
func (q *QueueCounts) AddSubmit(n int) { q.Submit[batchBucket(n)]++ }

// AddComplete counts one call that collected n completed ops.
func (q *QueueCounts) AddComplete(n int) { q.Complete[batchBucket(n)]++ }

// Add adds o's counts to q.
func (q *QueueCounts) Add(o *QueueCounts) {
	for i := range QueueBuckets {
		q.Depth[i] += o.Depth[i]
		q.Submit[i] += o.Submit[i]
		q.Complete[i] += o.Complete[i]
	}
}

// AddQueue adds counts its caller kept on its own, without a lock per op,
// to the recorder's.
func (r *Recorder) AddQueue(q *QueueCounts) {
	r.mu.Lock()
	r.queue.Add(q)
	r.mu.Unlock()
}

// Collector owns the recorders of a run and turns their intervals into
// ticks and the run's totals, keeping nothing per interval: its memory does
// not grow with the run's length. NewRecorder may be called concurrently;
// Tick and Summary are called by one goroutine.
type Collector struct {
	names []string

	mu        sync.Mutex
	recorders []*Recorder

	total []counts // cumulative, hist always allocated
	// countSizes makes recorders count ops by size (CountOpSizes).
	countSizes bool
	scratch    []*hdr.Histogram
	errors     map[string]int64
	// rates are each kind's per-interval IOPS and bandwidth, over the
	// intervals of half an interval or more.
	rates []struct{ iops, bw rateStats }
	last  time.Duration // end of the previous interval, since measurement start
}

// NewCollector returns a collector for ops of the named kinds.
func NewCollector(kindNames []string) *Collector {
	c := &Collector{names: kindNames, errors: map[string]int64{}}
	c.total = make([]counts, len(kindNames))
	c.scratch = make([]*hdr.Histogram, len(kindNames))
	c.rates = make([]struct{ iops, bw rateStats }, len(kindNames))
	for i := range c.total {
		c.total[i].hist = NewHistogram()
		c.scratch[i] = NewHistogram()
	}
	return c
}

// CountOpSizes makes the recorders made after it count ops by their size
// too, for the summaries' OpsBySize: for runs whose op sizes vary, as
// the count costs a map update per op. Call it before NewRecorder.
func (c *Collector) CountOpSizes() { c.countSizes = true }

// NewRecorder returns a recorder whose measurements this collector gathers.
func (c *Collector) NewRecorder() *Recorder {
	r := &Recorder{kinds: make([]counts, len(c.names)), errors: map[string]int64{}, countSizes: c.countSizes}
	c.mu.Lock()
	c.recorders = append(c.recorders, r)
	c.mu.Unlock()
	return r
}

// KindSecond is one op kind's figures for one interval of the series.
type KindSecond struct {
	Ops    int64 `json:"ops"`
	Bytes  int64 `json:"bytes"`
	Errors int64 `json:"errors,omitempty"`
	// Latency of the ops completed in the interval, in nanoseconds.
	MeanNs      float64     `json:"mean_ns"`
	MaxNs       int64       `json:"max_ns"`
	Percentiles Percentiles `json:"percentiles_ns"`
	// LastNs is the latency of the op that completed last in the interval.
	LastNs int64 `json:"last_ns"`
}

// NewKindSecond is a kind's figures for an interval: its counts, the
// latency (ns) of the op that completed last, and the latency figures of
// h, the histogram of the ops it completed in the interval.
func NewKindSecond(ops, bytes, errors, lastNs int64, h *hdr.Histogram) KindSecond {
	ks := KindSecond{Ops: ops, Bytes: bytes, Errors: errors, LastNs: lastNs}
	if h.TotalCount() > 0 {
		ks.MeanNs = h.Mean()
		ks.MaxNs = h.Max()
		ks.Percentiles = percentilesOf(h, SecondPercentiles)
	}
	return ks
}

// Second is one interval of the series, normally one second long.
type Second struct {
	// T is the interval's end, in seconds since the measurement started.
	T float64 `json:"t"`
	// Dur is its length in seconds (shorter for the final interval).
	Dur   float64               `json:"dur"`
	Kinds map[string]KindSecond `json:"kinds"`
	// MeanInFlight is how many ops were in flight on average over the
	// interval (the time integral of the count, over the interval's
	// length); zero in series recorded before it was measured.
	MeanInFlight float64 `json:"mean_in_flight,omitempty"`
}

// Tick closes the interval that ends at elapsed (time since the
// measurement started), adds it to the totals and the rate statistics, and
// returns it; the run's op counts and Short are the caller's to fill in.
// Its histograms are valid until the next call.
func (c *Collector) Tick(elapsed time.Duration) Tick {
	for _, h := range c.scratch {
		h.Reset()
	}
	ops := make([]counts, len(c.names))
	c.mu.Lock()
	recorders := c.recorders
	c.mu.Unlock()
	for _, r := range recorders {
		r.mu.Lock()
		for k := range r.kinds {
			rc := &r.kinds[k]
			if rc.hist != nil && rc.hist.TotalCount() > 0 {
				c.scratch[k].Merge(rc.hist)
				rc.hist.Reset()
			}
			ops[k].ops += rc.ops
			ops[k].bytes += rc.bytes
			ops[k].errors += rc.errors
			if rc.ops > 0 && rc.lastEnd >= ops[k].lastEnd {
				ops[k].lastEnd, ops[k].lastLat = rc.lastEnd, rc.lastLat
			}
			rc.ops, rc.bytes, rc.errors = 0, 0, 0
			for n, ops := range rc.sizes {
				if c.total[k].sizes == nil {
					c.total[k].sizes = map[int64]int64{}
				}
				c.total[k].sizes[n] += ops
			}
			clear(rc.sizes)
		}
		for class, n := range r.errors {
			c.errors[class] += n
			delete(r.errors, class)
		}
		r.mu.Unlock()
	}
	s := Tick{
		Second:     Second{T: elapsed.Seconds(), Dur: (elapsed - c.last).Seconds(), Kinds: map[string]KindSecond{}},
		Histograms: map[string]*hdr.Histogram{},
	}
	for k, name := range c.names {
		h := c.scratch[k]
		h.SetTag(name) // Reset cleared it
		h.SetStartTimeMs(c.last.Milliseconds())
		h.SetEndTimeMs(elapsed.Milliseconds())
		if s.Dur >= 0.5 {
			// Every kind counts every interval, zero before its first op,
			// as the per-second spread always has.
			c.rates[k].iops.add(float64(ops[k].ops) / s.Dur)
			c.rates[k].bw.add(float64(ops[k].bytes) / s.Dur)
		}
		t := &c.total[k]
		t.hist.Merge(h)
		t.ops += ops[k].ops
		t.bytes += ops[k].bytes
		t.errors += ops[k].errors
		if ops[k].ops == 0 && ops[k].errors == 0 && t.ops == 0 && t.errors == 0 {
			continue // a kind this run does not do
		}
		s.Kinds[name] = NewKindSecond(ops[k].ops, ops[k].bytes, ops[k].errors, int64(ops[k].lastLat), h)
		s.Histograms[name] = h
	}
	c.last = elapsed
	return s
}

// Queue returns the sum of the queue counts the recorders were given.
func (c *Collector) Queue() QueueCounts {
	c.mu.Lock()
	recorders := c.recorders
	c.mu.Unlock()
	var q QueueCounts
	for _, r := range recorders {
		r.mu.Lock()
		q.Add(&r.queue)
		r.mu.Unlock()
	}
	return q
}

// Errors returns the failed-op counts by error class so far.
func (c *Collector) Errors() map[string]int64 { return c.errors }

// Histogram returns the cumulative latency histogram of kind; the caller
// must not modify it.
func (c *Collector) Histogram(kind int) *hdr.Histogram { return c.total[kind].hist }

// Totals returns the cumulative ops, bytes and errors of kind.
func (c *Collector) Totals(kind int) (ops, bytes, errors int64) {
	t := c.total[kind]
	return t.ops, t.bytes, t.errors
}

// Percentile is one latency percentile.
type Percentile struct {
	P  float64 `json:"p"`
	Ns int64   `json:"ns"`
}

// Percentiles is an ordered list of latency percentiles.
type Percentiles []Percentile

// At returns the value of percentile p, or 0 if it is not in the list.
func (ps Percentiles) At(p float64) int64 {
	for _, x := range ps {
		if x.P == p {
			return x.Ns
		}
	}
	return 0
}

func percentilesOf(h *hdr.Histogram, ps []float64) Percentiles {
	vals := h.ValueAtPercentilesSlice(ps)
	out := make(Percentiles, len(ps))
	for i, p := range ps {
		out[i] = Percentile{P: p, Ns: vals[i]}
	}
	return out
}

// Stats are the mean, extremes and standard deviation of a rate over the
// seconds of a run.
type Stats struct {
	Mean    float64 `json:"mean"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Stddev  float64 `json:"stddev"`
	Samples int     `json:"samples"`
}

// StatsOf computes Stats over xs (sample standard deviation, as rados bench
// and fio print it). Empty input gives zero Stats.
func StatsOf(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := Stats{Min: math.Inf(1), Max: math.Inf(-1), Samples: len(xs)}
	var sum float64
	for _, x := range xs {
		sum += x
		s.Min = min(s.Min, x)
		s.Max = max(s.Max, x)
	}
	s.Mean = sum / float64(len(xs))
	if len(xs) > 1 {
		var sq float64
		for _, x := range xs {
			sq += (x - s.Mean) * (x - s.Mean)
		}
		s.Stddev = math.Sqrt(sq / float64(len(xs)-1))
	}
	return s
}
