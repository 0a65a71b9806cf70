package step

import (
	"github.com/cephbench/cephbench/internal/peer/fiolog"
	"github.com/cephbench/cephbench/spec"
)

// Fio is a fio job's options beyond its workload: when it starts among
// the invocation's jobs and what fio's report of it prints. A job's
// whole-target passes and randrepeat are the step's Passes and Seed.
type Fio struct {
	// StartDelay is startdelay: how long the job waits, once its jobs
	// start together, before any I/O.
	StartDelay spec.Duration `json:"start_delay,omitempty"`
	// Stonewall: the job starts once every earlier job has finished; the
	// jobs without it start together with those before them.
	Stonewall bool `json:"stonewall,omitempty"`
	// Group is the job's reporting group, 0-based as fio prints it (g=0).
	Group int `json:"group"`
	// GroupReporting reports the job's clones, and the other jobs of its
	// group that have it, as one.
	GroupReporting bool   `json:"group_reporting,omitempty"`
	Description    string `json:"description,omitempty"`
	// NumJobs is numjobs: the clones the step's workers stand for.
	NumJobs int `json:"numjobs"`
	// RW is the job's rw as fio names it ("randrw"), IOEngine its
	// ioengine as the job gives it ("libaio"), IODepth its iodepth as
	// given (sync engines still run one I/O at a time).
	RW       string `json:"rw"`
	IOEngine string `json:"ioengine"`
	IODepth  int    `json:"iodepth"`
	// PercentileList is percentile_list; nil means fio's default list.
	PercentileList []float64 `json:"percentile_list"`
	// LatPercentiles is lat_percentiles: percentiles of the total
	// latency too.
	LatPercentiles bool `json:"lat_percentiles,omitempty"`
	// Options are the options set in the job's own section (or after
	// its --name), as written, for fio's JSON "job options".
	Options []FioOption `json:"options"`
	// Logs are the fio log files the job writes (write_bw_log and the
	// like); nil for none.
	Logs *fiolog.Options `json:"logs,omitempty"`
}

// FioOption is one fio option as a job gave it: its canonical name and
// its value as written.
type FioOption struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}
