package promexport

import (
	"context"
	"math"
	"net/http"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"

	"github.com/cephbench/cephbench/internal/promtest"
	"github.com/cephbench/cephbench/metrics"
)

// series is the series of family name whose kind label is kind (empty:
// the one without a kind label); nil if there is none.
func series(families map[string]*dto.MetricFamily, name, kind string) *dto.Metric {
	return promtest.Series(families, name, map[string]string{"kind": kind})
}

// latencies are what each tick's ops of a kind took: none lies within 1%
// of a bucket's bound, so HDR's 0.1% cannot move one across it.
var latencies = map[string][]time.Duration{
	"read":     {80 * time.Microsecond, 100 * time.Microsecond, 100 * time.Microsecond, time.Millisecond, 20 * time.Millisecond},
	"write":    {5 * time.Millisecond, 5 * time.Millisecond, 2 * time.Second, 100 * time.Second},
	"get-ttfb": {60 * time.Microsecond, 3 * time.Millisecond},
}

// ticks are n ticks with the latencies above, each with its ops, bytes,
// errors and in-flight ops, get-ttfb derived.
func ticks(n int) []metrics.Tick {
	var out []metrics.Tick
	for i := range n {
		t := metrics.Tick{Second: metrics.Second{Kinds: map[string]metrics.KindSecond{}}, Histograms: map[string]*hdr.Histogram{},
			InFlight: int64(10 + i), Derived: []string{"get-ttfb"}}
		for kind, lats := range latencies {
			h := metrics.NewHistogram()
			for _, l := range lats {
				h.RecordValue(int64(l))
			}
			t.Histograms[kind] = h
			t.Kinds[kind] = metrics.KindSecond{Ops: h.TotalCount(), Bytes: 4096 * h.TotalCount(), Errors: int64(i)}
		}
		out = append(out, t)
	}
	return out
}

func TestScrapeAddsUpTheTicks(t *testing.T) {
	ep, err := Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close(context.Background(), 0)
	tick, ended := ep.Follow("", "randread", "/data/f")
	in := ticks(3)
	merged := map[string]*hdr.Histogram{}
	var ops, bytes, errs = map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, tk := range in {
		for kind, ks := range tk.Kinds {
			ops[kind] += ks.Ops
			bytes[kind] += ks.Bytes
			errs[kind] += ks.Errors
			if merged[kind] == nil {
				merged[kind] = metrics.NewHistogram()
			}
			merged[kind].Merge(tk.Histograms[kind])
		}
		tick(tk)
	}
	got := promtest.Scrape(t, ep.URL())
	for kind := range latencies {
		derived := kind == "get-ttfb"
		for name, want := range map[string]int64{OpsTotal: ops[kind], BytesTotal: bytes[kind], ErrorsTotal: errs[kind]} {
			m := series(got, name, kind)
			switch {
			case derived && m != nil:
				t.Errorf("%s has %s: a derived kind's ops are counted by the kind they are", kind, name)
			case !derived && m.GetCounter().GetValue() != float64(want):
				t.Errorf("%s{kind=%q} = %v, the ticks add up to %d", name, kind, m.GetCounter().GetValue(), want)
			}
		}
		checkHistogram(t, kind, series(got, OpLatency, kind).GetHistogram(), merged[kind], ops[kind])
	}
	flight := series(got, OpsInFlight, "")
	if flight.GetGauge().GetValue() != 12 {
		t.Errorf("in flight %v, the last tick has 12", flight.GetGauge().GetValue())
	}
	labels := map[string]string{}
	for _, l := range flight.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["step"] != "randread" || labels["target"] != "/data/f" || labels["host"] == "" {
		t.Errorf("in-flight labels %v", labels)
	}
	ended()
	if v := series(promtest.Scrape(t, ep.URL()), OpsInFlight, "").GetGauge().GetValue(); v != 0 {
		t.Errorf("in flight %v once the step ended", v)
	}
}

// checkHistogram checks kind's histogram against the HDR histogram of its
// ops and their count.
func checkHistogram(t *testing.T, kind string, h *dto.Histogram, hist *hdr.Histogram, ops int64) {
	t.Helper()
	if h == nil {
		t.Fatalf("no %s{kind=%q}", OpLatency, kind)
	}
	if h.GetSampleCount() != uint64(ops) {
		t.Errorf("%s: histogram count %d, %d ops", kind, h.GetSampleCount(), ops)
	}
	meanNs := h.GetSampleSum() / float64(h.GetSampleCount()) * 1e9
	if math.Abs(meanNs-hist.Mean()) > 1e-9*hist.Mean() {
		t.Errorf("%s: sum/count %v ns, the HDR mean %v ns", kind, meanNs, hist.Mean())
	}
	buckets := h.GetBucket()
	if len(buckets) != len(Buckets)+1 || !math.IsInf(buckets[len(Buckets)].GetUpperBound(), 1) {
		t.Fatalf("%s: %d buckets, want %d and +Inf", kind, len(buckets), len(Buckets))
	}
	var last uint64
	for _, b := range buckets {
		var want uint64
		for _, l := range latencies[kind] {
			if l.Seconds() <= b.GetUpperBound() {
				want += uint64(ops) / uint64(len(latencies[kind]))
			}
		}
		if b.GetCumulativeCount() < last || b.GetCumulativeCount() != want {
			t.Errorf("%s: bucket le=%g holds %d, after %d; the ops at or below it are %d", kind, b.GetUpperBound(), b.GetCumulativeCount(), last, want)
		}
		last = b.GetCumulativeCount()
	}
}

func TestLatenciesAreClearOfTheBounds(t *testing.T) {
	for kind, lats := range latencies {
		for _, l := range lats {
			for _, b := range Buckets {
				if math.Abs(l.Seconds()-b) < 0.01*b {
					t.Errorf("%s: %v is within 1%% of the bound %g", kind, l, b)
				}
			}
		}
	}
}

func TestScrapesWhileTicksArrive(t *testing.T) {
	ep, err := Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close(context.Background(), 0)
	tick, _ := ep.Follow("", "s", "null://")
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, tk := range ticks(200) {
			tick(tk)
		}
	})
	for range 20 {
		promtest.Scrape(t, ep.URL())
	}
	wg.Wait()
	if got := series(promtest.Scrape(t, ep.URL()), OpsTotal, "read").GetCounter().GetValue(); got != 200*5 {
		t.Errorf("read ops %v after 200 ticks of 5", got)
	}
}

func TestATakenAddressIsRefused(t *testing.T) {
	ep, err := Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close(context.Background(), 0)
	if _, err := Serve(ep.ln.Addr().String()); err == nil {
		t.Error("a second endpoint bound the first one's address")
	}
	if _, err := Serve("nonsense"); err == nil {
		t.Error("bound an address with no port")
	}
}

func TestCtxEndsTheLinger(t *testing.T) {
	ep, err := Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ep.Close(ctx, time.Hour) }()
	promtest.Scrape(t, ep.URL()) // still served while it lingers
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close lingered on after its ctx ended")
	}
	if _, err := http.Get(ep.URL()); err == nil {
		t.Error("still served after Close")
	}
}
