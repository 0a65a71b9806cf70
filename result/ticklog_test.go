package result

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/metrics"
)

// writeTicks logs n intervals of a collector whose reads start in the
// second one, the last interval 0.3s long, and returns the series the
// ticks carried.
func writeTicks(t *testing.T, path string, n int) []metrics.Second {
	t.Helper()
	l, err := createTickLog(path, time.Now(), os.O_EXCL)
	if err != nil {
		t.Fatal(err)
	}
	want := tickInto(l.Tick, n)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// tickInto gives n intervals, as writeTicks describes (with a mean in
// flight from the second on), to tick, and returns their series.
func tickInto(tick metrics.Subscriber, n int) []metrics.Second {
	c := metrics.NewCollector([]string{"read", "write", "get-ttfb"})
	rec := c.NewRecorder()
	var want []metrics.Second
	var elapsed time.Duration
	for i := range n {
		for j := range 100 * (i + 1) {
			rec.Record(1, time.Duration(j+1)*7*time.Microsecond, 4096, time.Duration(j))
			if i > 0 {
				rec.Record(0, time.Duration(j+1)*3*time.Microsecond, 1<<20, time.Duration(j))
			}
		}
		rec.RecordError(1, "EIO")
		elapsed += time.Second + time.Duration(i)*time.Microsecond
		if i == n-1 {
			elapsed += 300*time.Millisecond - time.Second
		}
		tk := c.Tick(elapsed)
		tk.MeanInFlight = float64(i) / 3 // none in the first
		want = append(want, tk.Second)
		tick(tk)
	}
	return want
}

// The log gives back exactly the series it was written from, and an
// HdrHistogram log reader reads its histograms.
func TestTickLogReadsBackTheSeries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.hlog")
	want := writeTicks(t, path, 5)
	got, err := ReadTickLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwritten %+v", got, want)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr := hdr.NewHistogramLogReader(f)
	var tags []string
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		tags = append(tags, h.Tag())
	}
	if len(tags) != 9 || tags[0] != "write" || tags[1] != "read" {
		t.Errorf("an HdrHistogram reader sees the histograms %v; want write, then read and write each second after", tags)
	}
}

// A log whose last interval was cut short (the process died while writing
// it) reads back without it; a log damaged before its end is refused.
func TestTickLogCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.hlog")
	want := writeTicks(t, path, 3)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := strings.LastIndex(string(b), "#tick")
	for _, cut := range []int{last + 3, len(b) - 10, len(b) - 1} {
		if err := os.WriteFile(path, b[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadTickLog(path)
		if err != nil || !reflect.DeepEqual(got, want[:2]) {
			t.Errorf("cut at %d of %d: %d intervals, %v; want the first 2", cut, len(b), len(got), err)
		}
	}
	damaged := strings.Replace(string(b), "#kind read", "#kind write", 1)
	if err := os.WriteFile(path, []byte(damaged), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTickLog(path); err == nil {
		t.Error("a log with a histogram under the wrong kind was read")
	}
}

// Load reads the series from the tick log a result names, and from the
// JSON of a result without one; Save writes no series beside a log.
func TestLoadReadsTheSeries(t *testing.T) {
	dir := t.TempDir()
	want := writeTicks(t, filepath.Join(dir, "new.hlog"), 4)
	r := &Result{Schema: Schema, Name: "new", TickLog: "new.hlog", Series: want}
	if err := r.Save(filepath.Join(dir, "new.json")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "new.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"series"`) || !strings.Contains(string(b), `"tick_log": "new.hlog"`) {
		t.Errorf("saved %s; want the tick log named and no series", b)
	}
	back, err := Load(filepath.Join(dir, "new.json"))
	if err != nil || !reflect.DeepEqual(back.Series, want) {
		t.Errorf("loaded %+v, %v", back, err)
	}
	old := `{"schema":"cephbench.result/v1","name":"old","series":[{"t":1,"dur":1,"kinds":{"read":{"ops":7,"bytes":28672,"mean_ns":5,"max_ns":9,"percentiles_ns":null,"last_ns":9}}}]}`
	if err := os.WriteFile(filepath.Join(dir, "old.json"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err = Load(filepath.Join(dir, "old.json"))
	if err != nil || len(back.Series) != 1 || back.Series[0].Kinds["read"].Ops != 7 {
		t.Errorf("an older result loaded as %+v, %v", back, err)
	}
	if err := os.Remove(filepath.Join(dir, "new.hlog")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(dir, "new.json")); err == nil {
		t.Error("a result whose tick log is gone loaded")
	}
}

func TestTickLogPath(t *testing.T) {
	for in, want := range map[string]string{"a/RESULT.json": "a/RESULT.hlog", "a/b.out": "a/b.out.hlog"} {
		if got := TickLogPath(in); got != want {
			t.Errorf("TickLogPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// A log's intervals carry each second's histograms, and a series written
// from them (a merged one) is the same log again: same seconds, same
// histograms.
func TestIntervalsCarryTheHistogramsAndSaveAgain(t *testing.T) {
	dir := t.TempDir()
	want := writeTicks(t, filepath.Join(dir, "r.hlog"), 4)
	intervals, err := ReadIntervals(filepath.Join(dir, "r.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	if len(intervals) != len(want) {
		t.Fatalf("%d intervals; want %d", len(intervals), len(want))
	}
	for i, in := range intervals {
		if !reflect.DeepEqual(in.Second, want[i]) {
			t.Errorf("interval %d: %+v; want %+v", i, in.Second, want[i])
		}
		for kind, ks := range in.Kinds {
			h, err := hdr.Decode([]byte(in.Histograms[kind]))
			if err != nil {
				t.Fatalf("interval %d %s: %v", i, kind, err)
			}
			if h.TotalCount() != ks.Ops || h.Max() != ks.MaxNs {
				t.Errorf("interval %d %s: histogram of %d ops, max %d; the second says %d, %d", i, kind, h.TotalCount(), h.Max(), ks.Ops, ks.MaxNs)
			}
		}
	}

	r := &Result{Schema: Schema, Name: "again", Start: time.Now()}
	path := filepath.Join(dir, "again", "again.json")
	if saved, err := r.SaveNew(path, intervals, nil); err != nil || saved != path {
		t.Fatalf("saved to %q: %v", saved, err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ReadIntervals(filepath.Join(dir, "again", "again.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	if back.TickLog != "again.hlog" || !reflect.DeepEqual(back.Series, want) || !reflect.DeepEqual(again, intervals) {
		t.Errorf("saved again: tick log %q, series %+v, intervals equal %v", back.TickLog, back.Series, reflect.DeepEqual(again, intervals))
	}
}

// Cluster samples saved with a series made other than by running go
// between its intervals, each before the first that ends after it, and
// read back as taken; with no series, the tick log holds them alone.
func TestSaveNewKeepsClusterSamples(t *testing.T) {
	dir := t.TempDir()
	intervals := []Interval{{Second: metrics.Second{T: 1, Dur: 1, Kinds: map[string]metrics.KindSecond{}}}, {Second: metrics.Second{T: 2, Dur: 1, Kinds: map[string]metrics.KindSecond{}}}}
	samples := []cluster.Sample{{At: 0, Every: 1, Health: "HEALTH_OK"}, {At: 1.5, Every: 1, Health: "HEALTH_OK"}, {At: 2.5, Every: 1, Health: "HEALTH_WARN"}}
	for _, c := range []struct {
		name      string
		intervals []Interval
		order     string
	}{{"with", intervals, "#cluster #tick #cluster #tick #cluster"}, {"without", nil, "#cluster #cluster #cluster"}} {
		path := filepath.Join(dir, c.name+".json")
		r := &Result{Schema: Schema, Name: c.name, Start: time.Now()}
		if _, err := r.SaveNew(path, c.intervals, samples); err != nil {
			t.Fatal(err)
		}
		back, err := ClusterSamples(TickLogPath(path))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(TickLogPath(path))
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "#cluster ") || strings.HasPrefix(line, "#tick ") {
				order = append(order, strings.Fields(line)[0])
			}
		}
		if !reflect.DeepEqual(back, samples) || strings.Join(order, " ") != c.order {
			t.Errorf("%s a series: samples %+v in the order %q; want %+v in the order %q", c.name, back, order, samples, c.order)
		}
		if _, err := Load(path); err != nil {
			t.Errorf("%s a series: %v", c.name, err)
		}
	}
}
