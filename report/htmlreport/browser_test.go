package htmlreport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/result"
)

// chromium finds a Chromium or Chrome binary on PATH.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// savePlanFolder saves set as a plan's results folder, with its manifest.
func savePlanFolder(t *testing.T, dir string, set *aggregate.Set) {
	t.Helper()
	m := &result.Manifest{
		Schema: result.ManifestSchema, Version: "1.2.3", Plan: "compare-targets", Started: t0, Finished: t0.Add(3 * time.Hour),
		Status: result.StepDone, Host: set.Results[0].Host, Vars: map[string]string{"runtime": "20s"},
	}
	for i, r := range set.Results {
		name := fmt.Sprintf("%02d-%s.json", i+1, r.Name)
		if err := r.Save(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		m.Steps = append(m.Steps, result.ManifestStep{ID: fmt.Sprintf("s%02d", i+1), PlanStep: *r.Plan, Status: result.StepDone, Results: []string{name}})
	}
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
}

// figure is what the browser made of one chart.
type figure struct {
	Chart, Group, Step, Kind string
	Width, Height            float64
	Lines                    []struct{ Points, Width, Height float64 }
	Bars                     []float64
	Title                    string
}

const figuresJS = `[...document.querySelectorAll('figure.chart')].map(f => {
	const svg = f.querySelector('svg.canvas');
	const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
	return {
		Chart: f.dataset.chart, Group: f.dataset.group || '', Step: f.dataset.step || '', Kind: f.dataset.kind || '',
		Width: box.width, Height: box.height,
		Lines: [...f.querySelectorAll('polyline.series')].map(p => {
			const b = p.getBoundingClientRect();
			return {Points: p.points.numberOfItems, Width: b.width, Height: b.height};
		}),
		Bars: [...f.querySelectorAll('g.bar rect')].map(r => r.getBoundingClientRect().width),
		Title: f.querySelector('figcaption').textContent,
	};
})`

// tab is a browser tab showing one page, and what the page logged,
// threw and requested.
type tab struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

func (tb *tab) note(format string, args ...any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.problems = append(tb.problems, fmt.Sprintf(format, args...))
}

// listen records console errors and warnings, exceptions, browser log
// errors and warnings, and any request that is not for a local file.
func (tb *tab) listen(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			tb.note("console.%s: %s", ev.Type, strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		desc := ""
		if d.Exception != nil {
			desc = d.Exception.Description
		}
		tb.note("exception at %d:%d: %s %s", d.LineNumber+1, d.ColumnNumber+1, d.Text, desc)
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			tb.note("log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		if u := ev.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
			tb.note("request to %s", u)
		}
	}
}

// openTab opens a new tab of the browser of parent on the page at path,
// closed when the test ends and given hangCheck for all the test does in it.
func openTab(t *testing.T, parent context.Context, path string) *tab {
	t.Helper()
	tb := &tab{}
	tctx, closeTab := chromedp.NewContext(parent, chromedp.WithListener(tb.listen))
	t.Cleanup(closeTab)
	ctx, cancel := context.WithTimeout(tctx, hangCheck)
	t.Cleanup(cancel)
	tb.ctx = ctx
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 1000), chromedp.Navigate("file://"+path)); err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	resources, err := chromedp.Run(ctx, chromedp.Evaluate[int](`performance.getEntriesByType('resource').length`))
	if err != nil {
		t.Fatal(err)
	}
	if resources != 0 {
		t.Errorf("%s loaded %d resources; want none", filepath.Base(path), resources)
	}
	return tb
}

func (tb *tab) figures(t *testing.T) []figure {
	t.Helper()
	figs, err := chromedp.Run(tb.ctx, chromedp.Evaluate[[]figure](figuresJS))
	if err != nil {
		t.Fatal(err)
	}
	return figs
}

// check fails the test on anything the page logged, threw or requested.
func (tb *tab) check(t *testing.T) {
	t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, p := range tb.problems {
		t.Error(p)
	}
}

func writePage(t *testing.T, path string, set *aggregate.Set, title string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, set, title); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPageInHeadlessChromium opens a report of a plan's results (two
// targets, two repeats, twenty seconds a run) in a real browser: the page
// must load nothing, log nothing, throw nothing, draw every chart with
// lines and bars of some size, and answer the mouse with a tooltip. A
// report of odd results must open as cleanly.
func TestPageInHeadlessChromium(t *testing.T) {
	bin := chromiumOrSkip(t)
	dir := t.TempDir()
	made := realisticSet(t)
	made.Results[0].Cluster = &cluster.Pair{Before: snapshot()}
	made.Results[3].Notes = []string{"O_DIRECT fell back to buffered I/O"}
	resultsDir := filepath.Join(dir, "results")
	savePlanFolder(t, resultsDir, made)
	set, err := aggregate.Load(resultsDir)
	if err != nil {
		t.Fatal(err)
	}
	pagePath := filepath.Join(dir, "report.html")
	writePage(t, pagePath, set, "compare-targets")

	bctx := browser(t, bin)
	page := openTab(t, bctx, pagePath)
	rows, err := chromedp.Run(page.ctx, chromedp.Evaluate[int](`document.querySelectorAll('table.summary tbody tr').length`))
	if err != nil {
		t.Fatal(err)
	}
	groups := set.Groups()
	if rows != len(groups) {
		t.Errorf("%d summary rows; want %d", rows, len(groups))
	}
	want := map[string]bool{}
	for i := range groups {
		for _, c := range []string{"bandwidth", "iops", "latency", "in-flight", "distribution", "repeats-iops", "repeats-bandwidth"} {
			want[fmt.Sprintf("%s g%d", c, i+1)] = true
		}
	}
	for _, sk := range [][2]string{{"randrw-4k", "read"}, {"randrw-4k", "write"}, {"seqwrite-1M", "write"}} {
		want["targets-iops "+sk[0]+" "+sk[1]] = true
		want["targets-bandwidth "+sk[0]+" "+sk[1]] = true
	}
	seen := map[string]bool{}
	for _, fg := range page.figures(t) {
		key := fg.Chart + " " + fg.Group
		if strings.HasPrefix(fg.Chart, "targets-") {
			key = fg.Chart + " " + fg.Step + " " + fg.Kind
		}
		if !want[key] || seen[key] {
			t.Errorf("unexpected chart %q", key)
		}
		seen[key] = true
		if fg.Width < 300 || fg.Height < 100 || strings.TrimSpace(fg.Title) == "" {
			t.Errorf("%s: drawn %gx%g px, title %q", key, fg.Width, fg.Height, fg.Title)
		}
		if strings.HasPrefix(fg.Chart, "targets-") || strings.HasPrefix(fg.Chart, "repeats-") {
			if len(fg.Bars) != 2 {
				t.Errorf("%s: %d bars; want 2", key, len(fg.Bars))
			}
			for _, w := range fg.Bars {
				if w < 5 {
					t.Errorf("%s: a bar %g px wide", key, w)
				}
			}
			continue
		}
		if len(fg.Lines) == 0 {
			t.Errorf("%s: no lines", key)
		}
		for _, l := range fg.Lines {
			if l.Points < 20 || l.Width < 100 || l.Height <= 0 {
				t.Errorf("%s: a line of %g points drawn %gx%g px", key, l.Points, l.Width, l.Height)
			}
		}
	}
	for key := range want {
		if !seen[key] {
			t.Errorf("chart %q missing", key)
		}
	}

	shot, err := chromedp.Run(page.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shotPath := os.Getenv("CEPHBENCH_SCREENSHOT")
	if shotPath == "" {
		shotPath = filepath.Join(t.TempDir(), "report.png")
	}
	if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	checkScreenshot(t, shot)

	tip := hover(t, page.ctx, `figure.chart[data-chart="bandwidth"][data-group="g1"] svg.canvas`)
	if !strings.Contains(tip, "repeat 1: ") || !strings.Contains(tip, "repeat 2: ") || !strings.Contains(tip, "MiB/s") {
		t.Errorf("tooltip over a bandwidth chart %q; want both repeats' MiB/s", tip)
	}
	tip = hover(t, page.ctx, `figure.chart[data-chart="targets-iops"] g.bar rect`)
	if !strings.Contains(tip, "rbd://rbd/bench-img: ") || !strings.Contains(tip, "2 repeats") {
		t.Errorf("tooltip over a target's bar %q", tip)
	}
	page.check(t)

	edgePath := filepath.Join(dir, "edges.html")
	writePage(t, edgePath, edgeSet(t), "edges")
	edges := openTab(t, bctx, edgePath)
	figs := edges.figures(t)
	if len(figs) < 8 {
		t.Errorf("%d charts in the report of odd results", len(figs))
	}
	for _, fg := range figs {
		if fg.Width < 300 || fg.Height < 100 {
			t.Errorf("odd results: %s %s drawn %gx%g px", fg.Chart, fg.Group, fg.Width, fg.Height)
		}
		for _, l := range fg.Lines {
			if l.Points < 1 {
				t.Errorf("odd results: %s %s has an empty line", fg.Chart, fg.Group)
			}
		}
	}
	if tip := hover(t, edges.ctx, `figure.chart[data-chart="distribution"][data-group="g3"] svg.canvas`); !strings.Contains(tip, "all ops: ") {
		t.Errorf("tooltip over a distribution %q", tip)
	}
	edges.check(t)
}

// chromiumOrSkip finds a browser, or skips the test where there is none
// and none is required.
func chromiumOrSkip(t *testing.T) string {
	t.Helper()
	bin := chromium()
	if bin == "" {
		if os.Getenv("CEPHBENCH_REQUIRE_BROWSER") != "" {
			t.Fatal("CEPHBENCH_REQUIRE_BROWSER is set but no chromium is on PATH (scripts/install-deps.sh installs it)")
		}
		t.Skip("no chromium on PATH: install it (scripts/install-deps.sh) to test the HTML report in a browser; CEPHBENCH_REQUIRE_BROWSER=1 makes this a failure")
	}
	return bin
}

// A watched run's cluster charts draw in a browser as cleanly: the
// heatmaps have their rows and the slow OSD's outline, the mouse over
// them throws nothing, and an event's shading says what happened.
func TestClusterChartsInHeadlessChromium(t *testing.T) {
	bin := chromiumOrSkip(t)
	dir := t.TempDir()
	pagePath := filepath.Join(dir, "watched.html")
	writePage(t, pagePath, watchedSet(t, 20), "watched")
	page := openTab(t, browser(t, bin), pagePath)
	drawn := map[string]bool{}
	for _, fg := range page.figures(t) {
		drawn[fg.Chart] = fg.Width >= 300 && fg.Height >= 60
	}
	for _, kind := range []string{"cluster-ops", "cluster-mibs", "cluster-pgs", "osd-queue", "osd-commit"} {
		if !drawn[kind] {
			t.Errorf("chart %s missing or drawn too small (%v)", kind, drawn)
		}
	}
	boxes, err := chromedp.Run(page.ctx, chromedp.Evaluate[[]float64](`[...document.querySelectorAll(
		'figure[data-chart="osd-queue"] g.osd')].map(g => g.getBoundingClientRect().height).concat(
		[...document.querySelectorAll('figure[data-chart="osd-queue"] rect.slow')].map(r => r.getBoundingClientRect().width))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(boxes) != 4 || boxes[0] < 5 || boxes[3] < 200 {
		t.Errorf("heatmap rows' heights and the outline's width %v px; want 3 rows, then an outline across the chart", boxes)
	}
	hover(t, page.ctx, `figure.chart[data-chart="osd-queue"] svg.canvas`)
	hover(t, page.ctx, `figure.chart[data-chart="cluster-ops"] rect.event`)
	page.check(t)
}

// hangCheck bounds the browser's start and each test's use of it. It is
// there to end a browser that hangs, not to time one: a loaded machine
// may take a minute to start Chromium.
const hangCheck = 5 * time.Minute

// shared is the one browser the package's tests open their tabs in:
// starting Chromium is the slow part, so it starts once.
var shared struct {
	once   sync.Once
	ctx    context.Context
	stop   func()
	failed error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.stop != nil {
		shared.stop()
	}
	os.Exit(code)
}

// browser is the package's headless bin, started by the first test that
// asks, with a profile of its own that goes when it stops.
func browser(t *testing.T, bin string) context.Context {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "htmlreport-browser-")
		if err != nil {
			shared.failed = err
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.Flag("disable-dev-shm-usage", true),
			// No name resolves: a page that reached out would fail loudly.
			chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
			chromedp.UserDataDir(filepath.Join(dir, "profile")),
			chromedp.WindowSize(1400, 1000),
		)
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelBrowser := chromedp.NewContext(actx)
		shared.ctx = bctx
		shared.stop = func() {
			cancelBrowser()
			cancelAlloc()
			os.RemoveAll(dir)
		}
		// The browser lives as long as the context of its first use, so
		// a start that hangs is ended by cancelling that.
		hung := time.AfterFunc(hangCheck, cancelBrowser)
		defer hung.Stop()
		if err := chromedp.Do(bctx); err != nil {
			shared.failed = fmt.Errorf("starting %s: %w", bin, err)
		}
	})
	if shared.failed != nil {
		t.Fatal(shared.failed)
	}
	return shared.ctx
}

// hover moves the mouse to the middle of the first element sel matches
// and returns the tooltip's text, empty when none shows.
func hover(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	quoted, err := json.Marshal(sel)
	if err != nil {
		t.Fatal(err)
	}
	box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
		const e = document.querySelector(`+string(quoted)+`);
		e.scrollIntoView({block: 'center'});
		const r = e.getBoundingClientRect();
		return [r.left + r.width / 2, r.top + r.height / 2];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0], box[1])); err != nil {
		t.Fatal(err)
	}
	tip, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const t = document.getElementById('tip'); return t.hidden ? '' : t.textContent; })()`))
	if err != nil {
		t.Fatal(err)
	}
	return tip
}

// checkScreenshot fails a screenshot that is not a full page of charts:
// a tall PNG with many colours, the chart palette's among them.
func checkScreenshot(t *testing.T, shot []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < 1000 || b.Dy() < 3000 {
		t.Errorf("screenshot %dx%d; want the whole page", b.Dx(), b.Dy())
	}
	colours := map[uint32]int{}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[(r>>8)<<16|(g>>8)<<8|bl>>8]++
		}
	}
	if len(colours) < 50 {
		t.Errorf("screenshot has %d colours; a drawn page has many", len(colours))
	}
	for _, c := range []uint32{0x4e79a7, 0xf28e2b} { // the first two series colours
		if colours[c] < 200 {
			t.Errorf("screenshot has %d pixels of #%06x; want lines and bars in it", colours[c], c)
		}
	}
}
