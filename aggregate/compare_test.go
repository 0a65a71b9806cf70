package aggregate

import (
	"math"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// rep is one repeat's figures.
type rep struct {
	iops  float64
	latNs float64 // mean; p50 is the same, p99 twice it
	// perSecondCV and seconds describe the per-second series.
	perSecondCV float64
	seconds     int
}

// groupsOf builds the measurement "randread" on target "t1", op kind
// "read", with 4 KiB ops and one result per repeat.
func groupsOf(t *testing.T, reps ...rep) []Group {
	t.Helper()
	s := &Set{}
	for i, r := range reps {
		s.Results = append(s.Results, resultOf("randread", "t1", "read", i+1, r))
	}
	gs := s.Groups()
	if len(gs) != 1 || gs[0].IOPS.N() != len(reps) {
		t.Fatalf("%d groups of %v; want one with %d repeats", len(gs), gs, len(reps))
	}
	return gs
}

func resultOf(step, target, kind string, repeat int, r rep) *result.Result {
	const bs = 4096
	secs := max(r.seconds, 1)
	return &result.Result{
		Schema: result.Schema, Name: step,
		Spec: spec.Workload{Name: step, BlockSize: bs},
		Plan: &result.PlanStep{Step: step, Target: target, Repeat: repeat},
		Ops: map[string]metrics.KindSummary{kind: {
			Ops:          int64(r.iops) * int64(secs),
			IOPS:         metrics.Stats{Mean: r.iops, Stddev: r.perSecondCV * r.iops, Samples: r.seconds},
			BandwidthBps: metrics.Stats{Mean: r.iops * bs, Stddev: r.perSecondCV * r.iops * bs, Samples: r.seconds},
			Latency: metrics.Latency{MeanNs: r.latNs, Percentiles: metrics.Percentiles{
				{P: 50, Ns: int64(r.latNs)}, {P: 99, Ns: int64(2 * r.latNs)}, {P: 99.9, Ns: int64(3 * r.latNs)},
			}},
		}},
	}
}

// changeOf returns the change of metric in the only measurement of c.
func changeOf(t *testing.T, c Comparison, metric string) Change {
	t.Helper()
	if len(c.Matched) != 1 {
		t.Fatalf("%d measurements matched; want 1", len(c.Matched))
	}
	for _, ch := range c.Matched[0].Changes {
		if ch.Metric == metric {
			return ch
		}
	}
	t.Fatalf("no %s change in %+v", metric, c.Matched[0].Changes)
	return Change{}
}

func mustCondition(t *testing.T, s string) Condition {
	t.Helper()
	c, err := ParseCondition(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCompareClearDropIsWorse(t *testing.T) {
	a := groupsOf(t, rep{iops: 1000, latNs: 1e6}, rep{iops: 1010, latNs: 0.99e6}, rep{iops: 990, latNs: 1.01e6})
	b := groupsOf(t, rep{iops: 800, latNs: 1.25e6}, rep{iops: 805, latNs: 1.24e6}, rep{iops: 795, latNs: 1.26e6})
	c := Compare(a, b, 0.05)
	iops := changeOf(t, c, "iops")
	if math.Abs(iops.Percent+20) > 1e-9 || iops.Verdict != Worse || iops.TTest == nil || iops.TTest.P > 1e-4 {
		t.Errorf("IOPS 1000 -> 800: %+v; want -20%%, worse, p < 0.0001", iops)
	}
	if iops.Method != "t-test n=3/3 p<0.0001" {
		t.Errorf("method %q", iops.Method)
	}
	if bw := changeOf(t, c, "bw"); bw.Verdict != Worse || math.Abs(bw.Percent+20) > 1e-9 {
		t.Errorf("bandwidth: %+v; want 20%% worse", bw)
	}
	for _, m := range []string{"lat", "p50", "p99", "p99.9"} {
		if ch := changeOf(t, c, m); ch.Verdict != Worse || math.Abs(ch.Percent-25) > 0.01 {
			t.Errorf("%s: %+v; want 25%% worse", m, ch)
		}
	}
	fails := c.Failures([]Condition{mustCondition(t, "iops < -5%"), mustCondition(t, "p99 > 30%")}, false)
	if len(fails) != 1 || fails[0].Condition != "iops < -5%" || fails[0].Step != "randread" || fails[0].Metric != "iops" {
		t.Errorf("failures %+v; want iops < -5%% on randread only", fails)
	}
	// Reversed, the same figures are better.
	if ch := changeOf(t, Compare(b, a, 0.05), "p99"); ch.Verdict != Better || math.Abs(ch.Percent+20) > 0.01 {
		t.Errorf("latency 1.25ms -> 1ms: %+v; want 20%% better", ch)
	}
}

func TestCompareSmallChangeInLargeSpreadIsNoise(t *testing.T) {
	a := groupsOf(t, rep{iops: 1000, latNs: 1e6}, rep{iops: 1100, latNs: 1e6}, rep{iops: 900, latNs: 1e6})
	b := groupsOf(t, rep{iops: 970, latNs: 1e6}, rep{iops: 1070, latNs: 1e6}, rep{iops: 870, latNs: 1e6})
	c := Compare(a, b, 0.05)
	iops := changeOf(t, c, "iops")
	// t = -30/sqrt(2·100²/3) = -0.367 with 4 degrees of freedom.
	if iops.Verdict != WithinNoise || math.Abs(iops.Percent+3) > 1e-9 || math.Abs(iops.TTest.P-0.73192) > 1e-4 || iops.TTest.DF != 4 {
		t.Errorf("IOPS -3%% with stddev 100: %+v %+v; want within noise, p=0.732, df=4", iops, iops.TTest)
	}
	if ch := changeOf(t, c, "lat"); ch.Verdict != WithinNoise || ch.Percent != 0 || ch.Method != "no spread in n=3/3 repeats" {
		t.Errorf("unchanged latency: %+v; want within noise with no spread", ch)
	}
	for _, cond := range []string{"iops < -5%", "iops < -2%"} {
		if fails := c.Failures([]Condition{mustCondition(t, cond)}, false); len(fails) != 0 {
			t.Errorf("%s failed a change within noise: %+v", cond, fails)
		}
	}
	if fails := c.Failures([]Condition{mustCondition(t, "iops < -2%")}, true); len(fails) != 1 {
		t.Errorf("iops < -2%% ignoring noise: %+v; want the -3%% change", fails)
	}
}

// Welch's test by hand. Equal variances and two repeats a side give 2
// degrees of freedom, where p = 1 - |t|/sqrt(t²+2): A = 100, 104 and
// B = 80, 84 have variance 8 each, t = -20/sqrt(8/2+8/2) = -7.0711 and
// p = 1 - sqrt(50/52) = 0.019419. Unequal ones: A = 10, 12, 14 (variance
// 4) and B = 20..24 (variance 2.5) give t = 10/sqrt(4/3+2.5/5) = 7.3855,
// df = (11/6)² / ((4/3)²/2 + (1/2)²/4) = 3.5328 and p = 0.0028734.
func TestWelchByHand(t *testing.T) {
	cases := []struct {
		a, b      []float64
		t, df, p  float64
		verdict   Verdict
		changePct float64
	}{
		{[]float64{100, 104}, []float64{80, 84}, -7.0711, 2, 0.019419, Worse, -19.6078},
		{[]float64{10, 12, 14}, []float64{20, 21, 22, 23, 24}, 7.3855, 3.5328, 0.0028734, Better, 83.3333},
	}
	for _, c := range cases {
		var ra, rb []rep
		for _, v := range c.a {
			ra = append(ra, rep{iops: v, latNs: 1000})
		}
		for _, v := range c.b {
			rb = append(rb, rep{iops: v, latNs: 1000})
		}
		ch := changeOf(t, Compare(groupsOf(t, ra...), groupsOf(t, rb...), 0.05), "iops")
		tt := ch.TTest
		if tt == nil || math.Abs(tt.T-c.t) > 1e-4 || math.Abs(tt.DF-c.df) > 1e-4 || math.Abs(tt.P-c.p) > 1e-6 ||
			ch.Verdict != c.verdict || math.Abs(ch.Percent-c.changePct) > 1e-4 {
			t.Errorf("%v vs %v: %+v %+v; want t=%g df=%g p=%g, %s %+.4f%%", c.a, c.b, ch, tt, c.t, c.df, c.p, c.verdict, c.changePct)
		}
	}
	// At alpha 0.01 the first is within noise.
	ch := changeOf(t, Compare(groupsOf(t, rep{iops: 100, latNs: 1}, rep{iops: 104, latNs: 1}), groupsOf(t, rep{iops: 80, latNs: 1}, rep{iops: 84, latNs: 1}), 0.01), "iops")
	if ch.Verdict != WithinNoise {
		t.Errorf("p=0.019 at alpha 0.01: %s", ch.Verdict)
	}
}

func TestCompareWithoutSpread(t *testing.T) {
	a := groupsOf(t, rep{iops: 1000, latNs: 5000}, rep{iops: 1000, latNs: 5000})
	b := groupsOf(t, rep{iops: 999, latNs: 5000}, rep{iops: 999, latNs: 5000})
	c := Compare(a, b, 0.05)
	if ch := changeOf(t, c, "iops"); ch.Verdict != Worse || ch.TTest != nil || ch.Method != "no spread in n=2/2 repeats" {
		t.Errorf("1000, 1000 -> 999, 999: %+v; want worse, without a t-test", ch)
	}
	if ch := changeOf(t, c, "p99"); ch.Verdict != WithinNoise {
		t.Errorf("p99 unchanged without spread: %+v", ch)
	}
}

func TestCompareSingleRepeat(t *testing.T) {
	a := groupsOf(t, rep{iops: 1000, latNs: 1e6, perSecondCV: 0.02, seconds: 30})
	// The band is 3 × the larger per-second CV: 3 × 4% = 12%.
	cases := []struct {
		b       rep
		verdict Verdict
		method  string
	}{
		{rep{iops: 800, latNs: 1.25e6, perSecondCV: 0.04, seconds: 30}, Worse, "per-second spread, n=1/1: ±12.0%"},
		{rep{iops: 1130, latNs: 1.25e6, perSecondCV: 0.04, seconds: 30}, Better, "per-second spread, n=1/1: ±12.0%"},
		{rep{iops: 900, latNs: 1.25e6, perSecondCV: 0.04, seconds: 30}, NoiseUnknown, "per-second spread, n=1/1: ±12.0%"},
		{rep{iops: 500, latNs: 1.25e6, perSecondCV: 0.04, seconds: 4}, NoiseUnknown, "n=1/1, under 5 s of per-second figures"},
	}
	for _, cs := range cases {
		c := Compare(a, groupsOf(t, cs.b), 0.05)
		for _, m := range []string{"iops", "bw"} {
			if ch := changeOf(t, c, m); ch.Verdict != cs.verdict || ch.Method != cs.method || ch.TTest != nil {
				t.Errorf("%s 1000 -> %g: %+v; want %s by %q", m, cs.b.iops, ch, cs.verdict, cs.method)
			}
		}
		for _, m := range []string{"lat", "p99"} {
			if ch := changeOf(t, c, m); ch.Verdict != NoiseUnknown || ch.Method != "n=1/1, one repeat gives no noise estimate" || math.Abs(ch.Percent-25) > 0.01 {
				t.Errorf("%s with one repeat: %+v; want +25%%, noise unknown", m, ch)
			}
		}
	}
	// A change of unknown noise fails a condition: CI cannot tell it is
	// harmless.
	c := Compare(a, groupsOf(t, cases[2].b), 0.05)
	if fails := c.Failures([]Condition{mustCondition(t, "iops<-5%")}, false); len(fails) != 1 || fails[0].Verdict != NoiseUnknown {
		t.Errorf("-10%% of unknown noise: failures %+v", fails)
	}
	// With three repeats on one side, their spread (CV 10%) widens the band
	// to 30%.
	three := groupsOf(t, rep{iops: 900, latNs: 1e6, perSecondCV: 0.01, seconds: 10}, rep{iops: 1000, latNs: 1e6, perSecondCV: 0.01, seconds: 10}, rep{iops: 1100, latNs: 1e6, perSecondCV: 0.01, seconds: 10})
	if ch := changeOf(t, Compare(three, groupsOf(t, cases[0].b), 0.05), "iops"); ch.Verdict != NoiseUnknown || math.Abs(ch.NoiseBandPercent-30) > 1e-9 {
		t.Errorf("3 repeats of CV 10%% vs one: %+v; want a 30%% band and noise unknown", ch)
	}
}

func TestCompareMatchesByStepTargetAndKind(t *testing.T) {
	r := rep{iops: 100, latNs: 1000, perSecondCV: 0.01, seconds: 10}
	a := &Set{Results: []*result.Result{
		resultOf("write", "t1", "write", 1, r), resultOf("read", "t1", "read", 1, r), resultOf("read", "t2", "read", 1, r),
	}}
	b := &Set{Results: []*result.Result{
		resultOf("read", "t1", "read", 1, r), resultOf("write", "t1", "write", 1, r), resultOf("read", "t1", "write", 1, r),
	}}
	c := Compare(a.Groups(), b.Groups(), 0.05)
	var matched []string
	for _, m := range c.Matched {
		matched = append(matched, m.String())
		if len(m.Changes) != len(Metrics) {
			t.Errorf("%s: %d metrics compared, want %d", m.Key, len(m.Changes), len(Metrics))
		}
	}
	if got := strings.Join(matched, "; "); got != "write on t1 (write); read on t1 (read)" {
		t.Errorf("matched %s", got)
	}
	if len(c.OnlyA) != 1 || c.OnlyA[0].String() != "read on t2 (read)" || len(c.OnlyB) != 1 || c.OnlyB[0].String() != "read on t1 (write)" {
		t.Errorf("only in A %v, only in B %v", c.OnlyA, c.OnlyB)
	}
}

// A metric zero on a side was not measured there (network results have
// no IOPS) and is left out.
func TestCompareLeavesOutUnmeasuredMetrics(t *testing.T) {
	a := groupsOf(t, rep{iops: 100, latNs: 1000}, rep{iops: 100, latNs: 1000})
	b := groupsOf(t, rep{iops: 100, latNs: 1000}, rep{iops: 100, latNs: 1000})
	for _, g := range append(a, b...) {
		for _, r := range g.Results {
			s := r.Ops["read"]
			s.IOPS = metrics.Stats{}
			s.Latency.Percentiles = s.Latency.Percentiles[:2]
			r.Ops["read"] = s
		}
	}
	a, b = (&Set{Results: a[0].Results}).Groups(), (&Set{Results: b[0].Results}).Groups()
	var got []string
	for _, ch := range Compare(a, b, 0.05).Matched[0].Changes {
		got = append(got, ch.Metric)
	}
	if strings.Join(got, " ") != "bw lat p50 p99" {
		t.Errorf("compared %v; want bw lat p50 p99", got)
	}
}

func TestParseCondition(t *testing.T) {
	good := map[string]Condition{
		"iops < -5%":         {"iops < -5%", "iops", "<", -5},
		" IOPS<=-5.5% ":      {"IOPS<=-5.5%", "iops", "<=", -5.5},
		"bandwidth >= +2%":   {"bandwidth >= +2%", "bw", ">=", 2},
		"latency > 10%":      {"latency > 10%", "lat", ">", 10},
		"p99.9>.5%":          {"p99.9>.5%", "p99.9", ">", 0.5},
		"p50 <= 0%":          {"p50 <= 0%", "p50", "<=", 0},
		"bw<-10.%":           {"bw<-10.%", "bw", "<", -10},
		"lat   >   3.25   %": {"lat   >   3.25   %", "lat", ">", 3.25},
	}
	for in, want := range good {
		got, err := ParseCondition(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"iops <":        "want METRIC OP PERCENT",
		"iops < -5":     "want METRIC OP PERCENT",
		"iops = -5%":    "want METRIC OP PERCENT",
		"iops << 5%":    "want METRIC OP PERCENT",
		"":              "want METRIC OP PERCENT",
		"< 5%":          "want METRIC OP PERCENT",
		"foo < 5%":      `unknown metric "foo" (want iops, bw, lat, p50, p99, p99.9)`,
		"p95 > 1%":      `unknown metric "p95"`,
		"iops < -5%%":   "want METRIC OP PERCENT",
		"iops < 5% bw":  "want METRIC OP PERCENT",
		"iops < -5e2%":  "want METRIC OP PERCENT",
		"iops < 1.2.3%": "want METRIC OP PERCENT",
	}
	for in, want := range bad {
		if _, err := ParseCondition(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v; want one saying %s", in, err, want)
		}
	}
}

func TestConditionOperators(t *testing.T) {
	ch := Change{Metric: "iops", Percent: -5, Verdict: Worse}
	for cond, want := range map[string]bool{
		"iops < -5%": false, "iops <= -5%": true, "iops > -5%": false, "iops >= -5%": true,
		"iops < 0%": true, "iops > -6%": true, "bw < 0%": false,
	} {
		if got := mustCondition(t, cond).Holds(ch, false); got != want {
			t.Errorf("%s on -5%%: %v, want %v", cond, got, want)
		}
	}
}
