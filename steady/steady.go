// Package steady judges whether a run's rate holds steady, as fio's
// steadystate option does (SNIA-style qualification): it takes one sample
// of the run's IOPS and bandwidth per second and, once it has a window
// of them, computes fio's criterion over the window after each sample
// until the criterion holds. It imports only spec, so the runner, the
// result and the reports share it.
package steady

import (
	"math"

	"github.com/cephbench/cephbench/spec"
)

// State is what a judge found, in the terms of fio's JSON "steadystate"
// block.
type State struct {
	Criterion spec.SteadyState `json:"criterion"`
	// Attained: the criterion held, which ended the run.
	Attained bool `json:"attained"`
	// Value is the criterion's last value: the slope's size or the
	// largest deviation, in percent of the window's mean when the
	// criterion is in percent. MaxDeviation and Slope are the last ones
	// computed (the other stays zero, as in fio).
	Value        float64 `json:"value"`
	MaxDeviation float64 `json:"max_deviation"`
	Slope        float64 `json:"slope"`
	// IOPS and BW (bytes per second) are the window's samples, oldest
	// first, with zeros after them when the run ended before the window
	// filled.
	IOPS []uint64 `json:"iops"`
	BW   []uint64 `json:"bw"`
}

// Means are the window's mean IOPS and bandwidth as fio prints them:
// whole numbers, over the whole window.
func (s *State) Means() (iops, bw uint64) {
	if len(s.IOPS) == 0 {
		return 0, 0
	}
	var si, sb uint64
	for i := range s.IOPS {
		si += s.IOPS[i]
		sb += s.BW[i]
	}
	n := uint64(len(s.IOPS))
	return si / n, sb / n
}

// Judge takes a run's samples and says when the criterion holds. It is
// not safe for concurrent use.
type Judge struct {
	state   State
	samples int // how many the window holds, up to its length
}

// New is a judge of criterion c, which must be valid.
func New(c spec.SteadyState) *Judge {
	n := int(c.Window.D().Seconds())
	return &Judge{state: State{Criterion: c, IOPS: make([]uint64, n), BW: make([]uint64, n)}}
}

// Add takes the ops and bytes done over one interval of dur seconds that
// ended end seconds after the run's start (its ramp included), and reports
// whether the criterion now holds; after it has, Add changes nothing.
// An interval ending before the criterion's ramp is over is left out.
func (j *Judge) Add(ops, bytes int64, dur, end float64) bool {
	s := &j.state
	ramp := s.Criterion.Ramp.D().Seconds()
	switch {
	case s.Attained:
		return true
	case dur <= 0, ramp > 0 && end < ramp+1:
		return false
	}
	n := len(s.IOPS)
	if j.samples == n {
		copy(s.IOPS, s.IOPS[1:])
		copy(s.BW, s.BW[1:])
		j.samples--
	}
	s.IOPS[j.samples] = uint64(float64(ops) / dur)
	s.BW[j.samples] = uint64(float64(bytes) / dur)
	j.samples++
	if j.samples < n {
		return false
	}
	ys := s.IOPS
	if s.Criterion.Metric == "bw" {
		ys = s.BW
	}
	value := j.judge(ys)
	if s.Criterion.Percent {
		var sum uint64
		for _, y := range ys {
			sum += y
		}
		value = 100 * value / (float64(sum) / float64(n))
	}
	s.Value = value
	// fio compares the slope's size and the deviation itself (NaN, for
	// a window with no ops, never holds).
	s.Attained = math.Abs(value) < s.Criterion.Limit
	return s.Attained
}

// judge computes the window's slope (least squares over x = 0..n-1) or
// its largest deviation from its mean, records it and returns it.
func (j *Judge) judge(ys []uint64) float64 {
	n := float64(len(ys))
	var sumY, sumXY float64
	for i, y := range ys {
		sumY += float64(y)
		sumXY += float64(i) * float64(y)
	}
	if j.state.Criterion.Slope {
		sumX := n * (n - 1) / 2
		sumX2 := (n - 1) * n * (2*n - 1) / 6
		j.state.Slope = (sumXY - sumX*sumY/n) / (sumX2 - sumX*sumX/n)
		return j.state.Slope
	}
	mean := sumY / n
	dev := 0.0
	for _, y := range ys {
		dev = max(dev, math.Abs(float64(y)-mean))
	}
	j.state.MaxDeviation = dev
	return dev
}

// State is what the judge found so far: a copy.
func (j *Judge) State() *State {
	s := j.state
	s.IOPS, s.BW = append([]uint64(nil), s.IOPS...), append([]uint64(nil), s.BW...)
	return &s
}
