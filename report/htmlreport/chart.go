package htmlreport

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Charts are drawn in viewBox units; the browser scales them to the page.
const (
	chartW   = 640
	chartH   = 300
	padLeft  = 70
	padRight = 16
	padTop   = 14
	padBot   = 44

	// maxPoints bounds a line's points: a day-long run must not make a
	// page of megabytes, and a screen has fewer pixels than that anyway.
	maxPoints = 600
	// markersUpTo is the most points a line has that still gets a marker
	// on each: a one-second run is one point, which a line cannot show.
	markersUpTo = 30

	barRow = 36 // a horizontal bar's label and bar
)

// palette is Tableau 10: distinct hues that stay distinct in print.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

func colour(i int) string { return palette[i%len(palette)] }

// chart is one figure, ready for the chart template: every position is in
// viewBox units and every number a string.
type chart struct {
	// Kind names what the chart shows (data-chart), for readers and tests.
	Kind   string
	Title  string
	Note   string
	Data   dataset
	W, H   int
	Plot   rect
	XLabel string
	YLabel string
	// XUnit and YUnit tell the tooltip how to print values: "s", "%"
	// (a percentile), "ns" (a latency) or a rate's unit.
	XUnit, YUnit string
	XTicks       []tick
	YTicks       []tick
	Lines        []line
	Bars         []bar
	Legend       []legendItem
	// Spans are the cluster's events, shaded on a time axis; Heat, a
	// heatmap's rows, drawn instead of lines.
	Spans []span
	Heat  *heatmap
}

// dataset names what a chart is about, for its data- attributes.
type dataset struct {
	Group, Step, Target, Kind, Targets string
}

// rect is the plot area: its corner, size, far corner and centre.
type rect struct{ X, Y, W, H, X2, Y2, CX, CY string }

func plotArea(x0, y0, x1, y1 float64) rect {
	return rect{num(x0), num(y0), num(x1 - x0), num(y1 - y0), num(x1), num(y1), num((x0 + x1) / 2), num((y0 + y1) / 2)}
}

// tick is a tick mark and its label at Pos along its axis.
type tick struct {
	Pos   string
	Label string
}

type line struct {
	Label   string
	Colour  string
	Dash    string
	Width   string
	Points  string
	Markers []point
	// Xs and Vs are the plotted values (not positions), for the tooltip.
	Xs, Vs string
}

type point struct{ X, Y string }

type bar struct {
	X, Y, W, H string
	Colour     string
	Label      string
	LabelY     string
	Tip        string
	// Whisker spans min to max across repeats; nil for a single value.
	Whisker *whisker
}

type whisker struct{ X1, X2, Y, Y1, Y2 string }

type legendItem struct {
	Label  string
	Colour string
	Dash   string
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// val prints a value for the tooltip: five significant digits, and no
// exponent, which a reader would have to decode.
func val(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 5, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// axis maps a domain onto a range of viewBox units, linearly or on a log
// scale.
type axis struct {
	lo, hi float64 // domain; log10 of it on a log axis
	r0, r1 float64
	log    bool
	ticks  []float64
	format func(float64) string
}

func (a *axis) pos(v float64) float64 {
	if a.log {
		if v <= 0 {
			return a.r0
		}
		v = math.Log10(v)
	}
	f := 0.0
	if a.hi > a.lo {
		f = (v - a.lo) / (a.hi - a.lo)
	}
	f = min(max(f, 0), 1)
	return a.r0 + f*(a.r1-a.r0)
}

func (a *axis) tickList() []tick {
	ts := make([]tick, 0, len(a.ticks))
	for _, v := range a.ticks {
		ts = append(ts, tick{Pos: num(a.pos(v)), Label: a.format(v)})
	}
	return ts
}

// linearAxis runs from 0 to a round number at or above top, with four to
// ten round ticks.
func linearAxis(top float64, r0, r1 float64, format func(v, step float64) string) *axis {
	top, step := roundStep(top)
	return ticked(math.Ceil(top/step-1e-9)*step, step, r0, r1, format)
}

// tightAxis runs from 0 to top exactly, with round ticks inside: time
// ends when the run did.
func tightAxis(top float64, r0, r1 float64, format func(v, step float64) string) *axis {
	top, step := roundStep(top)
	return ticked(top, step, r0, r1, format)
}

// roundStep picks a round tick step that cuts 0 to top in about five.
func roundStep(top float64) (float64, float64) {
	if !(top > 0) || math.IsInf(top, 0) {
		top = 1
	}
	rough := top / 5
	mag := math.Pow(10, math.Floor(math.Log10(rough)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= rough {
			step = m * mag
			break
		}
	}
	return top, step
}

func ticked(hi, step, r0, r1 float64, format func(v, step float64) string) *axis {
	a := &axis{lo: 0, hi: hi, r0: r0, r1: r1}
	for i := 0; float64(i)*step <= hi*(1+1e-9); i++ {
		a.ticks = append(a.ticks, float64(i)*step)
	}
	a.format = func(v float64) string { return format(v, step) }
	return a
}

// logAxis spans the positive values in [lo, hi] with some room, from
// and to a 1, 2 or 5 times a power of ten; values at or below zero are
// drawn on the axis' floor, since a log scale has no place for them.
// Ticks are at 1, 2 and 5 times powers of ten over two decades or less,
// at powers of ten over more.
func logAxis(lo, hi float64, r0, r1 float64, format func(float64) string) *axis {
	if !(hi > 0) {
		lo, hi = 1, 10
	}
	if !(lo > 0) || lo > hi {
		lo = hi
	}
	bottom, top := roundDown125(lo/1.5), roundUp125(hi*1.2)
	a := &axis{lo: math.Log10(bottom), hi: math.Log10(top), r0: r0, r1: r1, log: true, format: format}
	fine := a.hi-a.lo <= 2
	for d := math.Floor(a.lo); d <= math.Ceil(a.hi); d++ {
		for _, m := range []float64{1, 2, 5} {
			if v := m * math.Pow(10, d); v >= bottom*(1-1e-9) && v <= top*(1+1e-9) && (fine || m == 1) {
				a.ticks = append(a.ticks, v)
			}
		}
	}
	return a
}

// roundDown125 is the largest 1, 2 or 5 times a power of ten at or below
// v; roundUp125 the smallest at or above.
func roundDown125(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*d <= v*(1+1e-9) {
			return m * d
		}
	}
	return d
}

func roundUp125(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*d >= v*(1-1e-9) {
			return m * d
		}
	}
	return 10 * d
}

// plainTick prints a linear tick with as many decimals as its step needs.
func plainTick(v, step float64) string {
	decimals := 0
	if step < 1 {
		decimals = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	if v >= 1e6 && decimals == 0 {
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	}
	if v >= 1e4 && decimals == 0 {
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// durationTick prints a latency in nanoseconds with its unit: "200µs".
func durationTick(ns float64) string {
	for _, u := range []struct {
		unit string
		ns   float64
	}{{"s", 1e9}, {"ms", 1e6}, {"µs", 1e3}} {
		if ns >= u.ns {
			return strconv.FormatFloat(ns/u.ns, 'g', 3, 64) + u.unit
		}
	}
	return strconv.FormatFloat(ns, 'g', 3, 64) + "ns"
}

func plotRect(w, h int) (x0, y0, x1, y1 float64) {
	return padLeft, padTop, float64(w - padRight), float64(h - padBot)
}

// series is one line's values before it is placed on axes.
type series struct {
	label  string
	colour string
	dash   string
	width  float64
	xs, ys []float64
	// xv are the x values the tooltip prints when they differ from xs
	// (a percentile plotted on a transformed axis); nil otherwise.
	xv []float64
}

// lineChart places lines on a chart with the x axis xAxis makes for the
// plot's horizontal range, and y from 0 (linear) or on a log scale of
// latencies.
func lineChart(c *chart, ss []series, xAxis func(x0, x1 float64) *axis, yLog bool) {
	c.W, c.H = chartW, chartH
	x0, y0, x1, y1 := plotRect(c.W, c.H)
	c.Plot = plotArea(x0, y0, x1, y1)
	xa := xAxis(x0, x1)
	var ya *axis
	if yLog {
		lo, hi := math.Inf(1), 0.0
		for _, s := range ss {
			for _, y := range s.ys {
				if y > 0 {
					lo, hi = min(lo, y), max(hi, y)
				}
			}
		}
		ya = logAxis(lo, hi, y1, y0, durationTick)
	} else {
		top := 0.0
		for _, s := range ss {
			for _, y := range s.ys {
				top = max(top, y)
			}
		}
		ya = linearAxis(top*1.05, y1, y0, plainTick)
	}
	c.XTicks, c.YTicks = xa.tickList(), ya.tickList()
	for _, s := range ss {
		var pts, xs, vs strings.Builder
		l := line{Label: s.label, Colour: s.colour, Dash: s.dash, Width: num(s.width)}
		for i := range s.xs {
			px, py := num(xa.pos(s.xs[i])), num(ya.pos(s.ys[i]))
			if i > 0 {
				pts.WriteByte(' ')
				xs.WriteByte(' ')
				vs.WriteByte(' ')
			}
			pts.WriteString(px + "," + py)
			if s.xv != nil {
				xs.WriteString(val(s.xv[i]))
			} else {
				xs.WriteString(val(s.xs[i]))
			}
			vs.WriteString(val(s.ys[i]))
			if len(s.xs) <= markersUpTo {
				l.Markers = append(l.Markers, point{px, py})
			}
		}
		l.Points, l.Xs, l.Vs = pts.String(), xs.String(), vs.String()
		c.Lines = append(c.Lines, l)
	}
}

// barDatum is one bar: a value and, when spread says what they are, the
// extremes around it.
type barDatum struct {
	label  string
	colour string
	value  float64
	lo, hi float64
	spread string
}

// barChart draws horizontal bars, one row each with its label above it,
// so long target names stay readable, and a whisker from lo to hi on the
// bars that have a spread.
func barChart(c *chart, ds []barDatum, unit string) {
	c.W = chartW
	c.H = padTop + len(ds)*barRow + padBot
	_, y0, x1, y1 := plotRect(c.W, c.H)
	x0 := 16.0 // labels sit above the bars, so no room for y ticks
	c.Plot = plotArea(x0, y0, x1, y1)
	top := 0.0
	for _, d := range ds {
		top = max(top, d.hi, d.value)
	}
	xa := linearAxis(top*1.05, x0, x1, plainTick)
	c.XTicks = xa.tickList()
	for i, d := range ds {
		rowY := y0 + float64(i*barRow)
		b := bar{
			X: num(x0), Y: num(rowY + 16), W: num(xa.pos(d.value) - x0), H: "14",
			Colour: d.colour, Label: shorten(d.label, 90), LabelY: num(rowY + 12),
			Tip: d.label + ": " + val(d.value) + " " + unit,
		}
		if d.spread != "" {
			b.Tip += " (" + d.spread + " " + val(d.lo) + " to " + val(d.hi) + ")"
			b.Whisker = &whisker{X1: num(xa.pos(d.lo)), X2: num(xa.pos(d.hi)), Y: num(rowY + 23), Y1: num(rowY + 18), Y2: num(rowY + 28)}
		}
		c.Bars = append(c.Bars, b)
	}
}

// shorten cuts s to n runes, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// downsample merges runs of points into at most maxPoints: x is each
// run's last x, y what agg makes of its ys.
func downsample(xs, ys []float64, agg func([]float64) float64) ([]float64, []float64, int) {
	if len(xs) <= maxPoints {
		return xs, ys, 1
	}
	k := (len(xs) + maxPoints - 1) / maxPoints
	var ox, oy []float64
	for i := 0; i < len(xs); i += k {
		j := min(i+k, len(xs))
		ox = append(ox, xs[j-1])
		oy = append(oy, agg(ys[i:j]))
	}
	return ox, oy, k
}

func mean(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

func highest(vs []float64) float64 {
	m := vs[0]
	for _, v := range vs[1:] {
		m = max(m, v)
	}
	return m
}
