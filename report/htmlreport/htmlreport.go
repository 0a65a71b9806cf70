// Package htmlreport renders a set of results as one self-contained HTML
// page: a summary table, per-second and latency-distribution charts for
// every measurement, comparisons across targets and repeats, and the
// context the figures were measured in (hosts, plan, cluster, notes).
// The page loads nothing: charts are inline SVG and styles and the
// tooltip script are inline, so it opens offline and can be mailed or
// archived as one file.
package htmlreport

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/report/document"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

var (
	//go:embed page.html
	pageHTML string
	//go:embed style.css
	styleCSS string
	//go:embed tooltip.js
	tooltipJS string
)

// The style sheet and script are templates of their own so html/template
// knows they are static and inlines them as they are.
var pageTemplate = func() *template.Template {
	t := template.Must(template.New("page").Parse(pageHTML))
	template.Must(t.New("css").Parse(styleCSS))
	template.Must(t.New("js").Parse(tooltipJS))
	return t
}()

// Write writes set as one self-contained HTML page titled title: no
// script, style, font or image comes from elsewhere, so it works offline.
// Every name and note taken from the results is escaped. It fails only
// when w does.
func Write(w io.Writer, set *aggregate.Set, title string) error {
	return pageTemplate.ExecuteTemplate(w, "page", build(set, title))
}

type page struct {
	Title       string
	Facts       []string
	Rows        []row
	Comparisons []comparison
	Groups      []groupView
	Hosts       []hostView
	Manifests   []manifestView
	Cluster     *clusterView
	Notes       []string
	Problems    []string
}

type row struct {
	Anchor, Name, Target, Kind, BlockSize string
	Repeats                               int
	IOPS, MiBps                           [4]string // mean, min, max, stddev across repeats
	LatAvg, LatP99, CPU, Util             string
	Errors                                int64
	Interrupted                           bool
}

type comparison struct {
	Name, Kind string
	Charts     []chart
}

type groupView struct {
	Anchor, Name, Target, Kind string
	Description                string
	Series                     []chart
	NoSeries                   string
	Distribution               *chart
	NoDistribution             string
	Repeats                    []chart
	// Cluster are the charts of what the cluster did during each
	// repeat, beside the client's view.
	Cluster []chart
}

func build(set *aggregate.Set, title string) *page {
	d := document.New(set, title)
	groups := d.Measurements
	p := &page{Title: title}
	p.Facts = overview(set, groups)
	targets := targetColours(groups)
	for i := range groups {
		g := &groups[i]
		anchor := "g" + strconv.Itoa(i+1)
		p.Rows = append(p.Rows, summaryRow(g, anchor))
		p.Groups = append(p.Groups, groupSection(g, anchor))
	}
	p.Comparisons = compareTargets(d.SideBySide, targets)
	p.Hosts = hosts(set)
	for _, src := range set.Sources {
		if src.Manifest != nil {
			p.Manifests = append(p.Manifests, manifestOf(src))
		}
	}
	p.Cluster = clusterOf(set)
	p.Notes, p.Problems = notes(set)
	return p
}

func overview(set *aggregate.Set, groups []aggregate.Group) []string {
	var first, last time.Time
	for _, r := range set.Results {
		if first.IsZero() || r.Start.Before(first) {
			first = r.Start
		}
		last = later(last, r.End)
	}
	facts := []string{plural(len(set.Results), "result"), plural(len(groups), "measurement")}
	if len(set.Sources) > 0 {
		facts = append(facts, plural(len(set.Sources), "source"))
	}
	if !first.IsZero() {
		facts = append(facts, "run "+first.UTC().Format("2006-01-02 15:04:05")+" to "+last.UTC().Format("2006-01-02 15:04:05")+" UTC")
	}
	return facts
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// targetColours gives every target one colour for all comparisons.
func targetColours(groups []aggregate.Group) map[string]string {
	m := map[string]string{}
	for _, g := range groups {
		if _, ok := m[g.Target]; !ok {
			m[g.Target] = colour(len(m))
		}
	}
	return m
}

// measuresOps tells whether a group counts ops: a network result has
// bandwidth only, and an IOPS of 0 there means "not measured".
func measuresOps(g *aggregate.Group) bool {
	for _, r := range g.Results {
		if r.Ops[g.Kind].Ops > 0 {
			return true
		}
	}
	return false
}

func summaryRow(g *aggregate.Group, anchor string) row {
	rw := row{
		Anchor: anchor, Name: g.Name(), Target: g.Target, Kind: g.Kind,
		BlockSize: "mixed", Repeats: len(g.Results), Errors: g.Errors,
		IOPS:   [4]string{"–", "–", "–", "–"},
		LatAvg: "–", LatP99: "–", Util: "–",
	}
	if g.BlockSize > 0 {
		rw.BlockSize = spec.Size(g.BlockSize).String()
	}
	if measuresOps(g) {
		s := g.IOPS
		rw.IOPS = [4]string{report.IOPS(s.Mean), report.IOPS(s.Min), report.IOPS(s.Max), report.IOPS(s.Stddev)}
	}
	b := g.BandwidthBps
	rw.MiBps = [4]string{report.MiBps(b.Mean), report.MiBps(b.Min), report.MiBps(b.Max), report.MiBps(b.Stddev)}
	avg, p99 := g.LatMeanNs.Mean, g.LatP99Ns.Mean
	if g.Merged.MeanNs > 0 {
		avg, p99 = g.Merged.MeanNs, float64(g.Merged.Percentiles.At(99))
	}
	if avg > 0 {
		rw.LatAvg = ms(avg)
	}
	if p99 > 0 {
		rw.LatP99 = ms(p99)
	}
	rw.CPU = strconv.FormatFloat(g.CPUPercent.Mean, 'f', 1, 64)
	if g.DiskUtil.N() > 0 {
		rw.Util = strconv.FormatFloat(g.DiskUtil.Mean, 'f', 1, 64)
	}
	for _, r := range g.Results {
		rw.Interrupted = rw.Interrupted || r.Interrupted
	}
	return rw
}

// ms prints nanoseconds in milliseconds with three significant digits,
// and no exponent: 0.0523, 1.23, 123.
func ms(ns float64) string {
	v := ns / 1e6
	decimals := min(max(2-int(math.Floor(math.Log10(v))), 0), 6)
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

func repeatLabel(r *result.Result, i int) string {
	n := i + 1
	if r.Plan != nil && r.Plan.Repeat > 0 {
		n = r.Plan.Repeat
	}
	l := "repeat " + strconv.Itoa(n)
	if r.Interrupted {
		l += " (interrupted)"
	}
	return l
}

func describe(g *aggregate.Group) string {
	r := g.Results[0]
	w := r.Spec
	if r.Measures == result.MeasuresNetwork {
		return fmt.Sprintf("network %s, %d streams to %s", g.Kind, w.Workers, w.Target.Location)
	}
	parts := []string{}
	if w.BlockSize > 0 {
		parts = append(parts, w.BlockSize.String())
	}
	pattern := map[spec.Pattern]string{spec.Sequential: "sequential", spec.Random: "random"}[w.Pattern]
	if pattern == "" {
		pattern = string(w.Pattern)
	}
	mix := fmt.Sprintf("%d%% read", w.ReadPercent)
	switch w.ReadPercent {
	case 0:
		mix = "write"
	case 100:
		mix = "read"
	}
	parts = append(parts, pattern+" "+mix, fmt.Sprintf("%s × queue depth %d", plural(w.Workers, "worker"), w.QueueDepth))
	elapsed := 0.0
	for _, r := range g.Results {
		elapsed += r.ElapsedSeconds
	}
	parts = append(parts, fmt.Sprintf("%s measured", plural(int(math.Round(elapsed)), "second")))
	return strings.Join(parts, ", ")
}

func groupSection(g *aggregate.Group, anchor string) groupView {
	v := groupView{Anchor: anchor, Name: g.Name(), Target: g.Target, Kind: g.Kind, Description: describe(g)}
	data := dataset{Group: anchor, Step: g.Name(), Target: g.Target, Kind: g.Kind}
	v.Series = seriesCharts(g, data)
	if len(v.Series) == 0 {
		v.NoSeries = "These results have no per-second series."
	}
	v.Distribution, v.NoDistribution = distributionChart(g, data)
	v.Cluster = clusterCharts(g, data)
	if len(g.Results) > 1 {
		v.Repeats = repeatCharts(g, data)
	}
	return v
}

// perSecond is one repeat's series for one op kind.
type perSecond struct {
	t, mibps, iops []float64
	// inFlight is the run's mean ops in flight (every kind's) each second.
	inFlight []float64
	// latT are the seconds that completed ops, which alone have latency.
	latT, p50, p99, mean []float64
}

func perSecondOf(r *result.Result, kind string) perSecond {
	var ps perSecond
	for _, s := range r.Series {
		if s.Dur <= 0 {
			continue
		}
		k := s.Kinds[kind]
		ps.t = append(ps.t, s.T)
		ps.mibps = append(ps.mibps, float64(k.Bytes)/s.Dur/(1<<20))
		ps.iops = append(ps.iops, float64(k.Ops)/s.Dur)
		ps.inFlight = append(ps.inFlight, s.MeanInFlight)
		if k.Ops > 0 && (k.MeanNs > 0 || k.MaxNs > 0) {
			ps.latT = append(ps.latT, s.T)
			ps.p50 = append(ps.p50, float64(k.Percentiles.At(50)))
			ps.p99 = append(ps.p99, float64(k.Percentiles.At(99)))
			ps.mean = append(ps.mean, k.MeanNs)
		}
	}
	return ps
}

func secondsAxis(top float64) func(x0, x1 float64) *axis {
	return func(x0, x1 float64) *axis { return tightAxis(top, x0, x1, plainTick) }
}

// seriesCharts draws a group's per-second bandwidth, IOPS and latency,
// one line per repeat; none when its results have no series.
func seriesCharts(g *aggregate.Group, data dataset) []chart {
	var all []perSecond
	top, points, latPoints := 0.0, 0, 0
	occupied := false // results saved before occupancy was measured have none
	for _, r := range g.Results {
		ps := perSecondOf(r, g.Kind)
		all = append(all, ps)
		points += len(ps.t)
		latPoints += len(ps.latT)
		occupied = occupied || slices.ContainsFunc(ps.inFlight, func(x float64) bool { return x > 0 })
		if len(ps.t) > 0 {
			top = max(top, ps.t[len(ps.t)-1])
		}
	}
	if points == 0 {
		return nil
	}
	merged := 1
	rates := func(pick func(perSecond) []float64) []series {
		var ss []series
		for i, ps := range all {
			xs, ys, k := downsample(ps.t, pick(ps), mean)
			merged = max(merged, k)
			ss = append(ss, series{label: repeatLabel(g.Results[i], i), colour: colour(i), width: 1.8, xs: xs, ys: ys})
		}
		return ss
	}
	var charts []chart
	bw := chart{Kind: "bandwidth", Title: "Bandwidth per second", XLabel: "time (s)", YLabel: "MiB/s", XUnit: "s", YUnit: "MiB/s", Data: data}
	lineChart(&bw, rates(func(ps perSecond) []float64 { return ps.mibps }), secondsAxis(top), false)
	charts = append(charts, bw)
	if measuresOps(g) {
		io := chart{Kind: "iops", Title: "IOPS per second", XLabel: "time (s)", YLabel: "IOPS", XUnit: "s", YUnit: "IOPS", Data: data}
		lineChart(&io, rates(func(ps perSecond) []float64 { return ps.iops }), secondsAxis(top), false)
		charts = append(charts, io)
	}
	if latPoints > 0 {
		charts = append(charts, latencyChart(g, all, top, data, &merged))
	}
	if occupied {
		fl := chart{Kind: "in-flight", Title: "Ops in flight per second (mean, every kind's)", XLabel: "time (s)", YLabel: "ops", XUnit: "s", YUnit: "ops", Data: data}
		lineChart(&fl, rates(func(ps perSecond) []float64 { return ps.inFlight }), secondsAxis(top), false)
		charts = append(charts, fl)
	}
	for i := range charts {
		charts[i].Legend = legendOf(charts[i].Lines)
		if merged > 1 {
			charts[i].Note = fmt.Sprintf("Each point is %d seconds: their mean (percentiles: their highest).", merged)
		}
	}
	return charts
}

// latencyChart draws each repeat's p50, p99 and mean latency per second.
// With several repeats the colour is the repeat and the dash the figure;
// with one, the colour is the figure.
func latencyChart(g *aggregate.Group, all []perSecond, top float64, data dataset, merged *int) chart {
	c := chart{Kind: "latency", Title: "Latency per second", XLabel: "time (s)", YLabel: "latency (log scale)", XUnit: "s", YUnit: "ns", Data: data}
	figures := []struct {
		name string
		dash string
		agg  func([]float64) float64
		pick func(perSecond) []float64
	}{
		{"p50", "", highest, func(ps perSecond) []float64 { return ps.p50 }},
		{"p99", "6 4", highest, func(ps perSecond) []float64 { return ps.p99 }},
		{"mean", "2 3", mean, func(ps perSecond) []float64 { return ps.mean }},
	}
	var ss []series
	for i, ps := range all {
		if len(ps.latT) == 0 {
			continue
		}
		for j, f := range figures {
			xs, ys, k := downsample(ps.latT, f.pick(ps), f.agg)
			*merged = max(*merged, k)
			s := series{label: repeatLabel(g.Results[i], i) + " " + f.name, colour: colour(i), dash: f.dash, width: 1.6, xs: xs, ys: ys}
			if len(all) == 1 {
				s.label, s.colour, s.dash = f.name, colour(j), ""
			}
			ss = append(ss, s)
		}
	}
	lineChart(&c, ss, secondsAxis(top), true)
	return c
}

func legendOf(ls []line) []legendItem {
	items := make([]legendItem, len(ls))
	for i, l := range ls {
		items[i] = legendItem{Label: l.Label, Colour: l.Colour, Dash: l.Dash}
	}
	return items
}

// distributionChart plots latency against percentile on a log scale of
// 1/(1-p), where the tail gets the room it deserves: from the merged
// histogram of all repeats, and each repeat's when there are several.
// Without a chart, it says why.
func distributionChart(g *aggregate.Group, data dataset) (*chart, string) {
	h := g.Histogram()
	switch {
	case h == nil || h.TotalCount() == 0:
		return nil, "No latency distribution: a result of this measurement recorded no latency histogram."
	case h.Max() == 0:
		return nil, "No latency distribution: every latency recorded is 0 ns, below what the clock resolves."
	}
	// Beyond 10^-decades of the count a percentile is the maximum again.
	decades := math.Ceil(math.Log10(float64(h.TotalCount())))
	decades = min(max(decades, 2), 6)
	title := "Latency distribution"
	if g.Results[0].Measures == result.MeasuresNetwork {
		title = "Round-trip time distribution"
	}
	c := &chart{Kind: "distribution", Title: title, XLabel: "percentile", YLabel: "latency (log scale)", XUnit: "%", YUnit: "ns", Data: data}
	var ss []series
	if len(g.Results) > 1 {
		for i, r := range g.Results {
			rh := g.RepeatHistogram(i)
			if rh == nil || rh.TotalCount() == 0 {
				continue
			}
			s := quantileSeries(rh, decades)
			s.label, s.colour, s.width = repeatLabel(r, i), colour(i), 1.4
			ss = append(ss, s)
		}
	}
	all := quantileSeries(h, decades)
	all.label, all.colour, all.width = "all repeats", "#222", 2.4
	if len(g.Results) == 1 {
		all.label, all.colour = "all ops", colour(0)
	}
	ss = append(ss, all)
	lineChart(c, ss, percentileAxis(decades), true)
	c.Legend = legendOf(c.Lines)
	c.Note = fmt.Sprintf("%s ops; max %s.", strconv.FormatInt(h.TotalCount(), 10), durationTick(float64(h.Max())))
	return c, ""
}

// quantileSeries samples h at 50 points a decade of 1/(1-p), from p = 0,
// and at the median.
func quantileSeries(h *hdr.Histogram, decades float64) series {
	ks := []float64{math.Log10(2)}
	for i := 0; i <= int(decades)*50; i++ {
		ks = append(ks, float64(i)/50)
	}
	sort.Float64s(ks)
	var s series
	for _, k := range ks {
		p := 100 * (1 - math.Pow(10, -k))
		s.xs = append(s.xs, k)
		s.xv = append(s.xv, p)
		s.ys = append(s.ys, float64(h.ValueAtQuantile(p)))
	}
	return s
}

// percentileAxis is x = log10(1/(1-p)) from 0 to decades, ticked at the
// percentiles people quote.
func percentileAxis(decades float64) func(x0, x1 float64) *axis {
	return func(x0, x1 float64) *axis {
		a := &axis{lo: 0, hi: decades, r0: x0, r1: x1, ticks: []float64{0, math.Log10(2)}}
		for d := 1.0; d <= decades; d++ {
			a.ticks = append(a.ticks, d)
		}
		a.format = func(k float64) string {
			return strconv.FormatFloat(100*(1-math.Pow(10, -k)), 'g', 6, 64)
		}
		return a
	}
}

// repeatCharts compare a group's repeats: one bar each, with the
// per-second extremes of that repeat as its whisker.
func repeatCharts(g *aggregate.Group, data dataset) []chart {
	figures := []struct {
		kind, title, unit string
		pick              func(metrics.KindSummary) metrics.Stats
		scale             float64
	}{
		{"iops", "IOPS by repeat", "IOPS", func(s metrics.KindSummary) metrics.Stats { return s.IOPS }, 1},
		{"bandwidth", "MiB/s by repeat", "MiB/s", func(s metrics.KindSummary) metrics.Stats { return s.BandwidthBps }, 1 << 20},
	}
	var charts []chart
	for _, f := range figures {
		if f.kind == "iops" && !measuresOps(g) {
			continue
		}
		var ds []barDatum
		for i, r := range g.Results {
			st := f.pick(r.Ops[g.Kind])
			d := barDatum{label: repeatLabel(r, i), colour: colour(i), value: st.Mean / f.scale}
			if st.Samples > 1 {
				d.lo, d.hi, d.spread = st.Min/f.scale, st.Max/f.scale, "per second"
			}
			ds = append(ds, d)
		}
		c := chart{Kind: "repeats-" + f.kind, Title: f.title, XLabel: f.unit, XUnit: f.unit, Data: data,
			Note: "Whiskers: the lowest and highest second of each repeat."}
		barChart(&c, ds, f.unit)
		charts = append(charts, c)
	}
	return charts
}

// compareTargets draws, for every step and op kind that ran on several
// targets, its IOPS and bandwidth on each, whiskers spanning the repeats.
func compareTargets(sb *document.SideBySide, colours map[string]string) []comparison {
	if sb == nil {
		return nil
	}
	var cs []comparison
	for _, row := range sb.Rows {
		var gs []*aggregate.Group
		for _, g := range row.Cells {
			if g != nil {
				gs = append(gs, g)
			}
		}
		cmp := comparison{Name: gs[0].Name(), Kind: gs[0].Kind}
		ops := false
		for _, g := range gs {
			ops = ops || measuresOps(g)
		}
		data := dataset{Step: cmp.Name, Kind: cmp.Kind, Targets: strconv.Itoa(len(gs))}
		bars := func(pick func(*aggregate.Group) aggregate.Stat, scale float64) []barDatum {
			var ds []barDatum
			for _, g := range gs {
				s := pick(g)
				d := barDatum{label: g.Target, colour: colours[g.Target], value: s.Mean / scale}
				if s.N() > 1 {
					d.lo, d.hi, d.spread = s.Min/scale, s.Max/scale, fmt.Sprintf("%d repeats,", s.N())
				}
				ds = append(ds, d)
			}
			return ds
		}
		note := "Bars: the mean of the repeats; whiskers: the lowest and highest repeat."
		if ops {
			c := chart{Kind: "targets-iops", Title: "IOPS by target", XLabel: "IOPS", XUnit: "IOPS", Data: data, Note: note}
			barChart(&c, bars(func(g *aggregate.Group) aggregate.Stat { return g.IOPS }, 1), "IOPS")
			cmp.Charts = append(cmp.Charts, c)
		}
		c := chart{Kind: "targets-bandwidth", Title: "MiB/s by target", XLabel: "MiB/s", XUnit: "MiB/s", Data: data, Note: note}
		barChart(&c, bars(func(g *aggregate.Group) aggregate.Stat { return g.BandwidthBps }, 1<<20), "MiB/s")
		cmp.Charts = append(cmp.Charts, c)
		cs = append(cs, cmp)
	}
	return cs
}

type hostView struct {
	Hostname, OS, Kernel, Arch, CPUModel, Memory, Go, Versions string
	CPUs                                                       int
	Results                                                    int
}

// hosts lists the machines the results were measured from.
func hosts(set *aggregate.Set) []hostView {
	index := map[result.Host]int{}
	var hs []hostView
	versions := map[int][]string{}
	for _, r := range set.Results {
		i, ok := index[r.Host]
		if !ok {
			i = len(hs)
			index[r.Host] = i
			h := r.Host
			hs = append(hs, hostView{Hostname: h.Hostname, OS: h.OS, Kernel: h.Kernel, Arch: h.Arch, CPUModel: h.CPUModel, CPUs: h.CPUs, Go: h.GoVersion})
			if h.MemoryBytes > 0 {
				hs[i].Memory = cluster.Bytes(h.MemoryBytes)
			}
		}
		hs[i].Results++
		if r.Version != "" && !contains(versions[i], r.Version) {
			versions[i] = append(versions[i], r.Version)
		}
	}
	for i := range hs {
		hs[i].Versions = strings.Join(versions[i], ", ")
	}
	return hs
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

type manifestView struct {
	Path, Plan, Status, Started, Finished string
	Vars                                  []string
	Steps                                 []stepView
}

type stepView struct {
	ID, Step, Target, Repeat, Status, Error, Results string
	Problem                                          bool
}

func manifestOf(src aggregate.Source) manifestView {
	m := src.Manifest
	v := manifestView{Path: src.Path, Plan: m.Plan, Status: m.Status, Started: stamp(m.Started), Finished: stamp(m.Finished)}
	if v.Finished == "" {
		v.Finished = "not finished"
	}
	for k, val := range m.Vars {
		v.Vars = append(v.Vars, k+"="+val)
	}
	sort.Strings(v.Vars)
	for _, st := range m.Steps {
		sv := stepView{ID: st.ID, Step: st.Step, Target: st.Target, Status: st.Status, Error: st.Error,
			Results: strings.Join(st.Results, ", "),
			Problem: st.Status == result.StepFailed || st.Status == result.StepInterrupted}
		if st.Of > 0 {
			sv.Repeat = fmt.Sprintf("%d of %d", st.Repeat, st.Of)
		}
		v.Steps = append(v.Steps, sv)
	}
	return v
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

type clusterView struct {
	Of, When, FSID, Health string
	Checks                 []string
	Daemons                []string
	PGs                    []string
	Usage                  string
	Pools                  []poolView
	Versions               []string
	Healthy                bool
}

type poolView struct {
	Name, Type, Size, PGs, Stored, Objects, Flags string
}

// clusterOf describes the cluster as the first result that recorded it
// found it, before its run when it has that.
func clusterOf(set *aggregate.Set) *clusterView {
	for _, r := range set.Results {
		if r.Cluster == nil {
			continue
		}
		s, when := r.Cluster.Before, "before"
		if s == nil {
			s, when = r.Cluster.After, "after"
		}
		if s == nil {
			continue
		}
		return clusterViewOf(s, fmt.Sprintf("%s %s on %s", when, r.Plan.Step, aggregate.TargetOf(r)))
	}
	return nil
}

func clusterViewOf(s *cluster.Snapshot, of string) *clusterView {
	v := &clusterView{Of: of, When: stamp(s.Taken), FSID: s.FSID, Health: s.Health.Status, Healthy: s.Health.Status == "HEALTH_OK"}
	for name, msg := range s.Health.Checks {
		v.Checks = append(v.Checks, name+": "+msg)
	}
	sort.Strings(v.Checks)
	v.Daemons = []string{
		fmt.Sprintf("%d mons", s.Mons), fmt.Sprintf("%d mgrs", s.Mgrs),
		fmt.Sprintf("%d OSDs (%d up, %d in)", s.OSDs.Total, s.OSDs.Up, s.OSDs.In),
	}
	if s.MDS > 0 {
		v.Daemons = append(v.Daemons, fmt.Sprintf("%d MDS", s.MDS))
	}
	for state, n := range s.PGStates {
		v.PGs = append(v.PGs, fmt.Sprintf("%d %s", n, state))
	}
	sort.Strings(v.PGs)
	if u := s.Usage; u.TotalBytes > 0 {
		v.Usage = fmt.Sprintf("%s used of %s (%.1f%%), %s available", cluster.Bytes(u.UsedBytes), cluster.Bytes(u.TotalBytes),
			100*float64(u.UsedBytes)/float64(u.TotalBytes), cluster.Bytes(u.AvailBytes))
	}
	for _, p := range s.Pools {
		v.Pools = append(v.Pools, poolView{
			Name: p.Name, Type: p.Type, Size: fmt.Sprintf("%d/%d", p.Size, p.MinSize), PGs: strconv.Itoa(p.PGNum),
			Stored: cluster.Bytes(p.StoredBytes), Objects: strconv.FormatInt(p.Objects, 10), Flags: p.Flags,
		})
	}
	for daemon, ver := range s.Versions {
		v.Versions = append(v.Versions, daemon+": "+ver)
	}
	sort.Strings(v.Versions)
	return v
}

// notes collects the results' notes, with what the cluster did during
// their runs, and what did not finish or ran on a cluster not at rest:
// results cut short, plan steps that failed or were interrupted.
func notes(set *aggregate.Set) (ns, problems []string) {
	for _, r := range set.Results {
		where := fmt.Sprintf("%s on %s, repeat %d", r.Plan.Step, aggregate.TargetOf(r), max(r.Plan.Repeat, 1))
		for _, n := range r.Notes {
			ns = append(ns, where+": "+n)
		}
		if r.Cluster != nil && r.Cluster.During != nil {
			for i, l := range r.Cluster.During.Lines() {
				if i == 0 && !r.Cluster.During.AtRest() {
					problems = append(problems, where+": "+l)
				} else {
					ns = append(ns, where+": "+l)
				}
			}
		}
		if r.Interrupted {
			problems = append(problems, fmt.Sprintf("%s was interrupted after %.1f s: its figures cover what was measured.", where, r.ElapsedSeconds))
		}
	}
	for _, src := range set.Sources {
		if src.Manifest == nil {
			continue
		}
		for _, st := range src.Manifest.Steps {
			if st.Status != result.StepFailed && st.Status != result.StepInterrupted {
				continue
			}
			p := fmt.Sprintf("plan step %s (%s on %s) %s", st.ID, st.Step, st.Target, st.Status)
			if st.Error != "" {
				p += ": " + st.Error
			}
			problems = append(problems, p)
		}
	}
	return ns, problems
}
