package steady

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/cephbench/cephbench/spec"
)

func criterion(t *testing.T, s string, window, ramp time.Duration) spec.SteadyState {
	t.Helper()
	c, err := spec.ParseSteadyCriterion(s)
	if err != nil {
		t.Fatal(err)
	}
	c.Window, c.Ramp = spec.Duration(window), spec.Duration(ramp)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// feed gives j one sample per second of iops ops of 4 KiB, from second
// first on, and returns the second at which the criterion held, or 0.
func feed(j *Judge, first int, iops ...int64) int {
	for i, n := range iops {
		if j.Add(n, n*4096, 1, float64(first+i)) {
			return first + i
		}
	}
	return 0
}

// fio's deviation criterion: the largest distance of a window's samples
// from their mean, here in percent of the mean.
func TestDeviationInPercentOfTheMean(t *testing.T) {
	j := New(criterion(t, "iops:10%", 3*time.Second, 0))
	// Windows: 100,200,100 (mean 133.3, max dev 66.7 = 50%), then
	// 200,100,105 (dev 31.7%), 100,105,110 (mean 105, dev 5 = 4.76%).
	if at := feed(j, 1, 100, 200, 100, 105, 110, 1000); at != 5 {
		t.Fatalf("held at second %d; want 5", at)
	}
	s := j.State()
	if !s.Attained || !slices.Equal(s.IOPS, []uint64{100, 105, 110}) || math.Abs(s.MaxDeviation-5) > 1e-9 || math.Abs(s.Value-100*5.0/105) > 1e-9 || s.Slope != 0 {
		t.Errorf("state %+v; want attained over 100,105,110 with max deviation 5 (4.76%%), no slope", s)
	}
	if iops, bw := s.Means(); iops != 105 || bw != 105*4096 {
		t.Errorf("means %d ops/s, %d B/s; want 105, %d", iops, bw, 105*4096)
	}
	if j.Add(1, 1, 1, 7) != true || !slices.Equal(j.State().IOPS, []uint64{100, 105, 110}) {
		t.Errorf("a judge that has attained took another sample")
	}
}

// fio's slope criterion: the least-squares slope of the window, its size
// compared with the limit, in the metric's units or percent of the mean.
func TestSlope(t *testing.T) {
	j := New(criterion(t, "bw_slope:1k", 4*time.Second, 0))
	// KiB/s 10,20,30,40: slope 10 KiB/s per second, above 1 KiB.
	// Then 20,30,40,40: slope 7 KiB; 30,40,40,40: 3 KiB;
	// 40,40,40,40.5: 0.15 KiB, below.
	for i, kib := range []float64{10, 20, 30, 40, 40, 40, 40.5} {
		b := int64(kib * 1024)
		held := j.Add(b/4096, b, 1, float64(i+1))
		if held != (i == 6) {
			t.Fatalf("second %d: held %v", i+1, held)
		}
	}
	s := j.State()
	if want := 0.15 * 1024; math.Abs(s.Slope-want) > 1 || s.Value != s.Slope || s.MaxDeviation != 0 {
		t.Errorf("slope %g, value %g, deviation %g; want a slope of %g B/s per second", s.Slope, s.Value, s.MaxDeviation, want)
	}
	// A falling rate has a negative slope; its size is what is judged.
	j = New(criterion(t, "iops_slope:5%", 2*time.Second, 0))
	if at := feed(j, 1, 1000, 990); at != 2 || j.State().Value >= 0 {
		t.Errorf("held at %d, value %g; want at 2, negative (-10/995 = -1%%)", at, j.State().Value)
	}
}

// Until the window is full nothing is judged, and the state pads the
// samples with zeros, as fio's JSON does; ss_ramp leaves out the samples
// ending before the ramp and a second.
func TestWindowAndRamp(t *testing.T) {
	j := New(criterion(t, "iops:50%", 3*time.Second, 2*time.Second))
	if feed(j, 1, 5, 1000, 1000, 1000) != 0 {
		t.Fatal("held before its window was full")
	}
	if s := j.State(); !slices.Equal(s.IOPS, []uint64{1000, 1000, 0}) || s.Attained {
		t.Errorf("samples %v; want the two after the ramp (seconds 3 and 4), padded", s.IOPS)
	}
	if iops, bw := (&State{}).Means(); iops != 0 || bw != 0 {
		t.Errorf("means %d, %d of an empty state", iops, bw)
	}
}

func TestParseSteadyCriterion(t *testing.T) {
	for in, want := range map[string]string{
		"iops:5%": "iops:5%", "iops_slope:0.01%": "iops_slope:0.01%", "bw:10m": "bw:10485760",
		"bw_slope:2%": "bw_slope:2%", "iops:300": "iops:300",
	} {
		c, err := spec.ParseSteadyCriterion(in)
		if err != nil || c.String() != want {
			t.Errorf("%s: %q, %v; want %q", in, c.String(), err, want)
		}
	}
	for _, bad := range []string{"iops", "iops:", "lat:5%", "bw:x", "iops:-1%", "iops:5%%"} {
		if _, err := spec.ParseSteadyCriterion(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	c := spec.SteadyState{Metric: "iops", Slope: true, Limit: 1, Window: spec.Duration(time.Second)}
	if c.Validate() == nil {
		t.Errorf("a slope over one sample accepted")
	}
	c.Window = spec.Duration(1500 * time.Millisecond)
	if c.Validate() == nil {
		t.Errorf("a window of 1.5 s accepted")
	}
}
