package htmlreport

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// kindRun is one op kind of a made-up run.
type kindRun struct {
	bs int64
	// perSecond is the ops completed in each second; the run lasts that
	// many seconds.
	perSecond []int64
	// latency is the latency of op i of second sec, in nanoseconds.
	latency func(sec, i int) int64
}

var t0 = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

// makeResult builds the result a run of step on target would save, with
// per-second series, summaries and histograms consistent with each other.
func makeResult(t testing.TB, step, target string, repeat, of int, kinds map[string]kindRun) *result.Result {
	t.Helper()
	tg, err := spec.ParseTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	secs := 0
	for _, k := range kinds {
		secs = max(secs, len(k.perSecond))
	}
	start := t0.Add(time.Duration(repeat) * time.Hour)
	r := &result.Result{
		Schema: result.Schema, Version: "1.2.3", Name: step,
		Spec: spec.Workload{Name: step, Target: tg, Pattern: spec.Random, ReadPercent: 50, Workers: 1, QueueDepth: 16},
		Host: result.Host{Hostname: "bench-1", Kernel: "6.1.0-18-amd64", OS: "Debian GNU/Linux 12", Arch: "amd64", CPUs: 8,
			CPUModel: "Xeon E-2288G", MemoryBytes: 32 << 30, GoVersion: "go1.26.8"},
		Start: start, End: start.Add(time.Duration(secs) * time.Second), ElapsedSeconds: float64(secs),
		StopReason: "time", Plan: &result.PlanStep{Step: step, Target: target, Repeat: repeat, Of: of},
		Ops: map[string]metrics.KindSummary{}, Errors: map[string]int64{}, Histograms: map[string]string{},
	}
	for s := range secs {
		r.Series = append(r.Series, metrics.Second{T: float64(s + 1), Dur: 1, Kinds: map[string]metrics.KindSecond{}, MeanInFlight: 15.5 - float64(s%3)/4})
	}
	for kind, k := range kinds {
		r.Spec.BlockSize = spec.Size(k.bs)
		all, h := metrics.NewHistogram(), metrics.NewHistogram()
		var total int64
		var rates []float64
		for s, ops := range k.perSecond {
			h.Reset()
			for i := range int(ops) {
				v := k.latency(s, i)
				if err := h.RecordValue(v); err != nil {
					t.Fatal(err)
				}
			}
			all.Merge(h)
			total += ops
			rates = append(rates, float64(ops))
			ks := metrics.KindSecond{Ops: ops, Bytes: ops * k.bs, MaxNs: h.Max()}
			if ops > 0 {
				ks.MeanNs = h.Mean()
			}
			for _, p := range metrics.SecondPercentiles {
				ks.Percentiles = append(ks.Percentiles, metrics.Percentile{P: p, Ns: h.ValueAtQuantile(p)})
			}
			r.Series[s].Kinds[kind] = ks
		}
		iops := metrics.StatsOf(rates)
		iops.Mean = float64(total) / float64(secs)
		bw := iops
		bw.Mean, bw.Min, bw.Max, bw.Stddev = iops.Mean*float64(k.bs), iops.Min*float64(k.bs), iops.Max*float64(k.bs), iops.Stddev*float64(k.bs)
		r.Ops[kind] = metrics.KindSummary{Ops: total, Bytes: total * k.bs, IOPS: iops, BandwidthBps: bw, Latency: metrics.LatencyOf(all)}
		enc, err := all.EncodeV2()
		if err != nil {
			t.Fatal(err)
		}
		r.Histograms[kind] = string(enc)
	}
	return r
}

// steady is n seconds of the same number of ops.
func steady(n int, ops int64) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = ops
	}
	return s
}

// noisy is n seconds around ops, with a dip in the middle: what a disk
// under load looks like.
func noisy(seed uint64, n int, ops int64) []int64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	s := make([]int64, n)
	for i := range s {
		f := 1 + 0.08*rng.NormFloat64()
		if i == n/2 {
			f *= 0.6
		}
		s[i] = max(int64(float64(ops)*f), 1)
	}
	return s
}

// lognormal draws latencies around median ns with a long tail.
func lognormal(seed uint64, median float64) func(sec, i int) int64 {
	rng := rand.New(rand.NewPCG(seed, 2))
	return func(sec, i int) int64 {
		return int64(median * math.Exp(0.45*rng.NormFloat64()))
	}
}

// realisticSet is a plan's results: 4K random reads and writes and 1M
// sequential writes on two targets, two repeats each, twenty seconds a
// run.
func realisticSet(t testing.TB) *aggregate.Set {
	t.Helper()
	set := &aggregate.Set{}
	targets := []struct {
		name  string
		speed float64
	}{{"rbd://rbd/bench-img", 1}, {"file:///mnt/nvme0/cephbench.dat", 2.6}}
	seed := uint64(1)
	for rep := 1; rep <= 2; rep++ {
		for _, tg := range targets {
			seed++
			set.Results = append(set.Results, makeResult(t, "randrw-4k", tg.name, rep, 2, map[string]kindRun{
				"read":  {bs: 4096, perSecond: noisy(seed, 20, int64(2400*tg.speed)), latency: lognormal(seed, 3.2e6/tg.speed)},
				"write": {bs: 4096, perSecond: noisy(seed+100, 20, int64(1100*tg.speed)), latency: lognormal(seed+100, 9e6/tg.speed)},
			}))
			set.Results = append(set.Results, makeResult(t, "seqwrite-1M", tg.name, rep, 2, map[string]kindRun{
				"write": {bs: 1 << 20, perSecond: noisy(seed+200, 20, int64(180*tg.speed)), latency: lognormal(seed+200, 45e6/tg.speed)},
			}))
		}
	}
	return set
}

func render(t testing.TB, set *aggregate.Set, title string) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, set, title); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func parse(t testing.TB, page string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// findAll returns the elements under n that match.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && match(d) {
			out = append(out, d)
		}
	}
	return out
}

func isTag(tag string, attrs ...string) func(*html.Node) bool {
	return func(n *html.Node) bool {
		if n.Data != tag {
			return false
		}
		for i := 0; i+1 < len(attrs); i += 2 {
			if attrOf(n, attrs[i]) != attrs[i+1] {
				return false
			}
		}
		return true
	}
}

func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return strings.TrimSpace(b.String())
}

// charts returns the page's figures of one kind, optionally of one group.
func charts(doc *html.Node, kind string, attrs ...string) []*html.Node {
	return findAll(doc, isTag("figure", append([]string{"class", "chart", "data-chart", kind}, attrs...)...))
}

// snapshot is a small cluster with a warning.
func snapshot() *cluster.Snapshot {
	return &cluster.Snapshot{
		Taken: t0, FSID: "7d1c-fsid", Health: cluster.Health{Status: "HEALTH_WARN", Checks: map[string]string{"OSD_NEARFULL": "1 nearfull osd(s)"}},
		Mons: 3, Mgrs: 2, OSDs: cluster.OSDCounts{Total: 12, Up: 11, In: 12}, PGStates: map[string]int{"active+clean": 128},
		Usage:    cluster.Usage{TotalBytes: 12 << 40, UsedBytes: 3 << 40, AvailBytes: 9 << 40},
		Pools:    []cluster.Pool{{Name: "rbd", Type: "replicated", Size: 3, MinSize: 2, PGNum: 128, StoredBytes: 1 << 40, Objects: 262144}},
		Versions: map[string]string{"osd": "18.2.4 (12)", "mon": "18.2.4 (3)"},
	}
}
