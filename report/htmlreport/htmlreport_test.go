package htmlreport

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/result/netresult"
	"github.com/cephbench/cephbench/spec"
)

// rowCells returns the text of each cell of the summary row of group.
func rowCells(t *testing.T, doc *html.Node, group string) []string {
	t.Helper()
	rows := findAll(doc, isTag("tr", "data-group", group))
	if len(rows) != 1 {
		t.Fatalf("%d summary rows for %s; want 1", len(rows), group)
	}
	var cells []string
	for _, td := range findAll(rows[0], isTag("td")) {
		cells = append(cells, text(td))
	}
	return cells
}

func TestSummaryRowsHoldTheFiguresAcrossRepeats(t *testing.T) {
	// Repeat 1: 1000 IOPS for 10 s, every op 1 ms. Repeat 2: 1200 IOPS
	// (1100, 1300, 1200, ...), every 50th op 50 ms. Merged: 22000 ops, 240
	// of them slow, so p99 is 50 ms and the mean (21760×1 + 240×50)/22000
	// = 1.53 ms.
	oneMS := func(sec, i int) int64 { return 1e6 }
	slowTail := func(sec, i int) int64 {
		if i%50 == 0 {
			return 50e6
		}
		return 1e6
	}
	r1 := makeResult(t, "randread-4k", "file:///data/a.dat", 1, 2, map[string]kindRun{
		"read": {bs: 4096, perSecond: steady(10, 1000), latency: oneMS},
	})
	r2 := makeResult(t, "randread-4k", "file:///data/a.dat", 2, 2, map[string]kindRun{
		"read": {bs: 4096, perSecond: []int64{1100, 1300, 1200, 1100, 1300, 1200, 1100, 1300, 1200, 1200}, latency: slowTail},
	})
	r1.CPU.Percent, r2.CPU.Percent = 40, 50
	r1.Disks = []result.DiskUsage{{Name: "sda", Util: 80}}
	r2.Disks = []result.DiskUsage{{Name: "sda", Util: 90}, {Name: "sdb", Util: 10}}
	r2.Errors = map[string]int64{"read": 3}
	s := r2.Ops["read"]
	s.Errors = 3
	r2.Ops["read"] = s
	page := render(t, &aggregate.Set{Results: []*result.Result{r1, r2}}, "disk a")
	doc := parse(t, page)

	want := []string{
		"randread-4k", "file:///data/a.dat", "read", "4K", "2",
		"1100", "1000", "1200", "141", // IOPS avg min max stddev
		"4.3", "3.9", "4.7", "0.6", // MiB/s: 4096 B × IOPS
		"1.53", "50.0", // latency avg, p99 in ms
		"45.0", "85.0", "3", // CPU, busiest disk, errors
	}
	if got := rowCells(t, doc, "g1"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("summary row\n got %q\nwant %q", got, want)
	}
	if title := findAll(doc, isTag("title")); len(title) != 1 || text(title[0]) != "disk a" {
		t.Errorf("title %v", title)
	}
}

func TestEveryGroupHasItsCharts(t *testing.T) {
	set := realisticSet(t)
	doc := parse(t, render(t, set, "plan"))
	groups := set.Groups()
	if len(groups) != 6 {
		t.Fatalf("%d groups; want 6 (2 targets × read, write, seq write)", len(groups))
	}
	for i, g := range groups {
		id := "g" + strconv.Itoa(i+1)
		for _, kind := range []string{"bandwidth", "iops", "latency", "in-flight", "distribution", "repeats-iops", "repeats-bandwidth"} {
			cs := charts(doc, kind, "data-group", id)
			if len(cs) != 1 {
				t.Errorf("%s (%s %s on %s): %d %s charts; want 1", id, g.Step, g.Kind, g.Target, len(cs), kind)
				continue
			}
			if attrOf(cs[0], "data-step") != g.Step || attrOf(cs[0], "data-target") != g.Target || attrOf(cs[0], "data-kind") != g.Kind {
				t.Errorf("%s %s chart names %q %q %q", id, kind, attrOf(cs[0], "data-step"), attrOf(cs[0], "data-target"), attrOf(cs[0], "data-kind"))
			}
			if caption := findAll(cs[0], isTag("figcaption")); len(caption) != 1 || text(caption[0]) == "" {
				t.Errorf("%s %s chart has no title", id, kind)
			}
			if svg := findAll(cs[0], isTag("svg", "class", "canvas")); len(svg) != 1 || !strings.HasPrefix(attrOf(svg[0], "viewBox"), "0 0 ") {
				t.Errorf("%s %s chart: no scalable svg", id, kind)
			}
		}
		// One line per repeat: 20 seconds each.
		for _, kind := range []string{"bandwidth", "iops", "in-flight"} {
			lines := findAll(charts(doc, kind, "data-group", id)[0], isTag("polyline"))
			if len(lines) != 2 {
				t.Errorf("%s %s: %d lines; want one per repeat", id, kind, len(lines))
			}
			for _, l := range lines {
				if n := len(strings.Fields(attrOf(l, "points"))); n != 20 {
					t.Errorf("%s %s %s: %d points; want 20", id, kind, attrOf(l, "data-label"), n)
				}
			}
		}
		// p50, p99 and mean of each repeat.
		if lines := findAll(charts(doc, "latency", "data-group", id)[0], isTag("polyline")); len(lines) != 6 {
			t.Errorf("%s latency: %d lines; want 6", id, len(lines))
		}
		// Each repeat and the merged histogram.
		dist := findAll(charts(doc, "distribution", "data-group", id)[0], isTag("polyline"))
		if len(dist) != 3 || attrOf(dist[2], "data-label") != "all repeats" {
			t.Errorf("%s distribution: %d lines", id, len(dist))
		}
		if bars := findAll(charts(doc, "repeats-iops", "data-group", id)[0], isTag("g", "class", "bar")); len(bars) != 2 {
			t.Errorf("%s repeats-iops: %d bars; want 2", id, len(bars))
		}
	}
}

func TestDistributionFollowsTheMergedHistogram(t *testing.T) {
	// 1000 ops: 990 at 1 ms, 10 at 80 ms; p50 is 1 ms and p99.9 80 ms.
	lat := func(sec, i int) int64 {
		if i%100 == 0 {
			return 80e6
		}
		return 1e6
	}
	r := makeResult(t, "w", "null://", 1, 1, map[string]kindRun{"write": {bs: 4096, perSecond: steady(2, 500), latency: lat}})
	doc := parse(t, render(t, &aggregate.Set{Results: []*result.Result{r}}, "x"))
	cs := charts(doc, "distribution")
	if len(cs) != 1 {
		t.Fatalf("%d distribution charts; want 1", len(cs))
	}
	lines := findAll(cs[0], isTag("polyline"))
	if len(lines) != 1 {
		t.Fatalf("%d lines; want 1 for one repeat", len(lines))
	}
	xs, vs := strings.Fields(attrOf(lines[0], "data-x")), strings.Fields(attrOf(lines[0], "data-v"))
	if len(xs) != len(vs) || len(xs) < 100 {
		t.Fatalf("%d percentiles, %d values", len(xs), len(vs))
	}
	at := map[string]float64{}
	for i, x := range xs {
		v, err := strconv.ParseFloat(vs[i], 64)
		if err != nil {
			t.Fatal(err)
		}
		at[x] = v
	}
	for p, want := range map[string]float64{"0": 1e6, "50": 1e6, "90": 1e6, "99.9": 80e6} {
		if got, ok := at[p]; !ok || got < want*0.99 || got > want*1.01 {
			t.Errorf("p%s = %v (plotted %v); want about %v", p, got, ok, want)
		}
	}
	var ticks []string
	for _, tx := range findAll(cs[0], isTag("text", "class", "xtick")) {
		ticks = append(ticks, text(tx))
	}
	if got := strings.Join(ticks, " "); got != "0 50 90 99 99.9" {
		t.Errorf("percentile ticks %q; want 0 50 90 99 99.9 (1000 ops reach p99.9)", got)
	}
}

func TestTargetsAreComparedWhenAStepRanOnSeveral(t *testing.T) {
	set := realisticSet(t)
	doc := parse(t, render(t, set, "plan"))
	for _, c := range []struct{ step, kind string }{{"randrw-4k", "read"}, {"randrw-4k", "write"}, {"seqwrite-1M", "write"}} {
		for _, chart := range []string{"targets-iops", "targets-bandwidth"} {
			cs := charts(doc, chart, "data-step", c.step, "data-kind", c.kind)
			if len(cs) != 1 {
				t.Errorf("%s %s: %d %s charts; want 1", c.step, c.kind, len(cs), chart)
				continue
			}
			bars := findAll(cs[0], isTag("g", "class", "bar"))
			if len(bars) != 2 {
				t.Fatalf("%s %s %s: %d bars; want one per target", c.step, c.kind, chart, len(bars))
			}
			for i, target := range []string{"rbd://rbd/bench-img", "file:///mnt/nvme0/cephbench.dat"} {
				if got := text(bars[i]); got != target {
					t.Errorf("%s bar %d labelled %q; want %q", chart, i, got, target)
				}
				if w := findAll(bars[i], isTag("path", "class", "whisker")); len(w) != 1 {
					t.Errorf("%s bar %d: no min-max whisker across the 2 repeats", chart, i)
				}
			}
		}
	}
	// The faster target's bar is the longer.
	cs := charts(doc, "targets-iops", "data-step", "randrw-4k", "data-kind", "read")
	rects := findAll(cs[0], isTag("rect", "class", ""))
	var widths []float64
	for _, r := range rects {
		if attrOf(r, "fill") == "" {
			continue
		}
		w, _ := strconv.ParseFloat(attrOf(r, "width"), 64)
		widths = append(widths, w)
	}
	if len(widths) != 2 || widths[1] < 2*widths[0] {
		t.Errorf("bar widths %v; want the second about 2.6 times the first", widths)
	}

	one := &aggregate.Set{Results: set.Results[:2]}
	if doc := parse(t, render(t, one, "one target")); len(charts(doc, "targets-iops")) != 0 || len(charts(doc, "repeats-iops")) != 0 {
		t.Error("comparison charts for one target and one repeat")
	}
}

func TestNamesFromResultsAreEscaped(t *testing.T) {
	const evil = `<script>alert(1)</script>`
	r := makeResult(t, evil, "file:///tmp/<b>x</b>.dat", 1, 1, map[string]kindRun{
		"read": {bs: 4096, perSecond: steady(3, 100), latency: func(int, int) int64 { return 1e5 }},
	})
	r.Notes = []string{`"><img src=x onerror=alert(2)>`}
	r.Host.Hostname = `h"><svg onload=alert(3)>`
	page := render(t, &aggregate.Set{Results: []*result.Result{r}}, `title </title><script>alert(4)</script>`)
	for _, raw := range []string{evil, "<b>x</b>", "<img", "<svg onload", "</title><script>"} {
		if strings.Contains(page, raw) {
			t.Errorf("page holds %q unescaped", raw)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the step's name is not on the page, escaped")
	}
	doc := parse(t, page)
	if n := len(findAll(doc, isTag("script"))); n != 1 {
		t.Errorf("%d script elements; want the page's own only", n)
	}
	if n := len(findAll(doc, isTag("img"))); n != 0 {
		t.Errorf("%d img elements", n)
	}
	for _, e := range findAll(doc, func(*html.Node) bool { return true }) {
		for _, a := range e.Attr {
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("<%s %s=%q>", e.Data, a.Key, a.Val)
			}
		}
	}
	if cells := rowCells(t, doc, "g1"); cells[0] != evil {
		t.Errorf("name cell %q; want the name as text", cells[0])
	}
}

var external = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(src|href|xlink:href|action|poster|data)\s*=\s*["']?\s*(https?:)?//`),
	regexp.MustCompile(`(?i)url\(\s*["']?\s*(https?:)?//`),
	regexp.MustCompile(`(?i)@import`),
	regexp.MustCompile(`(?i)<script\b[^>]*\bsrc\s*=`),
	regexp.MustCompile(`(?i)<(img|iframe|object|embed|audio|video|source)\b`),
}

func TestPageLoadsNothingFromElsewhere(t *testing.T) {
	set := realisticSet(t)
	set.Results[0].Notes = []string{"see http://example.com/why for the reason"}
	page := render(t, set, "plan")
	for _, re := range external {
		if m := re.FindString(page); m != "" {
			t.Errorf("external reference %q", m)
		}
	}
	// The only URL on the page is the one in the note, as text.
	if got := regexp.MustCompile(`https?://`).FindAllStringIndex(page, -1); len(got) != 1 {
		t.Errorf("%d http(s) URLs on the page; want only the note's", len(got))
	}
	doc := parse(t, page)
	for _, l := range findAll(doc, isTag("link")) {
		if href := attrOf(l, "href"); !strings.HasPrefix(href, "data:") {
			t.Errorf("<link href=%q>", href)
		}
	}
	if n := len(findAll(doc, isTag("style"))); n != 1 {
		t.Errorf("%d style elements; want 1 inline", n)
	}
}

// saveNet writes a cephbench net result: 3 s of 100 MiB/s up, a
// round-trip histogram, and no op counts.
func saveNet(t *testing.T, dir string) string {
	t.Helper()
	h := metrics.NewHistogram()
	for i := range 1000 {
		_ = h.RecordValue(int64(50_000 + 10*i))
	}
	enc, err := h.EncodeV2()
	if err != nil {
		t.Fatal(err)
	}
	n := netresult.Result{
		Schema: netresult.Schema, Name: "net-up", Server: "10.0.0.2:5201",
		Params: netresult.Params{Streams: 4, Duration: spec.Duration(3 * time.Second)},
		Start:  t0, End: t0.Add(3 * time.Second),
		Up: &netresult.Throughput{Streams: 4, Receiver: netresult.Count{Bytes: 300 << 20, Seconds: 3, BitsPerSec: 8 * 100 << 20},
			PerSecond: metrics.Stats{Mean: 8 * 100 << 20, Min: 8 * 90 << 20, Max: 8 * 110 << 20, Samples: 3}},
		RTT: &netresult.RTT{RoundTrips: 1000, Latency: metrics.LatencyOf(h), Histogram: string(enc)},
	}
	for i, mib := range []int64{90, 110, 100} {
		n.Series = append(n.Series, netresult.Interval{Start: float64(i), End: float64(i + 1), Up: &netresult.IntervalSum{Bytes: mib << 20}})
	}
	b, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "net.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// edgeSet holds what a report must cope with: a network result (g1), a
// one-second run with zero latencies (g2), a result without series and
// half its latencies zero (g3), a 20000-second run (g4) and an
// interrupted one (g5).
func edgeSet(t *testing.T) *aggregate.Set {
	t.Helper()
	netSet, err := aggregate.Load(saveNet(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	zero := func(int, int) int64 { return 0 }
	short := makeResult(t, "one-second", "null://", 1, 1, map[string]kindRun{"read": {bs: 4096, perSecond: steady(1, 5000), latency: zero}})
	someZero := func(sec, i int) int64 { return int64(i%2) * 1000 }
	noSeries := makeResult(t, "no-series", "null://", 1, 1, map[string]kindRun{"read": {bs: 4096, perSecond: steady(2, 10), latency: someZero}})
	noSeries.Series = nil
	long := makeResult(t, "day-long", "null://", 1, 1, map[string]kindRun{"write": {bs: 4096, perSecond: steady(20000, 1), latency: func(s, i int) int64 { return int64(1000 + s%7) }}})
	cut := makeResult(t, "cut-short", "null://", 1, 1, map[string]kindRun{"read": {bs: 4096, perSecond: steady(4, 10), latency: func(int, int) int64 { return 2e5 }}})
	cut.Interrupted, cut.ElapsedSeconds = true, 3.5
	return &aggregate.Set{Results: append(netSet.Results, short, noSeries, long, cut)}
}

func TestEdgeCases(t *testing.T) {
	page := render(t, edgeSet(t), "edges")
	doc := parse(t, page)
	for _, bad := range []string{"NaN", "Inf", "e+", "e-0"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q: a number went wrong", bad)
		}
	}

	// The network result: bandwidth, no IOPS, no latency per second; its
	// distribution is of round trips.
	if cells := rowCells(t, doc, "g1"); cells[0] != "net-up" || cells[2] != "up" || cells[5] != "–" || cells[9] != "100.0" {
		t.Errorf("network row %q; want IOPS – and 100.0 MiB/s", cells)
	}
	if len(charts(doc, "bandwidth", "data-group", "g1")) != 1 || len(charts(doc, "iops", "data-group", "g1")) != 0 || len(charts(doc, "latency", "data-group", "g1")) != 0 {
		t.Error("network result: want a bandwidth chart and no IOPS or latency-per-second chart")
	}
	if d := charts(doc, "distribution", "data-group", "g1"); len(d) != 1 || !strings.Contains(text(d[0]), "Round-trip time") {
		t.Error("network result: no round-trip distribution")
	}

	// One second is one point, which only a marker shows.
	bw := charts(doc, "bandwidth", "data-group", "g2")
	if len(bw) != 1 || len(findAll(bw[0], isTag("circle", "class", "marker"))) != 1 {
		t.Error("one-second run: want a bandwidth chart with one marker")
	}
	// Zero latencies: nothing to draw on a log scale, and a sentence
	// that says so.
	if len(charts(doc, "latency", "data-group", "g2")) != 0 || len(charts(doc, "distribution", "data-group", "g2")) != 0 {
		t.Error("zero latencies: want no latency chart")
	}
	if s := findAll(doc, isTag("section", "id", "g2")); !strings.Contains(text(s[0]), "every latency recorded is 0 ns") {
		t.Error("zero latencies: no explanation")
	}

	// No series: a sentence instead of charts. Its zero latencies sit on
	// the floor of the distribution's log scale.
	section := findAll(doc, isTag("section", "id", "g3"))
	if len(section) != 1 || !strings.Contains(text(section[0]), "no per-second series") {
		t.Error("no-series result: no explanation")
	}
	dist := charts(doc, "distribution", "data-group", "g3")
	if len(dist) != 1 {
		t.Fatal("no distribution of half-zero latencies")
	}
	bottom := findAll(dist[0], isTag("line", "class", "axis"))[0]
	first := strings.Fields(attrOf(findAll(dist[0], isTag("polyline"))[0], "points"))[0]
	if y := strings.Split(first, ",")[1]; y != attrOf(bottom, "y1") {
		t.Errorf("p0 (0 ns) drawn at y %s; want the axis at %s", y, attrOf(bottom, "y1"))
	}
	for _, kind := range []string{"bandwidth", "iops", "latency"} {
		if len(charts(doc, kind, "data-group", "g3")) != 0 {
			t.Errorf("no-series result has a %s chart", kind)
		}
	}

	// 20000 seconds are drawn as at most 600 points of 34 seconds each.
	for _, l := range findAll(charts(doc, "iops", "data-group", "g4")[0], isTag("polyline")) {
		if n := len(strings.Fields(attrOf(l, "points"))); n > 600 || n < 500 {
			t.Errorf("day-long run: %d points", n)
		}
	}
	if !strings.Contains(text(charts(doc, "iops", "data-group", "g4")[0]), "Each point is 34 seconds") {
		t.Error("day-long run: the chart does not say its points are merged")
	}

	// The interrupted result is flagged in its row and at the top.
	if rows := findAll(doc, isTag("tr", "data-group", "g5", "class", "interrupted")); len(rows) != 1 || !strings.Contains(text(rows[0]), "interrupted") {
		t.Error("interrupted result: row not flagged")
	}
	if w := findAll(doc, isTag("div", "class", "warn")); len(w) != 1 || !strings.Contains(text(w[0]), "cut-short on null://, repeat 1 was interrupted after 3.5 s") {
		t.Error("interrupted result: no warning at the top")
	}
}

func TestContextShowsHostPlanClusterAndNotes(t *testing.T) {
	r := makeResult(t, "randread-4k", "rbd://rbd/img", 1, 1, map[string]kindRun{
		"read": {bs: 4096, perSecond: steady(3, 100), latency: func(int, int) int64 { return 1e6 }},
	})
	r.Notes = []string{"O_DIRECT fell back to buffered I/O"}
	r.Cluster = &cluster.Pair{Before: snapshot(), During: &cluster.During{Samples: 3, IntervalSeconds: 1,
		Events: []cluster.Event{{What: "osd.2 down", At: 2}}, Problems: []string{"ceph osd perf: timed out"}}}
	m := &result.Manifest{
		Schema: result.ManifestSchema, Plan: "nightly", Started: t0, Status: result.StepInterrupted,
		Vars: map[string]string{"pool": "rbd"},
		Steps: []result.ManifestStep{
			{ID: "s1", PlanStep: result.PlanStep{Step: "randread-4k", Target: "rbd://rbd/img", Repeat: 1, Of: 1}, Status: result.StepDone, Results: []string{"s1.json"}},
			{ID: "s2", PlanStep: result.PlanStep{Step: "randwrite-4k", Target: "rbd://rbd/img", Repeat: 1, Of: 1}, Status: result.StepFailed, Error: "rbd: image is locked"},
		},
	}
	set := &aggregate.Set{Sources: []aggregate.Source{{Path: "results/nightly", Manifest: m}}, Results: []*result.Result{r}}
	doc := parse(t, render(t, set, "nightly"))
	ctx := findAll(doc, isTag("section", "id", "context"))
	if len(ctx) != 1 {
		t.Fatal("no context section")
	}
	got := strings.Join(strings.Fields(text(ctx[0])), " ")
	for _, want := range []string{
		"bench-1", "Debian GNU/Linux 12", "6.1.0-18-amd64", "Xeon E-2288G", "32.0 GiB", "1.2.3", // host
		"Plan nightly", "results/nightly", "interrupted", "not finished", "pool=rbd", // manifest
		"s2", "randwrite-4k", "failed", "rbd: image is locked", "1 of 1", "s1.json",
		"before randread-4k on rbd://rbd/img", "HEALTH_WARN", "OSD_NEARFULL: 1 nearfull osd(s)", // cluster
		"3 mons", "2 mgrs", "12 OSDs (11 up, 12 in)", "128 active+clean", "3.0 TiB used of 12.0 TiB (25.0%), 9.0 TiB available",
		"mon: 18.2.4 (3), osd: 18.2.4 (12)", "replicated", "3/2", "1.0 TiB", "262144",
		"randread-4k on rbd://rbd/img, repeat 1: O_DIRECT fell back to buffered I/O", // note
		"plan step s2 (randwrite-4k on rbd://rbd/img) failed: rbd: image is locked",
		"randread-4k on rbd://rbd/img, repeat 1: cluster NOT AT REST during the run: osd.2 down at 2 s",
		"randread-4k on rbd://rbd/img, repeat 1: the cluster watch could not read: ceph osd perf: timed out",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("context lacks %q", want)
		}
	}
}

func TestAxisHelpers(t *testing.T) {
	for _, c := range []struct {
		ns   float64
		want string
	}{{52_300, "0.0523"}, {1_234_000, "1.23"}, {10e6, "10.0"}, {123.4e6, "123"}, {40, "0.000040"}} {
		if got := ms(c.ns); got != c.want {
			t.Errorf("ms(%v) = %q; want %q", c.ns, got, c.want)
		}
	}
	a := linearAxis(4321, 0, 100, plainTick)
	var labels []string
	for _, tk := range a.tickList() {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0 1000 2000 3000 4000 5000" {
		t.Errorf("ticks for 4321: %q", got)
	}
	l := logAxis(0, 0, 100, 0, durationTick)
	if p := l.pos(0); p != 100 {
		t.Errorf("a zero on an empty log axis at %v; want its floor", p)
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{300, 2e6, "1µs 10µs 100µs 1ms"},
		{1000, 1006, "500ns 1µs 2µs"},
		{2.1e6, 9.5e6, "1ms 2ms 5ms 10ms 20ms"},
	} {
		labels = nil
		for _, tk := range logAxis(c.lo, c.hi, 100, 0, durationTick).tickList() {
			labels = append(labels, tk.Label)
		}
		if got := strings.Join(labels, " "); got != c.want {
			t.Errorf("log ticks for %v to %v ns: %q; want %q", c.lo, c.hi, got, c.want)
		}
	}
}

// Results saved before the queue occupancy was measured have no chart of
// it, rather than one flat at zero.
func TestNoInFlightChartWithoutOccupancy(t *testing.T) {
	set := realisticSet(t)
	for _, r := range set.Results {
		for i := range r.Series {
			r.Series[i].MeanInFlight = 0
		}
	}
	doc := parse(t, render(t, set, "plan"))
	if n := len(charts(doc, "in-flight")); n != 0 {
		t.Errorf("%d charts of ops in flight from results without them", n)
	}
	if n := len(charts(doc, "iops")); n == 0 {
		t.Error("no IOPS chart either: the page did not render its series")
	}
}
