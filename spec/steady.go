package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SteadyState is a criterion that ends a run once its rate holds steady
// (fio's steadystate=, ss_dur= and ss_ramp=; SNIA-style qualification):
// one sample of the rate per second, and the run stops when the last
// Window of them meets it.
type SteadyState struct {
	// Metric is the rate judged: "iops" (ops per second) or "bw" (bytes
	// per second).
	Metric string `json:"metric"`
	// Slope judges the least-squares slope of the samples (per second);
	// otherwise their largest distance from their mean.
	Slope bool `json:"slope,omitempty"`
	// Limit: the criterion holds when that slope's size, or that
	// distance, is below it: in percent of the samples' mean when
	// Percent, else in the metric's own units.
	Limit   float64 `json:"limit"`
	Percent bool    `json:"percent,omitempty"`
	// Window is how many seconds the samples span: whole seconds.
	Window Duration `json:"window"`
	// Ramp delays the first sample: only samples ending Ramp plus one
	// second after the run's start (its ramp included) count, as fio
	// counts them after ss_ramp.
	Ramp Duration `json:"ramp,omitempty"`
}

// ParseSteadyCriterion reads a criterion as fio writes it: iops:N%,
// iops:N (ops/s), iops_slope:N%, iops_slope:N, bw:N%, bw:SIZE (bytes/s,
// as ParseSize reads it), bw_slope:N% or bw_slope:SIZE. The window and
// ramp are left zero.
func ParseSteadyCriterion(s string) (SteadyState, error) {
	kind, limit, ok := strings.Cut(strings.TrimSpace(s), ":")
	var c SteadyState
	c.Metric, c.Slope = strings.CutSuffix(kind, "_slope")
	switch {
	case c.Metric != "iops" && c.Metric != "bw":
		return c, fmt.Errorf("steady-state criterion %q: want iops, iops_slope, bw or bw_slope, then :LIMIT", s)
	case !ok || strings.TrimSpace(limit) == "":
		return c, fmt.Errorf("steady-state criterion %q: no limit: want %s:N or %s:N%%", s, kind, kind)
	}
	limit = strings.TrimSpace(limit)
	var err error
	switch pct, isPct := strings.CutSuffix(limit, "%"); {
	case isPct:
		c.Percent = true
		c.Limit, err = strconv.ParseFloat(strings.TrimSpace(pct), 64)
	case c.Metric == "iops":
		c.Limit, err = strconv.ParseFloat(limit, 64)
	default:
		var n Size
		n, err = ParseSize(limit)
		c.Limit = float64(n)
	}
	if err == nil && (c.Limit < 0 || c.Limit != c.Limit) {
		err = errors.New("negative")
	}
	if err != nil {
		return c, fmt.Errorf("steady-state criterion %q: bad limit %q", s, limit)
	}
	return c, nil
}

// String is the criterion as ParseSteadyCriterion reads it,
// "iops_slope:0.01%" (a bandwidth in bytes); "" for none.
func (s SteadyState) String() string {
	if s.Metric == "" {
		return ""
	}
	return fmt.Sprintf("%s:%s%s", s.Kind(), strconv.FormatFloat(s.Limit, 'f', -1, 64), s.Unit())
}

// Kind is the criterion's name as fio gives it: iops, iops_slope, bw or
// bw_slope.
func (s SteadyState) Kind() string {
	if s.Slope {
		return s.Metric + "_slope"
	}
	return s.Metric
}

// Unit is "%" for a limit in percent, else "".
func (s SteadyState) Unit() string {
	if s.Percent {
		return "%"
	}
	return ""
}

// Set makes s the criterion v as ParseSteadyCriterion reads it, keeping
// s's window and ramp: a flag's value.
func (s *SteadyState) Set(v string) error {
	c, err := ParseSteadyCriterion(v)
	if err != nil {
		return err
	}
	c.Window, c.Ramp = s.Window, s.Ramp
	*s = c
	return nil
}

// Type names a criterion flag's value in usage.
func (*SteadyState) Type() string { return "criterion" }

// Validate reports what is wrong with the criterion, or nil.
func (s *SteadyState) Validate() error {
	switch {
	case s.Metric != "iops" && s.Metric != "bw":
		return fmt.Errorf("steady state: invalid metric %q (want iops or bw)", s.Metric)
	case s.Limit < 0 || s.Limit != s.Limit:
		return fmt.Errorf("steady state: invalid limit %g", s.Limit)
	case s.Window < Duration(time.Second) || s.Window.D()%time.Second != 0:
		return fmt.Errorf("steady state: the window %s is not a whole number of seconds", s.Window)
	case s.Slope && s.Window < Duration(2*time.Second):
		return errors.New("steady state: a slope needs a window of 2 seconds or more")
	case s.Ramp < 0:
		return fmt.Errorf("steady state: invalid ramp %s", s.Ramp)
	}
	return nil
}
