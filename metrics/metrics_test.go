package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestMergedPercentilesEqualOneHistogram(t *testing.T) {
	// Three workers' histograms, merged over several seconds, must give
	// exactly the percentiles of one histogram of every value: merging adds
	// counts, it never averages percentiles.
	c := NewCollector([]string{"read", "write"})
	recs := []*Recorder{c.NewRecorder(), c.NewRecorder(), c.NewRecorder()}
	all := NewHistogram()
	r := rand.New(rand.NewPCG(1, 2))
	var series []Second
	for sec := 1; sec <= 3; sec++ {
		for i := 0; i < 5000; i++ {
			v := time.Duration(r.ExpFloat64() * float64(time.Millisecond) * float64(1+i%3))
			recs[i%3].Record(0, v, 4096, time.Duration(i))
			if err := all.RecordValue(max(int64(v), 1)); err != nil {
				t.Fatal(err)
			}
		}
		series = append(series, c.Tick(time.Duration(sec)*time.Second).Second)
	}
	got := c.Histogram(0)
	if got.TotalCount() != all.TotalCount() {
		t.Fatalf("merged count %d, want %d", got.TotalCount(), all.TotalCount())
	}
	for _, p := range ReportedPercentiles {
		if a, b := got.ValueAtQuantile(p), all.ValueAtQuantile(p); a != b {
			t.Errorf("p%g: merged %d, single histogram %d", p, a, b)
		}
	}
	ops, bytes, _ := c.Totals(0)
	if ops != 15000 || bytes != 15000*4096 {
		t.Errorf("totals %d ops %d bytes", ops, bytes)
	}
	if len(series) != 3 || series[1].Kinds["read"].Ops != 5000 {
		t.Errorf("series %+v", series)
	}
	if _, did := series[0].Kinds["write"]; did {
		t.Error("a kind with no ops appears in the series")
	}
}

func TestErrorsByClass(t *testing.T) {
	c := NewCollector([]string{"read"})
	r := c.NewRecorder()
	r.RecordError(0, "EIO")
	r.RecordError(0, "EIO")
	r.RecordError(0, "timeout")
	s := c.Tick(time.Second)
	if s.Kinds["read"].Errors != 3 || c.Errors()["EIO"] != 2 || c.Errors()["timeout"] != 1 {
		t.Errorf("second %+v errors %v", s, c.Errors())
	}
}

func TestSummaryRates(t *testing.T) {
	c := NewCollector([]string{"write"})
	r := c.NewRecorder()
	for sec, n := range []int{100, 300, 200} {
		for range n {
			r.Record(0, time.Millisecond, 1<<20, 0)
		}
		c.Tick(time.Duration(sec+1) * time.Second)
	}
	for range 7 { // a final 0.2s interval: counted in the totals, not the spread
		r.Record(0, time.Millisecond, 1<<20, 0)
	}
	c.Tick(3200 * time.Millisecond)
	s := c.Summary(0, 3200*time.Millisecond)
	if s.Ops != 607 || math.Abs(s.IOPS.Mean-607/3.2) > 1e-9 {
		t.Errorf("ops %d mean IOPS %g", s.Ops, s.IOPS.Mean)
	}
	if s.IOPS.Min != 100 || s.IOPS.Max != 300 || s.IOPS.Samples != 3 || math.Abs(s.IOPS.Stddev-100) > 1e-9 {
		t.Errorf("per-second IOPS %+v; want min 100 max 300 stddev 100 over 3 seconds", s.IOPS)
	}
	if s.BandwidthBps.Max != 300<<20 {
		t.Errorf("max bandwidth %g", s.BandwidthBps.Max)
	}
	if p := s.Latency.Percentiles.At(99); p < int64(time.Millisecond)*999/1000 || p > int64(time.Millisecond)*1001/1000 {
		t.Errorf("p99 %d ns for ops that all took 1ms", p)
	}
}

func TestStatsOf(t *testing.T) {
	s := StatsOf([]float64{1, 2, 3, 4})
	if s.Mean != 2.5 || s.Min != 1 || s.Max != 4 || math.Abs(s.Stddev-1.2909944) > 1e-6 {
		t.Errorf("%+v", s)
	}
	if z := StatsOf(nil); z != (Stats{}) {
		t.Errorf("empty: %+v", z)
	}
}

func BenchmarkRecord(b *testing.B) {
	c := NewCollector([]string{"read"})
	r := c.NewRecorder()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Record(0, time.Duration(i&0xffff), 4096, time.Duration(i))
	}
}

func TestLastLatencyIsTheLatestCompletion(t *testing.T) {
	c := NewCollector([]string{"write"})
	a, b := c.NewRecorder(), c.NewRecorder()
	a.Record(0, 5*time.Millisecond, 1, 300)
	b.Record(0, 7*time.Millisecond, 1, 200)
	b.Record(0, 9*time.Millisecond, 1, 100) // completed earlier, recorded later
	if got := c.Tick(time.Second).Kinds["write"].LastNs; got != int64(5*time.Millisecond) {
		t.Errorf("last latency %v; want the op that completed last (5ms)", time.Duration(got))
	}
}

func TestQueueCountsUseFiosBuckets(t *testing.T) {
	var q QueueCounts
	for _, n := range []int{1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 1000} {
		q.AddDepth(n)
	}
	for _, n := range []int{0, 1, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65, 1000} {
		q.AddSubmit(n)
		q.AddComplete(n)
	}
	// fio's IO depths: 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64; its submit
	// and complete: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64.
	wantDepth := [QueueBuckets]int64{1, 2, 2, 2, 2, 2, 2}
	wantBatch := [QueueBuckets]int64{1, 2, 2, 2, 2, 2, 2}
	if q.Depth != wantDepth || q.Submit != wantBatch || q.Complete != wantBatch {
		t.Errorf("depth %v submit %v complete %v", q.Depth, q.Submit, q.Complete)
	}

	c := NewCollector([]string{"read"})
	c.NewRecorder().AddQueue(&q)
	c.NewRecorder().AddQueue(&q)
	sum := c.Queue()
	for i := range QueueBuckets {
		if sum.Depth[i] != 2*q.Depth[i] || sum.Submit[i] != 2*q.Submit[i] || sum.Complete[i] != 2*q.Complete[i] {
			t.Fatalf("collector sums %+v from two recorders of %+v", sum, q)
		}
	}
}

func TestUsageCountsFaultsAndContextSwitches(t *testing.T) {
	start := ReadUsage()
	mem := make([]byte, 32<<20) // fresh pages: each first touch is a minor fault
	for i := 0; i < len(mem); i += 4096 {
		mem[i] = 1
	}
	time.Sleep(20 * time.Millisecond) // the thread blocks: a voluntary switch
	cpu := ReadUsage().Since(start, 50*time.Millisecond)
	if cpu.MinorFaults <= 0 || cpu.ContextSwitches <= 0 || cpu.MajorFaults < 0 {
		t.Errorf("faults %d/%d, context switches %d", cpu.MinorFaults, cpu.MajorFaults, cpu.ContextSwitches)
	}
	if cpu.WallSeconds != 0.05 || cpu.UserSeconds+cpu.SystemSeconds <= 0 {
		t.Errorf("%+v", cpu)
	}
}

// The per-second spread accumulated as the run goes is the spread of the
// whole series computed at the end, as it was when the series was kept.
func TestRateStatsMatchTheSeries(t *testing.T) {
	c := NewCollector([]string{"read", "write"})
	rec := c.NewRecorder()
	r := rand.New(rand.NewPCG(3, 4))
	var elapsed time.Duration
	var series []Second
	for i := range 500 {
		for range r.IntN(2000) {
			rec.Record(1, time.Millisecond, int64(r.IntN(1<<20)), 0)
		}
		if i >= 100 { // reads start late: their first seconds count as zero
			for range r.IntN(3000) {
				rec.Record(0, time.Millisecond, 4096, 0)
			}
		}
		// Intervals of 0.3s to 1.7s: the short ones are not in the spread.
		elapsed += time.Duration(300+r.IntN(1400)) * time.Millisecond
		series = append(series, c.Tick(elapsed).Second)
	}
	for k, kind := range []string{"read", "write"} {
		var iops, bw []float64
		for _, sec := range series {
			if sec.Dur < 0.5 {
				continue
			}
			iops = append(iops, float64(sec.Kinds[kind].Ops)/sec.Dur)
			bw = append(bw, float64(sec.Kinds[kind].Bytes)/sec.Dur)
		}
		s := c.Summary(k, elapsed)
		for _, pair := range []struct {
			name      string
			got, want Stats
		}{{"IOPS", s.IOPS, StatsOf(iops)}, {"bandwidth", s.BandwidthBps, StatsOf(bw)}} {
			got, want := pair.got, pair.want
			if got.Samples != want.Samples || got.Min != want.Min || got.Max != want.Max ||
				math.Abs(got.Stddev-want.Stddev) > 1e-9*want.Stddev || want.Samples < 300 {
				t.Errorf("%s %s: accumulated %+v, from the series %+v", kind, pair.name, got, want)
			}
		}
	}
}

// A tick carries each kind's interval histogram, tagged and stamped for an
// interval log.
func TestTickHistogramsAreTheIntervals(t *testing.T) {
	c := NewCollector([]string{"read", "write"})
	rec := c.NewRecorder()
	for range 10 {
		rec.Record(1, 2*time.Millisecond, 1, 0)
	}
	c.Tick(time.Second)
	rec.Record(1, 5*time.Millisecond, 1, 0)
	tk := c.Tick(2500 * time.Millisecond)
	h := tk.Histograms["write"]
	if h == nil || h.TotalCount() != 1 || h.Tag() != "write" || h.StartTimeMs() != 1000 || h.EndTimeMs() != 2500 {
		t.Fatalf("histograms %v; want write's second interval, 1 op from 1000 to 2500 ms", tk.Histograms)
	}
	if _, ok := tk.Histograms["read"]; ok {
		t.Error("a kind with no ops has a histogram")
	}
}

// Ops by size are counted over every tick, only when asked for, and not
// for ops that move no bytes.
func TestOpsBySize(t *testing.T) {
	for _, count := range []bool{false, true} {
		c := NewCollector([]string{"write", "sync"})
		if count {
			c.CountOpSizes()
		}
		r := c.NewRecorder()
		r.Record(0, time.Millisecond, 4096, time.Second)
		r.Record(0, time.Millisecond, 65536, time.Second)
		c.Tick(time.Second)
		r.Record(0, time.Millisecond, 4096, 2*time.Second)
		r.Record(1, time.Millisecond, 0, 2*time.Second)
		c.Tick(2 * time.Second)
		got, sync := c.Summary(0, 2*time.Second).OpsBySize, c.Summary(1, 2*time.Second).OpsBySize
		if count && (len(got) != 2 || got[4096] != 2 || got[65536] != 1 || sync != nil) || !count && (got != nil || sync != nil) {
			t.Errorf("counting %v: writes by size %v, syncs %v", count, got, sync)
		}
	}
}
