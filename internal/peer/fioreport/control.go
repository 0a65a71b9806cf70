package fioreport

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/steady"
)

// errnos maps the error classes of results (the system's error names)
// back to their numbers, for fio's error fields.
var errnos = func() map[string]int {
	m := map[string]int{}
	for e := unix.Errno(1); e < 256; e++ {
		if name := unix.ErrnoName(e); name != "" {
			m[name] = int(e)
		}
	}
	return m
}()

// errnoOf is the error number fio would report for an op that failed
// with an error of class: a failed verification is EILSEQ, as in fio, and
// a class without a number (an engine's own) is EIO.
func errnoOf(class string) int {
	switch class {
	case "":
		return 0
	case "verify":
		return int(unix.EILSEQ)
	case "timeout":
		return int(unix.ETIMEDOUT)
	case "canceled":
		return int(unix.ECANCELED)
	case "not_found":
		return int(unix.ENOENT)
	}
	if n, ok := errnos[class]; ok {
		return n
	}
	return int(unix.EIO)
}

// strerror is the C library's text for error number n, as fio prints it:
// Go's, capitalized as glibc's are.
func strerror(n int) string {
	s := unix.Errno(n).Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// addErrors sets the section's error figures from r: the job's error is
// the error that ended it or, as fio has it with continue_on_error, the
// first one it went on after; total_err counts those it went on after.
func (s *section) addErrors(j *Job, r *result.Result) {
	var failed int64
	for _, n := range r.Errors {
		failed += n
	}
	s.continued = failed
	stopped := r.StopReason == result.StopError
	if stopped {
		s.continued--
	}
	s.firstErr = errnoOf(r.FirstError)
	if s.err == 0 && (stopped || j.ContinueOnError && r.FirstError != "") {
		s.err = s.firstErr
	}
	s.steady = r.SteadyState
}

// writeErrors is fio's errors line, printed with continue_on_error.
func (p *printer) writeErrors(s *section) {
	if s.job.ContinueOnError {
		p.printf("     errors    : total=%d, first_error=%d/<%s>\n", s.continued, s.firstErr, strerror(s.firstErr))
	}
}

// writeSteadyState is fio's steadystate line.
func (p *printer) writeSteadyState(ss *steady.State) {
	if ss == nil {
		return
	}
	iops, bw := ss.Means()
	attained, how := "no", " mean dev"
	if ss.Attained {
		attained = "yes"
	}
	if ss.Criterion.Slope {
		how = " slope"
	}
	// fio formats the mean in KiB/s, its decimal form as if in kB/s.
	kib := bw / 1024
	p.printf("  steadystate  : attained=%s, bw=%s (%s), iops=%s, %s%s=%.3f%s\n", attained,
		num2str(kib*1024, 4, true, unitBytePerSec), num2str(kib*1000, 4, false, unitBytePerSec), num2str(iops, 4, false, unitNone),
		ss.Criterion.Metric, how, ss.Value, ss.Criterion.Unit())
}

// steadyJSON is fio's "steadystate" object.
func steadyJSON(ss *steady.State) *object {
	attained, c := int64(0), ss.Criterion
	if ss.Attained {
		attained = 1
	}
	iops, bw := ss.Means()
	ints := func(vs []uint64) []any {
		out := make([]any, len(vs))
		for i, v := range vs {
			out[i] = v
		}
		return out
	}
	data := (&object{}).
		add("bw_mean", bw).
		add("iops_mean", iops).
		add("iops", ints(ss.IOPS)).
		add("bw", ints(ss.BW))
	return (&object{}).
		add("ss", fmt.Sprintf("%s:%f%s", c.Kind(), float32(c.Limit), c.Unit())).
		add("duration", int64(len(ss.IOPS))).
		add("attained", attained).
		add("criterion", fmt.Sprintf("%f%s", float32(ss.Value), c.Unit())).
		add("max_deviation", ss.MaxDeviation).
		add("slope", ss.Slope).
		add("data", data)
}

// errorsJSON adds fio's error counts to a job's object, with
// continue_on_error.
func errorsJSON(o *object, s *section) {
	if s.job.ContinueOnError {
		o.add("total_err", s.continued).add("first_error", int64(s.firstErr))
	}
}
