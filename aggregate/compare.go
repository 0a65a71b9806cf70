package aggregate

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/cephbench/cephbench/metrics"
)

// Metric is a figure that Compare compares between two sets of results.
type Metric struct {
	// Name is how --fail-if conditions and JSON name it.
	Name string
	// Label is its name in tables.
	Label string
	// HigherIsBetter is true for rates and false for latencies.
	HigherIsBetter bool
	// values are the metric's per-repeat values in g.
	values func(g *Group) Stat
	// perSecond is a result's per-second spread of the metric; nil for
	// figures that have none (latencies).
	perSecond func(s metrics.KindSummary) metrics.Stats
}

// Metrics are the compared figures, in the order reports list them:
// IOPS, bandwidth (bytes/s), then latency mean, p50, p99 and p99.9 (ns).
var Metrics = []Metric{
	{"iops", "IOPS", true, func(g *Group) Stat { return g.IOPS }, func(s metrics.KindSummary) metrics.Stats { return s.IOPS }},
	{"bw", "MiB/s", true, func(g *Group) Stat { return g.BandwidthBps }, func(s metrics.KindSummary) metrics.Stats { return s.BandwidthBps }},
	{"lat", "lat mean", false, func(g *Group) Stat { return g.LatMeanNs }, nil},
	{"p50", "lat p50", false, func(g *Group) Stat { return g.LatP50Ns }, nil},
	{"p99", "lat p99", false, func(g *Group) Stat { return g.LatP99Ns }, nil},
	{"p99.9", "lat p99.9", false, func(g *Group) Stat { return percentileStat(g, 99.9) }, nil},
}

// metricAliases are the other names conditions may use.
var metricAliases = map[string]string{"bandwidth": "bw", "latency": "lat"}

// MetricNamed returns the metric called name (case-insensitive; also
// "bandwidth" and "latency"), and false for none.
func MetricNamed(name string) (Metric, bool) {
	name = strings.ToLower(name)
	if alias, ok := metricAliases[name]; ok {
		name = alias
	}
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

func percentileStat(g *Group, p float64) Stat {
	var vs []float64
	for _, r := range g.Results {
		vs = append(vs, float64(r.Ops[g.Kind].Latency.Percentiles.At(p)))
	}
	return StatOf(vs)
}

// Verdict is what a change means, given the run-to-run noise.
type Verdict string

// The verdicts. Better and Worse are changes beyond the noise, in the
// metric's good or bad direction.
const (
	Better       Verdict = "better"
	Worse        Verdict = "worse"
	WithinNoise  Verdict = "within noise"
	NoiseUnknown Verdict = "noise unknown"
)

// The single-repeat rule for rates: a change is beyond noise when it
// exceeds NoiseBandFactor times the larger per-second coefficient of
// variation of the results compared, and only when every one of them has
// at least MinSeconds per-second figures.
//
// The per-second spread is not divided by the square root of the number
// of seconds, as it would be for independent samples: consecutive seconds
// are correlated (queues, caches and background work last longer than a
// second), and one run says nothing about how much runs differ from each
// other. The spread of single seconds bounds the noise of a run's mean
// from above in all but pathological cases, so three times it is a
// conservative threshold; below it the verdict is "noise unknown", not
// "within noise".
const (
	NoiseBandFactor = 3
	MinSeconds      = 5
)

// TTest is the outcome of Welch's t-test between the repeats of A and B.
type TTest struct {
	NA int     `json:"n_a"`
	NB int     `json:"n_b"`
	T  float64 `json:"t"`
	// DF is the Welch–Satterthwaite degrees of freedom.
	DF float64 `json:"df"`
	// P is the two-sided p value.
	P float64 `json:"p"`
}

// Change is how one metric of a measurement changed from A to B.
type Change struct {
	Metric string `json:"metric"`
	A      Stat   `json:"a"`
	B      Stat   `json:"b"`
	// Percent is (B-A)/A × 100 of the means across repeats.
	Percent float64 `json:"change_percent"`
	Verdict Verdict `json:"verdict"`
	// Method says what decided the verdict, for people: "t-test n=3/3
	// p=0.004", "per-second spread, n=1/1: ±6.0%".
	Method string `json:"method"`
	// TTest is nil when a side has fewer than two repeats, or neither
	// side's repeats differ.
	TTest *TTest `json:"t_test,omitempty"`
	// NoiseBandPercent is the single-repeat threshold for rates (see
	// NoiseBandFactor); zero when the rule did not apply.
	NoiseBandPercent float64 `json:"noise_band_percent,omitempty"`
}

// Key identifies a measurement across sets of results.
type Key struct {
	Step   string `json:"step"`
	Job    string `json:"job,omitempty"`
	Target string `json:"target"`
	Kind   string `json:"kind"`
}

// KeyOf is g's key.
func KeyOf(g *Group) Key { return Key{g.Step, g.Job, g.Target, g.Kind} }

// Name is the step, and the job when there is one, as Group.Name.
func (k Key) Name() string {
	if k.Job == "" {
		return k.Step
	}
	return k.Step + " / " + k.Job
}

// String names the measurement in one phrase: "randread on rbd1 (read)".
func (k Key) String() string {
	return fmt.Sprintf("%s on %s (%s)", k.Name(), k.Target, k.Kind)
}

// Matched is one measurement found in both sets, with its changes.
type Matched struct {
	Key
	A *Group `json:"-"`
	B *Group `json:"-"`
	// Changes are in the order of Metrics, leaving out metrics that are
	// zero on either side (not measured there: IOPS of network results,
	// percentiles a result lacks).
	Changes []Change `json:"metrics"`
}

// Comparison is the outcome of Compare.
type Comparison struct {
	// Alpha is the significance level of the t-tests.
	Alpha float64 `json:"alpha"`
	// Matched are the measurements of both sets, in A's order.
	Matched []Matched `json:"measurements"`
	// OnlyA and OnlyB are the measurements of one set only; never nil.
	OnlyA []Key `json:"only_a"`
	OnlyB []Key `json:"only_b"`
}

// Compare matches the measurements of a and b by step, job, target and
// op kind, and judges each metric's change against the run-to-run noise:
//
//   - With two or more repeats on each side: Welch's t-test on the
//     per-repeat values (unequal variances, Welch–Satterthwaite degrees
//     of freedom), two-sided; the change is beyond noise when p < alpha.
//     When neither side's repeats differ at all, any difference in the
//     means is beyond noise.
//   - With one repeat on a side: for IOPS and bandwidth, the per-second
//     rule of NoiseBandFactor; for latencies, NoiseUnknown.
func Compare(a, b []Group, alpha float64) Comparison {
	c := Comparison{Alpha: alpha, OnlyA: []Key{}, OnlyB: []Key{}}
	inB := map[Key]int{}
	for i := range b {
		inB[KeyOf(&b[i])] = i
	}
	inA := map[Key]bool{}
	for i := range a {
		ga := &a[i]
		k := KeyOf(ga)
		inA[k] = true
		j, ok := inB[k]
		if !ok {
			c.OnlyA = append(c.OnlyA, k)
			continue
		}
		gb := &b[j]
		m := Matched{Key: k, A: ga, B: gb, Changes: []Change{}}
		for _, metric := range Metrics {
			sa, sb := metric.values(ga), metric.values(gb)
			if sa.Mean <= 0 || sb.Mean <= 0 {
				continue
			}
			m.Changes = append(m.Changes, judge(metric, ga, gb, sa, sb, alpha))
		}
		c.Matched = append(c.Matched, m)
	}
	for i := range b {
		if k := KeyOf(&b[i]); !inA[k] {
			c.OnlyB = append(c.OnlyB, k)
		}
	}
	return c
}

// judge decides one metric's verdict; sa and sb are its values in ga and
// gb, both with positive means.
func judge(m Metric, ga, gb *Group, sa, sb Stat, alpha float64) Change {
	ch := Change{Metric: m.Name, A: sa, B: sb, Percent: (sb.Mean - sa.Mean) / sa.Mean * 100}
	na, nb := sa.N(), sb.N()
	beyond := false
	switch {
	case na >= 2 && nb >= 2:
		va, vb := sa.Stddev*sa.Stddev/float64(na), sb.Stddev*sb.Stddev/float64(nb)
		if va+vb == 0 {
			beyond = sa.Mean != sb.Mean
			ch.Method = fmt.Sprintf("no spread in n=%d/%d repeats", na, nb)
			break
		}
		t := (sb.Mean - sa.Mean) / math.Sqrt(va+vb)
		df := (va + vb) * (va + vb) / (va*va/float64(na-1) + vb*vb/float64(nb-1))
		p := StudentTTwoSided(t, df)
		ch.TTest = &TTest{NA: na, NB: nb, T: t, DF: df, P: p}
		beyond = p < alpha
		ch.Method = fmt.Sprintf("t-test n=%d/%d %s", na, nb, formatP(p))
	case m.perSecond != nil:
		band, ok := noiseBand(m, ga, gb, sa, sb)
		if !ok {
			ch.Verdict = NoiseUnknown
			ch.Method = fmt.Sprintf("n=%d/%d, under %d s of per-second figures", na, nb, MinSeconds)
			return ch
		}
		ch.NoiseBandPercent = band
		ch.Method = fmt.Sprintf("per-second spread, n=%d/%d: ±%.1f%%", na, nb, band)
		if math.Abs(ch.Percent) <= band {
			ch.Verdict = NoiseUnknown
			return ch
		}
		beyond = true
	default:
		ch.Verdict = NoiseUnknown
		ch.Method = fmt.Sprintf("n=%d/%d, one repeat gives no noise estimate", na, nb)
		return ch
	}
	switch {
	case !beyond:
		ch.Verdict = WithinNoise
	case (ch.Percent > 0) == m.HigherIsBetter:
		ch.Verdict = Better
	default:
		ch.Verdict = Worse
	}
	return ch
}

// noiseBand is the single-repeat threshold of a rate metric, in percent:
// NoiseBandFactor times the largest per-second coefficient of variation of
// the results of ga and gb, or the repeat-to-repeat one of a side with
// several repeats when that is larger. False when a result has fewer than
// MinSeconds per-second figures.
func noiseBand(m Metric, ga, gb *Group, sa, sb Stat) (float64, bool) {
	cv := max(sa.CV(), sb.CV())
	for _, g := range []*Group{ga, gb} {
		for _, r := range g.Results {
			s := m.perSecond(r.Ops[g.Kind])
			if s.Samples < MinSeconds || s.Mean <= 0 {
				return 0, false
			}
			cv = max(cv, s.Stddev/s.Mean)
		}
	}
	return NoiseBandFactor * cv * 100, true
}

// formatP writes "p=0.013" with two significant digits, which is all a p
// value from a few repeats can claim.
func formatP(p float64) string {
	if p < 0.0001 {
		return "p<0.0001"
	}
	return "p=" + strconv.FormatFloat(p, 'g', 2, 64)
}

// Condition is a test on the percent change of a metric, as --fail-if
// gives it: "iops < -5%" holds for a drop of IOPS by more than 5%.
type Condition struct {
	Text    string // as given, trimmed
	Metric  string // the metric's Name
	Op      string // <, <=, > or >=
	Percent float64
}

var conditionRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9.]*)\s*(<=|>=|<|>)\s*([+-]?(?:\d+\.?\d*|\.\d+))\s*%$`)

// ParseConditions reads conditions as --fail-if flags give them: each
// flag one condition or several separated by commas (ParseCondition);
// empty parts are skipped.
func ParseConditions(flags []string) ([]Condition, error) {
	var conds []Condition
	for _, flag := range flags {
		for part := range strings.SplitSeq(flag, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			c, err := ParseCondition(part)
			if err != nil {
				return nil, err
			}
			conds = append(conds, c)
		}
	}
	return conds, nil
}

// ParseCondition reads "METRIC OP PERCENT%": a metric of Metrics (or an
// alias MetricNamed knows), one of <, <=, >, >=, and a signed percentage.
// Spaces around the parts are optional.
func ParseCondition(s string) (Condition, error) {
	text := strings.TrimSpace(s)
	sub := conditionRE.FindStringSubmatch(text)
	if sub == nil {
		return Condition{}, fmt.Errorf("invalid condition %q: want METRIC OP PERCENT, as in \"iops < -5%%\"", text)
	}
	m, ok := MetricNamed(sub[1])
	if !ok {
		names := make([]string, len(Metrics))
		for i, m := range Metrics {
			names[i] = m.Name
		}
		return Condition{}, fmt.Errorf("condition %q: unknown metric %q (want %s)", text, sub[1], strings.Join(names, ", "))
	}
	pct, err := strconv.ParseFloat(sub[3], 64)
	if err != nil {
		return Condition{}, fmt.Errorf("condition %q: %w", text, err)
	}
	return Condition{Text: text, Metric: m.Name, Op: sub[2], Percent: pct}, nil
}

// Holds reports whether ch is of c's metric and its percent change
// compares with c's percentage as c's operator says. Unless ignoreNoise,
// a change judged within noise never holds; a change of unknown noise
// does.
func (c Condition) Holds(ch Change, ignoreNoise bool) bool {
	if ch.Metric != c.Metric || !ignoreNoise && ch.Verdict == WithinNoise {
		return false
	}
	switch c.Op {
	case "<":
		return ch.Percent < c.Percent
	case "<=":
		return ch.Percent <= c.Percent
	case ">":
		return ch.Percent > c.Percent
	case ">=":
		return ch.Percent >= c.Percent
	}
	return false
}

// Failure is a condition that holds for a change of a measurement.
type Failure struct {
	Condition string `json:"condition"`
	Key
	Metric  string  `json:"metric"`
	Percent float64 `json:"change_percent"`
	Verdict Verdict `json:"verdict"`
	Method  string  `json:"method"`
}

// Failures returns every (condition, measurement) pair for which the
// condition holds, by condition then in the measurements' order.
func (c *Comparison) Failures(conds []Condition, ignoreNoise bool) []Failure {
	var fs []Failure
	for _, cond := range conds {
		for _, m := range c.Matched {
			for _, ch := range m.Changes {
				if cond.Holds(ch, ignoreNoise) {
					fs = append(fs, Failure{Condition: cond.Text, Key: m.Key, Metric: ch.Metric, Percent: ch.Percent, Verdict: ch.Verdict, Method: ch.Method})
				}
			}
		}
	}
	return fs
}
