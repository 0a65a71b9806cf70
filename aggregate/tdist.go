package aggregate

import "math"

// StudentTTwoSided returns the two-sided p value of Student's t
// distribution: the probability that |T| >= |t| for T with df degrees of
// freedom. df need not be an integer (Welch's test gives fractional
// ones); it returns NaN for df <= 0 or a NaN argument.
func StudentTTwoSided(t, df float64) float64 {
	if math.IsNaN(t) || math.IsNaN(df) || df <= 0 {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		return 0
	}
	// P(|T| >= t) = I_x(df/2, 1/2) with x = df/(df+t²).
	return regIncBeta(df/2, 0.5, df/(df+t*t))
}

// regIncBeta is the regularized incomplete beta function I_x(a, b) for
// a, b > 0 and 0 <= x <= 1.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	// front is x^a (1-x)^b / B(a, b), computed in logs so that large a and
	// b (large df) do not overflow.
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	// The continued fraction converges quickly only for x below the mean
	// of the beta distribution; above it, use I_x(a,b) = 1 - I_{1-x}(b,a).
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

// betaFraction evaluates the continued fraction of the incomplete beta
// function,
//
//	1/(1+ d1/(1+ d2/(1+ ...)))
//	d(2m+1) = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1))
//	d(2m)   = m(b-m)x / ((a+2m-1)(a+2m))
//
// by the modified Lentz method, which carries the ratios of successive
// convergents rather than the convergents themselves so that nothing
// overflows.
func betaFraction(a, b, x float64) float64 {
	const (
		eps      = 1e-15
		tiny     = 1e-300
		maxTerms = 10000
	)
	// guard keeps a denominator away from zero, where Lentz's method would
	// divide by it.
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c := 1.0
	d := 1 / guard(1-(a+b)*x/(a+1))
	f := d
	for m := 1.0; m <= maxTerms; m++ {
		even := m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		d = 1 / guard(1+even*d)
		c = guard(1 + even/c)
		f *= d * c
		odd := -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		d = 1 / guard(1+odd*d)
		c = guard(1 + odd/c)
		step := d * c
		f *= step
		if math.Abs(step-1) < eps {
			break
		}
	}
	return f
}
