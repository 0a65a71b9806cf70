package htmlreport

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/result"
)

// heatRowH is the height of one OSD's row in a heatmap: room for its
// label.
const heatRowH = 20

// span is an event's time on a chart, shaded from X over W.
type span struct{ X, W, Label string }

// heatmap is one row per OSD, one cell per column of seconds.
type heatmap struct {
	Rows []heatRow
}

type heatRow struct {
	ID             int
	Label          string
	Y, H, LabelY   string
	Slow           bool
	Cells          []heatCell
	OutlineX, OutW string
}

type heatCell struct{ X, W, Fill string }

// clusterCharts draws, for each of g's results the cluster was watched
// during, the client's and the cluster's rates on one time axis, the PGs
// not active+clean below them, and each OSD's queue and commit latency
// as heatmaps; none for results without cluster samples.
func clusterCharts(g *aggregate.Group, data dataset) []chart {
	var charts []chart
	for i, r := range g.Results {
		samples := clusterSamplesOf(r)
		if len(samples) == 0 {
			continue
		}
		of := ""
		if len(g.Results) > 1 {
			of = " (" + repeatLabel(r, i) + ")"
		}
		charts = append(charts, clusterRun(r, samples, of, data)...)
	}
	return charts
}

// clusterSamplesOf reads r's cluster samples from its tick log; none
// when it has none or the log cannot be read (the page is drawn anyway).
func clusterSamplesOf(r *result.Result) []cluster.Sample {
	if r.Cluster == nil || r.Cluster.During == nil || r.TickLog == "" || r.Path == "" {
		return nil
	}
	samples, err := result.ClusterSamples(filepath.Join(filepath.Dir(r.Path), r.TickLog))
	if err != nil {
		return nil
	}
	return samples
}

// clusterRun draws one run's cluster charts, their titles ending in of.
func clusterRun(r *result.Result, samples []cluster.Sample, of string, data dataset) []chart {
	top := samples[len(samples)-1].At
	var cT, cOps, cMiB, kT, kOps, kMiB, pT, pgs []float64
	for _, s := range r.Series {
		if s.Dur <= 0 {
			continue
		}
		var ops, bytes float64
		for _, k := range s.Kinds {
			ops, bytes = ops+float64(k.Ops), bytes+float64(k.Bytes)
		}
		cT, cOps, cMiB = append(cT, s.T), append(cOps, ops/s.Dur), append(cMiB, bytes/s.Dur/(1<<20))
		top = max(top, s.T)
	}
	for _, s := range samples {
		if s.Client != nil {
			kT = append(kT, s.At)
			kOps = append(kOps, s.Client.ReadOps+s.Client.WriteOps)
			kMiB = append(kMiB, (s.Client.ReadBytes+s.Client.WriteBytes)/(1<<20))
		}
		if s.Health != "" {
			n := 0
			for state, count := range s.PGStates {
				if state != "active+clean" {
					n += count
				}
			}
			pT, pgs = append(pT, s.At), append(pgs, float64(n))
		}
	}
	rates := func(kind, title, unit string, client, cl []float64) chart {
		c := chart{Kind: kind, Title: title + of, XLabel: "time (s)", YLabel: unit, XUnit: "s", YUnit: unit, Data: data}
		lineChart(&c, []series{
			{label: "client (cephbench)", colour: colour(0), width: 1.8, xs: cT, ys: client},
			{label: "cluster (the run's pools)", colour: colour(1), width: 1.8, dash: "6 4", xs: kT, ys: cl},
		}, secondsAxis(top), false)
		c.Legend = legendOf(c.Lines)
		return c
	}
	pg := chart{Kind: "cluster-pgs", Title: "PGs not active+clean" + of, XLabel: "time (s)", YLabel: "PGs", XUnit: "s", YUnit: "PGs", Data: data}
	lineChart(&pg, []series{{label: "PGs not active+clean", colour: colour(2), width: 1.8, xs: pT, ys: pgs}}, secondsAxis(top), false)
	charts := []chart{
		rates("cluster-ops", "Client and cluster ops per second", "ops/s", cOps, kOps),
		rates("cluster-mibs", "Client and cluster MiB per second", "MiB/s", cMiB, kMiB),
		pg,
	}
	for i := range charts {
		charts[i].Spans = eventSpans(r.Cluster.During.Events, top)
		if len(charts[i].Spans) > 0 {
			charts[i].Note = "Shaded: what the cluster did (hover for what)."
		}
	}
	queue, commit := osdSeconds(samples)
	for _, m := range []struct {
		kind, measure string
		values        map[int]map[int]float64
	}{{"osd-queue", "queue latency", queue}, {"osd-commit", "commit latency", commit}} {
		if len(m.values) > 0 {
			charts = append(charts, heatChart(m.kind, m.measure, of, m.values, slowIDs(r.Cluster.During, m.measure), top, data))
		}
	}
	return charts
}

// eventSpans places the events on a time axis from 0 to top: a PG state
// over the samples that saw it, anything else as a thin mark.
func eventSpans(events []cluster.Event, top float64) []span {
	x0, _, x1, _ := plotRect(chartW, chartH)
	xa := secondsAxis(top)(x0, x1)
	var out []span
	for _, e := range events {
		from, to := xa.pos(e.At), xa.pos(max(e.Until, e.At))
		out = append(out, span{X: num(from - 1), W: num(max(to-from, 0) + 2), Label: e.String()})
	}
	return out
}

// osdSeconds is each OSD's queue and commit latency, in milliseconds, by
// second of the run (0: its first second).
func osdSeconds(samples []cluster.Sample) (queue, commit map[int]map[int]float64) {
	queue, commit = map[int]map[int]float64{}, map[int]map[int]float64{}
	put := func(m map[int]map[int]float64, id, sec int, v float64) {
		if m[id] == nil {
			m[id] = map[int]float64{}
		}
		m[id][sec] = max(m[id][sec], v)
	}
	for _, s := range samples {
		// A sample's values are of the second ending at it; the first
		// sample's, if any, of before the run.
		sec := int(math.Round(s.At)) - 1
		if sec < 0 {
			continue
		}
		for _, q := range s.OSDQueue {
			put(queue, q.ID, sec, q.Ms)
		}
		for _, p := range s.OSDPerf {
			put(commit, p.ID, sec, p.Commit)
		}
	}
	return queue, commit
}

func slowIDs(d *cluster.During, measure string) map[int]bool {
	ids := map[int]bool{}
	for _, o := range d.SlowOSDs {
		if o.Measure == measure {
			ids[o.ID] = true
		}
	}
	return ids
}

// heatChart draws values (OSD → second → ms) as one row per OSD and one
// column per second sampled, or, past maxPoints seconds, per run of
// seconds showing their highest, on a time axis from 0 to top; grey where an OSD had no value, the slow OSDs
// outlined. Colour is on a log scale, light fast, dark slow.
func heatChart(kind, measure, of string, values map[int]map[int]float64, slow map[int]bool, top float64, data dataset) chart {
	ids := make([]int, 0, len(values))
	lo, hi, secs := math.Inf(1), 0.0, 0
	for id, bySec := range values {
		ids = append(ids, id)
		for sec, v := range bySec {
			secs = max(secs, sec+1)
			if v > 0 {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	sort.Ints(ids)
	per := (secs + maxPoints - 1) / maxPoints
	cols := (secs + per - 1) / per
	c := chart{Kind: kind, Title: "Per-OSD " + measure + of, XLabel: "time (s)", XUnit: "s", Data: data, W: chartW,
		H: padTop + len(ids)*heatRowH + padBot}
	x0, y0, x1, y1 := plotRect(c.W, c.H)
	c.Plot = plotArea(x0, y0, x1, y1)
	xa := secondsAxis(top)(x0, x1)
	c.XTicks = xa.tickList()
	cell := "an OSD's second"
	if per > 1 {
		cell = fmt.Sprintf("%d seconds of an OSD, their highest", per)
	}
	c.Note = fmt.Sprintf("Each cell is %s, from pale (%s or less) to dark red (%s or more) on a log scale; these range from %s to %s; grey: no value.",
		cell, millisLabel(heatLowMs), millisLabel(heatHighMs), millisLabel(lo), millisLabel(hi))
	if len(slow) > 0 {
		c.Note += " Outlined: the slow OSD named in the summary."
	}
	h := &heatmap{}
	for i, id := range ids {
		y := y0 + float64(i*heatRowH)
		row := heatRow{ID: id, Label: fmt.Sprintf("osd.%d", id), Y: num(y + 1), H: num(heatRowH - 2), LabelY: num(y + heatRowH/2 + 4),
			Slow: slow[id], OutlineX: num(x0), OutW: num(x1 - x0)}
		for col := range cols {
			v, seen := 0.0, false
			for sec := col * per; sec < (col+1)*per; sec++ {
				if w, ok := values[id][sec]; ok {
					v, seen = max(v, w), true
				}
			}
			fill := "#d9d9d9"
			if seen {
				fill = heatColour(v)
			}
			// Cells overlap by half a unit: no seam shows between them.
			from, to := xa.pos(float64(col*per)), xa.pos(float64((col+1)*per))
			row.Cells = append(row.Cells, heatCell{X: num(from), W: num(to - from + 0.5), Fill: fill})
		}
		h.Rows = append(h.Rows, row)
	}
	c.Heat = h
	return c
}

func millisLabel(ms float64) string {
	if math.IsInf(ms, 0) {
		return "0 ms"
	}
	return val(ms) + " ms"
}

// The heatmaps' colour scale, in milliseconds, the same on every chart so
// that colours compare across runs and measures: a healthy OSD's
// fraction of a millisecond is pale, a 2 ms commit light, a slow OSD's
// hundreds of milliseconds dark.
const heatLowMs, heatHighMs = 0.05, 500

// heatColour is v's colour between pale yellow (heatLowMs and below) and
// dark red (heatHighMs and above), on a log scale.
func heatColour(v float64) string {
	f := 0.0
	if v > 0 {
		f = min(max(math.Log(v/heatLowMs)/math.Log(heatHighMs/heatLowMs), 0), 1)
	}
	from, to := [3]float64{255, 247, 188}, [3]float64{153, 0, 13}
	var rgb [3]int
	for i := range rgb {
		rgb[i] = int(math.Round(from[i] + f*(to[i]-from[i])))
	}
	return fmt.Sprintf("#%02x%02x%02x", rgb[0], rgb[1], rgb[2])
}
