package aggregate

import (
	"math"
	"testing"
)

func TestStudentTTwoSidedKnownValues(t *testing.T) {
	cases := []struct {
		t, df, want, tol float64
	}{
		// Tables of the t distribution.
		{2.0, 10, 0.07339, 1e-5},
		{2.228139, 10, 0.05, 1e-6},
		{2.570582, 5, 0.05, 1e-6},
		{12.706205, 1, 0.05, 1e-6},
		{3.169273, 10, 0.01, 1e-6},
		{0, 7, 1, 1e-12},
		// df = 1 is the Cauchy distribution: P(|T| >= 1) = 1/2.
		{1, 1, 0.5, 1e-12},
		{-1, 1, 0.5, 1e-12},
		// Large df is the normal distribution.
		{1.959964, 1e7, 0.05, 1e-6},
		{2.575829, 1e9, 0.01, 1e-6},
		// Far tails.
		{40, 30, 1.3726e-27, 1e-31},
	}
	for _, c := range cases {
		got := StudentTTwoSided(c.t, c.df)
		if math.Abs(got-c.want) > c.tol {
			t.Errorf("t=%g df=%g: p=%.8g, want %.8g", c.t, c.df, got, c.want)
		}
	}
}

// With two degrees of freedom the two-sided p value has the closed form
// 1 - |t|/sqrt(t²+2): an independent check from the centre to the far
// tail. Fractional df next to 2 must give nearly the same p.
func TestStudentTTwoSidedClosedFormDF2(t *testing.T) {
	for _, tv := range []float64{0.01, 0.3, 1, 1.5, 2.9, 4, 10, 100, 1e4} {
		// 1 - t/s written as 2/(s(s+t)), which keeps its digits in the tail.
		s := math.Sqrt(tv*tv + 2)
		want := 2 / (s * (s + tv))
		got := StudentTTwoSided(tv, 2)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("t=%g df=2: p=%.12g, want %.12g", tv, got, want)
		}
		if near := StudentTTwoSided(tv, 2.000001); math.Abs(near-got) > 1e-5 {
			t.Errorf("t=%g: df=2.000001 gives %g, df=2 gives %g", tv, near, got)
		}
	}
}

func TestRegIncBetaClosedForms(t *testing.T) {
	for _, x := range []float64{0.001, 0.1, 0.37, 0.5, 0.8, 0.999} {
		for _, a := range []float64{0.5, 1, 2.5, 7, 40} {
			// I_x(a, 1) = x^a and I_x(1, a) = 1 - (1-x)^a.
			if got, want := regIncBeta(a, 1, x), math.Pow(x, a); math.Abs(got-want) > 1e-12 {
				t.Errorf("I_%g(%g, 1) = %.15g, want %.15g", x, a, got, want)
			}
			if got, want := regIncBeta(1, a, x), 1-math.Pow(1-x, a); math.Abs(got-want) > 1e-12 {
				t.Errorf("I_%g(1, %g) = %.15g, want %.15g", x, a, got, want)
			}
		}
	}
	if regIncBeta(3, 4, 0) != 0 || regIncBeta(3, 4, 1) != 1 {
		t.Error("I_0 and I_1 are not 0 and 1")
	}
}

func TestStudentTTwoSidedRejectsBadDF(t *testing.T) {
	for _, df := range []float64{0, -3, math.NaN()} {
		if p := StudentTTwoSided(1, df); !math.IsNaN(p) {
			t.Errorf("df=%g: p=%g, want NaN", df, p)
		}
	}
	if p := StudentTTwoSided(math.Inf(1), 5); p != 0 {
		t.Errorf("t=+Inf: p=%g, want 0", p)
	}
}
