package aggregate_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/engine"
	_ "github.com/cephbench/cephbench/engine/null"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// slowed is a session whose every op takes at least lat: a host whose
// storage answers more slowly than another's.
type slowed struct {
	engine.Session
	lat time.Duration
}

func (s slowed) Do(ctx context.Context, op *engine.Op) error {
	time.Sleep(s.lat)
	return s.Session.Do(ctx, op)
}

// nullStep is a mixed read and write step of d on the null engine.
func nullStep(d time.Duration) step.Step {
	return step.Step{Name: "randrw", Workload: spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 70,
		BlockSize: 4096, Workers: 1, QueueDepth: 1, Duration: spec.Duration(d),
	}}
}

// bubbleClock is the time of a synctest bubble since start.
type bubbleClock struct{ start time.Time }

func (c bubbleClock) Now() time.Duration { return time.Since(c.start) }

// runHosts runs st at once on one null session per latency, each a host
// whose ops take that long, saves each result with its tick log in dir
// and reads them back as merging reads them. The hosts run in a synctest
// bubble, on its clock: their ops take exactly their latency however
// loaded the machine is.
func runHosts(t *testing.T, dir string, st step.Step, lats ...time.Duration) []aggregate.HostRun {
	t.Helper()
	runs := make([]aggregate.HostRun, len(lats))
	errs := make([]error, len(lats))
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		clock := bubbleClock{time.Now()}
		var wg sync.WaitGroup
		for i, lat := range lats {
			wg.Go(func() {
				w := st.Workload
				sess, err := engine.Open(ctx, &w)
				if err != nil {
					errs[i] = err
					return
				}
				host := st
				host.Seed = uint64(i + 1)
				host.Save = filepath.Join(dir, fmt.Sprintf("host%d", i+1), "randrw.json")
				opts := runner.Options{Clock: clock}
				if _, err := step.RunOn(ctx, slowed{sess, lat}, host, step.Output{}, opts, func() error { return sess.Close(ctx) }); err != nil {
					errs[i] = err
					return
				}
				runs[i], errs[i] = aggregate.LoadHostRun(host.Save)
			})
		}
		wg.Wait()
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return runs
}

// addedByHand adds the hosts' histograms of kind, as a reader of their
// results would.
func addedByHand(t *testing.T, runs []aggregate.HostRun, kind string) *hdr.Histogram {
	t.Helper()
	sum := metrics.NewHistogram()
	for _, run := range runs {
		h, err := hdr.Decode([]byte(run.Result.Histograms[kind]))
		if err != nil {
			t.Fatal(err)
		}
		sum.Merge(h)
	}
	return sum
}

func TestMergeHostsAddsWhatTheHostsMeasured(t *testing.T) {
	dir := t.TempDir()
	// Three hosts, the last one's storage far slower: most ops are the
	// fast hosts', but the slowest 1% are all the slow host's, so the
	// whole run's p99 is 3 ms and the hosts' average p99 near 1.1 ms.
	runs := runHosts(t, dir, nullStep(3*time.Second), 50*time.Microsecond, 300*time.Microsecond, 3*time.Millisecond)
	m, intervals, err := aggregate.MergeHosts(runs)
	if err != nil {
		t.Fatal(err)
	}

	for _, kind := range []string{"read", "write"} {
		var ops, bytes int64
		var p99s float64
		for _, run := range runs {
			ops += run.Result.Ops[kind].Ops
			bytes += run.Result.Ops[kind].Bytes
			p99s += float64(run.Result.Ops[kind].Latency.Percentiles.At(99))
		}
		got := m.Ops[kind]
		if got.Ops != ops || got.Bytes != bytes || ops == 0 {
			t.Errorf("%s: merged %d ops, %d bytes; want the hosts' sums %d, %d", kind, got.Ops, got.Bytes, ops, bytes)
		}
		want := addedByHand(t, runs, kind)
		for _, p := range []float64{50, 99, 99.9} {
			if g, w := got.Latency.Percentiles.At(p), want.ValueAtPercentile(p); g != w {
				t.Errorf("%s: merged p%g %v; the hosts' histograms added give %v", kind, p, time.Duration(g), time.Duration(w))
			}
		}
		if got.Latency.MaxNs != want.Max() || got.Latency.MeanNs != want.Mean() {
			t.Errorf("%s: merged max %d mean %g; added histograms' %d, %g", kind, got.Latency.MaxNs, got.Latency.MeanNs, want.Max(), want.Mean())
		}
		mean := p99s / float64(len(runs))
		if p99 := float64(got.Latency.Percentiles.At(99)); math.Abs(p99-mean) < 0.5*mean {
			t.Errorf("%s: merged p99 %v is the hosts' average p99 %v: the slow host's tail should dominate it", kind, time.Duration(p99), time.Duration(mean))
		}
		t.Logf("%s: %d ops; p99 merged %v, hosts' average %v", kind, got.Ops, time.Duration(got.Latency.Percentiles.At(99)), time.Duration(mean))
	}

	// The hosts started together, so their k-th seconds are one merged
	// second.
	longest := 0
	for _, run := range runs {
		longest = max(longest, len(run.Intervals))
	}
	if len(m.Series) != longest || len(intervals) != longest {
		t.Fatalf("merged series of %d seconds (%d intervals); want the hosts' %d", len(m.Series), len(intervals), longest)
	}
	for k, sec := range m.Series {
		for _, kind := range []string{"read", "write"} {
			var ops int64
			sum := metrics.NewHistogram()
			for _, run := range runs {
				if k < len(run.Intervals) {
					ops += run.Intervals[k].Kinds[kind].Ops
					if enc := run.Intervals[k].Histograms[kind]; enc != "" {
						h, _ := hdr.Decode([]byte(enc))
						sum.Merge(h)
					}
				}
			}
			if got := sec.Kinds[kind]; got.Ops != ops || got.Percentiles.At(99) != sum.ValueAtPercentile(99) {
				t.Errorf("second %d %s: %d ops, p99 %d; want the hosts' %d ops, p99 %d", k+1, kind, got.Ops, got.Percentiles.At(99), ops, sum.ValueAtPercentile(99))
			}
		}
	}

	// The window is the hosts' common one; the rates are over it.
	shortest := math.Inf(1)
	for _, run := range runs {
		shortest = min(shortest, run.Result.ElapsedSeconds)
	}
	if m.ElapsedSeconds > shortest || m.ElapsedSeconds < shortest-0.5 {
		t.Errorf("merged %gs measured; want the overlap, at most the shortest host's %gs", m.ElapsedSeconds, shortest)
	}
	if len(m.Hosts) != len(runs) || m.Hosts[2].Ops["read"].Ops != runs[2].Result.Ops["read"].Ops {
		t.Errorf("merged result keeps %d hosts' results; want each of the %d", len(m.Hosts), len(runs))
	}
	if *m.HistogramSettings != metrics.StandardHistogram() {
		t.Errorf("merged histogram settings %+v; want %+v", *m.HistogramSettings, metrics.StandardHistogram())
	}

	// Saved and loaded back, it is the same result, series included.
	path := filepath.Join(dir, "merged", "randrw.json")
	series := m.Series
	if saved, err := m.SaveNew(path, intervals); err != nil || saved != path {
		t.Fatalf("saved to %q: %v", saved, err)
	}
	back, err := result.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Series, series) || !reflect.DeepEqual(back.Ops, m.Ops) || len(back.Hosts) != len(runs) {
		t.Errorf("loaded back: %d seconds, %d hosts, ops %+v; want %d seconds, %d hosts, ops %+v", len(back.Series), len(back.Hosts), back.Ops, len(series), len(runs), m.Ops)
	}
	if back.Hosts[0].Name != "randrw" || back.Hosts[0].TickLog != "" || back.Hosts[0].Ops["write"].Ops != runs[0].Result.Ops["write"].Ops {
		t.Errorf("a host's result loaded back: %+v", back.Hosts[0])
	}
}

// shifted is run with its result's times moved by d.
func shifted(run aggregate.HostRun, d time.Duration) aggregate.HostRun {
	r := *run.Result
	r.Start, r.End = r.Start.Add(d), r.End.Add(d)
	run.Result = &r
	return run
}

func TestMergeHostsSaysWhereWindowsDoNotOverlap(t *testing.T) {
	runs := runHosts(t, t.TempDir(), nullStep(2*time.Second), 100*time.Microsecond, 100*time.Microsecond)
	m, _, err := aggregate.MergeHosts(runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range m.Notes {
		if strings.Contains(n, "overlap") {
			t.Errorf("hosts run together, yet a note: %s", n)
		}
	}

	// The second host started 1.7 s later: the window is their last 0.3 s
	// or so, and the seconds they share are the second's first.
	late := []aggregate.HostRun{runs[0], shifted(runs[1], 1700*time.Millisecond)}
	m, _, err = aggregate.MergeHosts(late)
	if err != nil {
		t.Fatal(err)
	}
	wantElapsed := runs[0].Result.Start.Add(time.Duration(runs[0].Result.ElapsedSeconds * 1e9)).Sub(late[1].Result.Start).Seconds()
	if math.Abs(m.ElapsedSeconds-wantElapsed) > 1e-6 {
		t.Errorf("measured %gs; want the overlap %gs", m.ElapsedSeconds, wantElapsed)
	}
	if !hasNote(m, "measured windows overlap for") {
		t.Errorf("no note of the partial overlap: %q", m.Notes)
	}
	// The late host's seconds land two seconds on: the merged series is
	// longer than either host's.
	if want := len(runs[1].Intervals) + 2; len(m.Series) != want {
		t.Errorf("%d merged seconds; want %d", len(m.Series), want)
	}
	if got, want := m.Ops["read"].Ops, runs[0].Result.Ops["read"].Ops+runs[1].Result.Ops["read"].Ops; got != want {
		t.Errorf("merged %d reads; want every op measured, %d", got, want)
	}

	// An hour apart, they did not run at once: said, and the rates are
	// each host's own added.
	m, _, err = aggregate.MergeHosts([]aggregate.HostRun{runs[0], shifted(runs[1], time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(m, "do not overlap") || m.ElapsedSeconds != 0 {
		t.Errorf("windows an hour apart: measured %gs, notes %q; want 0 and a note", m.ElapsedSeconds, m.Notes)
	}
	if got, want := m.Ops["read"].IOPS.Mean, runs[0].Result.Ops["read"].IOPS.Mean+runs[1].Result.Ops["read"].IOPS.Mean; math.Abs(got-want) > 1e-6*want {
		t.Errorf("read IOPS %g; want the hosts' own added, %g", got, want)
	}
}

func hasNote(r *result.Result, part string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

func TestMergeHostsRefusesResultsOfDifferentSteps(t *testing.T) {
	runs := runHosts(t, t.TempDir(), nullStep(time.Second), 100*time.Microsecond, 100*time.Microsecond)
	changed := func(change func(r *result.Result)) []aggregate.HostRun {
		r := *runs[1].Result
		change(&r)
		other := runs[1]
		other.Result = &r
		return []aggregate.HostRun{runs[0], other}
	}
	for field, change := range map[string]func(r *result.Result){
		"spec.block_size":    func(r *result.Result) { r.Spec.BlockSize = 8192 },
		"spec.pattern":       func(r *result.Result) { r.Spec.Pattern = spec.Sequential },
		"spec.read_percent":  func(r *result.Result) { r.Spec.ReadPercent = 50 },
		"spec.queue_depth":   func(r *result.Result) { r.Spec.QueueDepth = 8 },
		"spec.workers":       func(r *result.Result) { r.Spec.Workers = 2 },
		"spec.duration":      func(r *result.Result) { r.Spec.Duration = spec.Duration(time.Minute) },
		"spec.total_ops":     func(r *result.Result) { r.Spec.TotalOps = 1000 },
		"spec.target.scheme": func(r *result.Result) { r.Spec.Target.Scheme = "file" },
		"histogram_settings": func(r *result.Result) {
			r.HistogramSettings = &metrics.HistogramSettings{LowestNs: 1, HighestNs: int64(time.Minute), SignificantFigures: 2}
		},
		"measures": func(r *result.Result) { r.Measures = result.MeasuresNetwork },
	} {
		_, _, err := aggregate.MergeHosts(changed(change))
		if err == nil {
			t.Errorf("%s differs, yet merged", field)
			continue
		}
		for _, part := range []string{runs[0].Name, runs[1].Name, " " + field + " "} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("%s differs: error %q does not name %q", field, err, part)
			}
		}
	}

	// What each host has of its own may differ: its place on the target,
	// its files' prefix, its share of the rate.
	m, _, err := aggregate.MergeHosts(changed(func(r *result.Result) {
		r.Spec.Target.Location, r.Spec.FilePrefix, r.Spec.RateIOPS = "host2", "h2", 500
	}))
	if err != nil {
		t.Fatalf("hosts' own parts differ: %v", err)
	}
	if m.Spec.Target.Location != ",host2" || m.Spec.RateIOPS != 500 || m.Spec.FilePrefix != "" {
		t.Errorf("merged target %q, rate %g, prefix %q; want both locations, the rates added, no one prefix", m.Spec.Target.Location, m.Spec.RateIOPS, m.Spec.FilePrefix)
	}

	if _, _, err := aggregate.MergeHosts(runs[:1]); err == nil {
		t.Error("one result merged")
	}
}

// A host that fell below its share of a minimum rate failed the run: the
// merged result says so.
func TestMergeHostsKeepsAFailedMinimumRate(t *testing.T) {
	runs := runHosts(t, t.TempDir(), nullStep(time.Second), 50*time.Microsecond, 50*time.Microsecond)
	short := &result.RateShortfall{Kind: "write", Unit: "ops", Min: 1e9, Got: 5e4, CycleSeconds: 1}
	runs[1].Result.BelowMinRate, runs[1].Result.StopReason = short, result.StopMinRate
	m, _, err := aggregate.MergeHosts(runs)
	if err != nil {
		t.Fatal(err)
	}
	if m.BelowMinRate != short || m.StopReason != result.StopMinRate {
		t.Errorf("merged stop %q, shortfall %+v; want the second host's", m.StopReason, m.BelowMinRate)
	}
}
