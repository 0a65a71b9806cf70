package htmlreport

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/result"
	"golang.org/x/net/html"
)

// watchedSet is one 20 s write on a Ceph pool the cluster was watched
// during, its samples in the tick log beside it: 3 OSDs, osd.1's queue
// slow throughout, osd.2 with no queue latency at 5 s, 4 PGs peering
// from 8 s to 10 s. seconds is how long the run and its watch lasted.
func watchedSet(t *testing.T, seconds int) *aggregate.Set {
	t.Helper()
	r := makeResult(t, "write-4k", "rados://cbpool", 1, 1, map[string]kindRun{
		"write": {bs: 4096, perSecond: steady(seconds, 1000), latency: lognormal(7, 2e6)},
	})
	var samples []cluster.Sample
	var log strings.Builder
	for sec := range seconds {
		s := cluster.Sample{At: float64(sec), Every: 1, Health: "HEALTH_OK", PGStates: map[string]int{"active+clean": 32},
			Client: &cluster.ClientIO{WriteOps: 950, WriteBytes: 950 * 4096}}
		if sec >= 8 && sec <= 10 {
			s.PGStates = map[string]int{"active+clean": 28, "peering": 4}
		}
		for id, ms := range []float64{0.6, 40, 0.7} {
			if id != 2 || sec != 5 {
				s.OSDQueue = append(s.OSDQueue, cluster.OSDQueue{ID: id, Ms: ms})
			}
			s.OSDPerf = append(s.OSDPerf, cluster.OSDLatency{ID: id, Commit: 1, Apply: 1})
		}
		samples = append(samples, s)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		log.WriteString("#cluster " + string(b) + "\n")
	}
	dir := t.TempDir()
	r.Path, r.TickLog = filepath.Join(dir, "write-4k.json"), "write-4k.ticks"
	if err := os.WriteFile(filepath.Join(dir, r.TickLog), []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Cluster = &cluster.Pair{During: cluster.Summarize(samples)}
	return &aggregate.Set{Results: []*result.Result{r}}
}

// chartOf is the one chart of kind on the page.
func chartOf(t *testing.T, doc *html.Node, kind string) *html.Node {
	t.Helper()
	figs := findAll(doc, isTag("figure", "data-chart", kind))
	if len(figs) != 1 {
		t.Fatalf("%d %s charts; want 1", len(figs), kind)
	}
	return figs[0]
}

func TestTheClusterIsDrawnBesideTheClient(t *testing.T) {
	doc := parse(t, render(t, watchedSet(t, 20), "watched"))
	for _, kind := range []string{"cluster-ops", "cluster-mibs", "cluster-pgs"} {
		fig := chartOf(t, doc, kind)
		lines := findAll(fig, isTag("polyline"))
		events := findAll(fig, isTag("rect", "class", "event"))
		if len(events) != 1 || events[0].FirstChild == nil || events[0].FirstChild.FirstChild == nil ||
			events[0].FirstChild.FirstChild.Data != "peering on 4 PGs from 8 s to 10 s" {
			t.Errorf("%s: %d events; want peering from 8 s to 10 s shaded", kind, len(events))
		}
		want := 2 // client and cluster
		if kind == "cluster-pgs" {
			want = 1
		}
		if len(lines) != want {
			t.Errorf("%s: %d lines; want %d", kind, len(lines), want)
		}
	}
	pgs := findAll(chartOf(t, doc, "cluster-pgs"), isTag("polyline"))[0]
	if v := attrOf(pgs, "data-v"); !strings.HasPrefix(v, "0 0 0 0 0 0 0 0 4 4 4 0") {
		t.Errorf("PGs not active+clean by second: %s", v)
	}
}

// A heatmap has a row per OSD and a column per second, grey where an OSD
// had no value, and the slow OSD outlined.
func TestOSDLatencyHeatmaps(t *testing.T) {
	doc := parse(t, render(t, watchedSet(t, 20), "watched"))
	rows := findAll(chartOf(t, doc, "osd-queue"), isTag("g", "class", "osd"))
	if len(rows) != 3 {
		t.Fatalf("%d rows; want one per OSD", len(rows))
	}
	for i, row := range rows {
		cells := findAll(row, isTag("rect", "class", "cell"))
		// The seconds ending at the samples from 1 s to 19 s.
		if len(cells) != 19 {
			t.Errorf("osd.%s: %d columns; want 19", attrOf(row, "data-osd"), len(cells))
			continue
		}
		grey := attrOf(cells[4], "fill") == "#d9d9d9"
		if grey != (i == 2) {
			t.Errorf("osd.%d from 4 s to 5 s: fill %s; want grey for osd.2 alone, which had no value then", i, attrOf(cells[4], "fill"))
		}
		outlined := len(findAll(row, isTag("rect", "class", "slow")))
		if (outlined == 1) != (i == 1) || (attrOf(row, "data-slow") == "true") != (i == 1) {
			t.Errorf("osd.%d: %d outlines; want osd.1 alone outlined", i, outlined)
		}
	}
	if dark, light := attrOf(findAll(rows[1], isTag("rect", "class", "cell"))[0], "fill"), attrOf(findAll(rows[0], isTag("rect", "class", "cell"))[0], "fill"); dark == light {
		t.Errorf("osd.1 at 40 ms and osd.0 at 0.6 ms have one colour, %s", dark)
	}
	if n := len(findAll(chartOf(t, doc, "osd-commit"), isTag("rect", "class", "slow"))); n != 0 {
		t.Errorf("%d OSDs outlined on commit latency, where none is slow", n)
	}
}

// Past 600 seconds, a column is several seconds, showing their highest.
func TestALongRunsHeatmapMergesSeconds(t *testing.T) {
	doc := parse(t, render(t, watchedSet(t, 1500), "long"))
	fig := chartOf(t, doc, "osd-queue")
	rows := findAll(fig, isTag("g", "class", "osd"))
	cells := findAll(rows[2], isTag("rect", "class", "cell"))
	if len(cells) != 500 {
		t.Errorf("%d columns for 1499 seconds; want 500, of 3 seconds each", len(cells))
	}
	// osd.2's fifth second, without a value, is merged with the fourth and
	// sixth, which have one.
	if attrOf(cells[1], "fill") == "#d9d9d9" {
		t.Error("a column of 3 seconds, one without a value, is grey")
	}
	if note := findAll(fig, isTag("span", "class", "note")); len(note) != 1 || !strings.Contains(note[0].FirstChild.Data, "Each cell is 3 seconds of an OSD, their highest") {
		t.Error("the note does not say a cell is 3 seconds")
	}
}
