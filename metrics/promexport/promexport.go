// Package promexport turns the ticks of running steps into Prometheus
// series and serves them over HTTP, so that a run can be watched from the
// dashboards an operator already has (deploy/grafana/cephbench.json).
//
// Every series is labelled step, target and host; the per-kind ones also
// kind. Counters and the latency histogram add up every tick a step's
// subscriber got, so a scrape after the step ends sees the step's totals,
// the same as its saved result's. A derived kind (s3's get-ttfb: a get
// timed to its first byte) is the same ops as another kind again: it has
// its latency histogram, but no ops, bytes or errors counters, so that
// sum(cephbench_ops_total) counts every op once.
package promexport

import (
	"sort"
	"strconv"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cephbench/cephbench/metrics"
)

// The names of the metric families the exporter exports.
const (
	OpsTotal    = "cephbench_ops_total"
	BytesTotal  = "cephbench_bytes_total"
	ErrorsTotal = "cephbench_errors_total"
	OpLatency   = "cephbench_op_latency_seconds"
	OpsInFlight = "cephbench_ops_in_flight"
)

// Names are every metric name a scrape can show, the histogram's
// _bucket, _sum and _count series included: what a query may use.
func Names() []string {
	return []string{OpsTotal, BytesTotal, ErrorsTotal, OpLatency + "_bucket", OpLatency + "_sum", OpLatency + "_count", OpsInFlight}
}

// Buckets are the upper bounds, in seconds, of the latency histogram's
// buckets: 37 of them, log-spaced from 50 µs to 60 s (each about 1.48
// times the last) and rounded to three digits so that queries can name
// them, with +Inf beyond.
var Buckets = roundedBuckets(prometheus.ExponentialBucketsRange(50e-6, 60, 37))

func roundedBuckets(bounds []float64) []float64 {
	for i, b := range bounds {
		bounds[i], _ = strconv.ParseFloat(strconv.FormatFloat(b, 'g', 3, 64), 64)
	}
	return bounds
}

var (
	kindLabels = []string{"step", "target", "host", "kind"}
	opsDesc    = prometheus.NewDesc(OpsTotal, "Ops completed, by op kind (derived kinds left out).", kindLabels, nil)
	bytesDesc  = prometheus.NewDesc(BytesTotal, "Bytes moved by the ops completed, by op kind.", kindLabels, nil)
	errorsDesc = prometheus.NewDesc(ErrorsTotal, "Ops that failed, by op kind.", kindLabels, nil)
	latDesc    = prometheus.NewDesc(OpLatency, "Latency of the ops completed, by op kind, from the run's HDR histograms.", kindLabels, nil)
	flightDesc = prometheus.NewDesc(OpsInFlight, "Ops outstanding at the end of the last second; zero once the step ended.",
		[]string{"step", "target", "host"}, nil)
)

// Exporter holds the series of the steps it follows. It is a
// prometheus.Collector; its methods are safe for concurrent use, so
// scrapes may come while ticks arrive.
type Exporter struct {
	host  string
	mu    sync.Mutex
	steps map[stepKey]*stepSeries
}

type stepKey struct{ host, step, target string }

// stepSeries is one step's totals so far.
type stepSeries struct {
	kinds    map[string]*kindTotals
	inFlight int64
}

// kindTotals is one op kind's totals so far.
type kindTotals struct {
	derived            bool
	ops, bytes, errors int64
	latency            latencyTotals
}

// latencyTotals is a latency histogram in the exporter's buckets.
type latencyTotals struct {
	counts []uint64 // per bucket, not cumulative; the last is +Inf's
	count  uint64
	sum    float64 // seconds
}

// New returns an exporter whose series are labelled host unless a step
// runs on another (Follow).
func New(host string) *Exporter {
	return &Exporter{host: host, steps: map[stepKey]*stepSeries{}}
}

// Follow returns the subscriber of the ticks of a step labelled step and
// target that runs on host (empty: the exporter's own), and what to call
// when the step ended (its in-flight gauge drops to zero). Ticks of two
// steps with the same labels add up in the same series.
func (e *Exporter) Follow(host, step, target string) (tick metrics.Subscriber, ended func()) {
	if host == "" {
		host = e.host
	}
	key := stepKey{host, step, target}
	e.mu.Lock()
	if e.steps[key] == nil {
		e.steps[key] = &stepSeries{kinds: map[string]*kindTotals{}}
	}
	e.mu.Unlock()
	tick = func(t metrics.Tick) {
		// The tick's histograms are reused once it returns, and a
		// scrape must not wait on reading them: bucket them first.
		latencies := make(map[string]latencyTotals, len(t.Histograms))
		for kind, h := range t.Histograms {
			latencies[kind] = bucketed(h)
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		s := e.steps[key]
		s.inFlight = t.InFlight
		for kind, ks := range t.Kinds {
			k := s.kind(kind)
			k.derived = !t.Counted(kind)
			k.ops += ks.Ops
			k.bytes += ks.Bytes
			k.errors += ks.Errors
		}
		for kind, l := range latencies {
			s.kind(kind).latency.add(l)
		}
	}
	ended = func() {
		e.mu.Lock()
		e.steps[key].inFlight = 0
		e.mu.Unlock()
	}
	return tick, ended
}

func (s *stepSeries) kind(name string) *kindTotals {
	k := s.kinds[name]
	if k == nil {
		k = &kindTotals{latency: latencyTotals{counts: make([]uint64, len(Buckets)+1)}}
		s.kinds[name] = k
	}
	return k
}

// bucketed is h in the exporter's buckets. Each of h's values counts as
// its HDR bucket's middle value, which its sum adds up, as h.Mean does:
// the sum over the count is h's mean.
func bucketed(h *hdr.Histogram) latencyTotals {
	l := latencyTotals{counts: make([]uint64, len(Buckets)+1)}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		middle := float64(bar.From+(bar.To-bar.From+1)/2) / 1e9
		l.counts[sort.SearchFloat64s(Buckets, middle)] += uint64(bar.Count)
		l.count += uint64(bar.Count)
		l.sum += float64(bar.Count) * middle
	}
	return l
}

func (l *latencyTotals) add(o latencyTotals) {
	for i, c := range o.counts {
		l.counts[i] += c
	}
	l.count += o.count
	l.sum += o.sum
}

// cumulative is the histogram's buckets as Prometheus has them: the count
// at or below each bound.
func (l *latencyTotals) cumulative() map[float64]uint64 {
	m := make(map[float64]uint64, len(Buckets))
	var below uint64
	for i, bound := range Buckets {
		below += l.counts[i]
		m[bound] = below
	}
	return m
}

// Describe sends the descriptions of every series the exporter exports.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{opsDesc, bytesDesc, errorsDesc, latDesc, flightDesc} {
		ch <- d
	}
}

// Collect sends the series as they stand.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for key, s := range e.steps {
		ch <- prometheus.MustNewConstMetric(flightDesc, prometheus.GaugeValue, float64(s.inFlight), key.step, key.target, key.host)
		for kind, k := range s.kinds {
			labels := []string{key.step, key.target, key.host, kind}
			if !k.derived {
				ch <- prometheus.MustNewConstMetric(opsDesc, prometheus.CounterValue, float64(k.ops), labels...)
				ch <- prometheus.MustNewConstMetric(bytesDesc, prometheus.CounterValue, float64(k.bytes), labels...)
				ch <- prometheus.MustNewConstMetric(errorsDesc, prometheus.CounterValue, float64(k.errors), labels...)
			}
			ch <- prometheus.MustNewConstHistogram(latDesc, k.latency.count, k.latency.sum, k.latency.cumulative(), labels...)
		}
	}
}
