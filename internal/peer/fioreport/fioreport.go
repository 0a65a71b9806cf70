// Package fioreport prints cephbench results in fio 3.33's output formats:
// the normal text report, JSON, JSON+ and terse version 3, so that what
// people and tools read from fio they can read from cephbench.
//
// Every figure comes from what cephbench measured. Where cephbench measures
// something differently from fio, the output says what fio says when it
// has the figure in the same sense, and the differences are these:
//
//   - cephbench times each op once: from when the runner lets it start
//     (its scheduled time in a paced run; for a staging queue, when the
//     engine started it) to its completion. That is fio's total latency
//     ("lat"), and it is also printed as the completion latency ("clat"),
//     which fio counts from the end of the submission: the two are equal.
//     The submission latency ("slat") is not measured, so it is printed as
//     fio prints it when it has none, as for its synchronous engines: no
//     slat line, and zeros with N=0 in JSON.
//   - Latency figures come from HDR histograms at three significant digits:
//     min, max, mean, standard deviation and percentiles are within 0.1%
//     of the exact values. fio quantizes its percentiles far more coarsely
//     (64 buckets per power of two), so the two differ in the last digits.
//   - IOPS and bandwidth are fio's formulas over the run time in whole
//     milliseconds, as fio prints it.
//   - fio samples bandwidth and IOPS every 500 ms; cephbench's series has
//     an interval per second. The bw and iops lines are over those
//     intervals, leaving out a final one shorter than half a second, as
//     cephbench's own summaries do.
//   - IO depths count how many of a worker's ops (a worker is a clone)
//     were in flight when each started. Submit and complete count ops per
//     call of cephbench's engine interface (Do or Submit, Reap), which an
//     engine may batch into fewer system calls, where fio counts per
//     io_submit or getevents call.
//   - CPU figures (usr, sys, ctx, majf, minf) are the cephbench process's,
//     which runs a job's clones as goroutines rather than processes: usr
//     and sys are divided by the job's clones as fio divides them by its
//     processes' summed run time, ctx and faults are the process's totals.
//   - A job of numjobs=N clones is one cephbench run with N workers.
//     Without group_reporting each clone is a section of its own, as in
//     fio, when the caller kept each clone's ops, bytes and latencies
//     (Job.Clones); the clones share the job's run time, CPU (split
//     evenly) and IO depth counts. Without them the job is one section
//     with jobs=N.
//   - Short and dropped ios are zero: cephbench's engines fail a short
//     transfer, which then counts as an error, not as an io. The latency
//     line (target, window, percentile) is fio's without a latency target,
//     which cephbench does not have.
package fioreport

import (
	"time"

	"github.com/cephbench/cephbench/internal/io/diskstats"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// Report is what fio reports at the end of a run: the groups of jobs and
// the disks they used.
type Report struct {
	// Version names the program on fio's version line and in "fio
	// version", such as "cephbench-0.1.0".
	Version string
	// Time is when the report is made: the date in each job's section and
	// JSON's "timestamp" and "time", in Time's location.
	Time time.Time
	// PID is the process that ran the jobs, printed where fio prints its
	// first clone's.
	PID int
	// GlobalOptions are the job file's global options, for JSON's "global
	// options"; nil leaves it out, as fio does when there are none.
	GlobalOptions []Option
	Groups        []Group
	// Disks are the disks the jobs' files were on, in fio's order.
	Disks []diskstats.Usage
}

// Group is a reporting group: jobs that fio runs together and sums up in
// one "Run status group" paragraph.
type Group struct {
	ID   int
	Jobs []Job
	// GroupReporting prints the group's jobs as one section, their
	// figures summed the way fio sums them.
	GroupReporting bool
}

// Job is one fio job section and the cephbench result of running it.
type Job struct {
	Name, Description string
	// Result is the run's result; nil for a job that did not run, which
	// fio prints only in JSON and terse output, with zeros.
	Result *result.Result
	// NumJobs is the job's numjobs: how many clones the result sums.
	NumJobs int
	// RW is the job's rw as fio names it ("randrw"), IOEngine its
	// ioengine ("libaio"), BlockSize its block size in bytes for reads
	// and writes alike, unless BlockSizes gives them per direction.
	RW, IOEngine string
	BlockSize    int64
	BlockSizes   spec.BlockSizes
	IODepth      int
	// PercentileList is the job's percentile_list; nil means fio's
	// default list. fio keeps at most 20.
	PercentileList []float64
	// LatPercentiles is lat_percentiles: percentiles of the total
	// latency too, besides those of the completion latency.
	LatPercentiles bool
	// Err is the job's error number, zero when it succeeded, and ErrText
	// what fio prints after it (the system's text for Err if empty).
	Err     int
	ErrText string
	// Options are the options set in the job's section, for JSON's "job
	// options"; its name is always there first.
	Options []Option
	// Clones are each clone's own result, in clone order, when the run
	// kept them; nil otherwise. Without group reporting each is printed
	// as a job of its own, as fio prints its clones.
	Clones []*result.Result
}

// parts are the jobs fio prints for j: each clone on its own when j has
// their results and the group does not report as one, else j.
func (j *Job) parts(groupReporting bool) []*Job {
	if groupReporting || len(j.Clones) < 2 || j.Result == nil {
		return []*Job{j}
	}
	parts := make([]*Job, len(j.Clones))
	for i, r := range j.Clones {
		clone := *j
		clone.Result, clone.NumJobs, clone.Clones = r, 1, nil
		parts[i] = &clone
	}
	return parts
}

// Option is one option as the job file sets it.
type Option struct{ Name, Value string }

// DefaultPercentiles is fio's default percentile_list.
var DefaultPercentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// maxPercentiles is how many percentiles fio keeps of a list.
const maxPercentiles = 20
