// Package result is cephbench's versioned JSON result: the workload, the
// host, what was measured and the encoded histograms, so results can be
// reported, merged and compared later.
package result

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/internal/io/atomicfile"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/steady"
)

// Schema identifies the format of a Result; it changes when a field
// changes meaning.
const Schema = "cephbench.result/v1"

// Why a run stopped: its StopReason.
const (
	StopDuration    = "duration"
	StopOps         = "ops"
	StopBytes       = "bytes"
	StopExhausted   = "exhausted" // an object limit reached, or nothing to read
	StopInterrupted = "interrupted"
	StopMinRate     = "below_min_rate" // a direction fell below its minimum rate: the run failed
	StopSteady      = "steady"         // the workload's steady-state criterion held
	StopError       = "error"          // an op failed of a kind the workload stops on
	StopTerminated  = "terminated"     // the caller stopped it (fio's exitall)
)

// MeasuresNetwork is Result.Measures of a network test: its op kinds are
// directions, its latency the round trip.
const MeasuresNetwork = "network"

// Version is cephbench's version, set at build time with
// -ldflags "-X github.com/cephbench/cephbench/result.Version=...".
var Version = "0.1.0-dev"

// Result is one measured step.
type Result struct {
	Schema  string        `json:"schema"`
	Version string        `json:"cephbench_version"`
	Name    string        `json:"name"`
	Spec    spec.Workload `json:"spec"`
	// Measures is what the result measures: empty for storage I/O,
	// MeasuresNetwork for a network test read as a result.
	Measures string    `json:"measures,omitempty"`
	Host     Host      `json:"host"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	// ElapsedSeconds is the measured period, ramp excluded.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	StopReason     string  `json:"stop_reason"`
	// Interrupted is true when the run was stopped by a signal or a
	// failure before its bound: the figures cover what was measured.
	Interrupted bool `json:"interrupted,omitempty"`
	// Unfinished marks the provisional result a run writes when it
	// starts (Begin) and replaces when it saves: one found on disk is
	// a run killed before it could save, and Load rebuilds its figures
	// from its tick log.
	Unfinished bool `json:"unfinished,omitempty"`
	// Cluster is the Ceph cluster's state before and after the run, for
	// targets on a cluster.
	Cluster *cluster.Pair `json:"cluster,omitempty"`
	// Plan places the result in a plan run; nil for a single command's.
	Plan *PlanStep `json:"plan,omitempty"`
	// Disks is how busy the block devices under a local target were over
	// the run (fio's disk util); empty where not known.
	Disks []DiskUsage `json:"disks,omitempty"`
	// Notes are facts a reader needs to trust the figures (for example that
	// O_DIRECT fell back to buffered I/O).
	Notes []string `json:"notes,omitempty"`

	Ops map[string]metrics.KindSummary `json:"ops"`
	// Series is the run's intervals, read from the tick log by Load (or,
	// for results without one, from the JSON itself).
	Series []metrics.Second `json:"-"`
	// Path is the file the result was saved to (Pending.Finish) or
	// loaded from; empty for one never saved.
	Path string `json:"-"`
	// TickLog is the file name of the result's tick log, in the result's
	// folder; empty for a result saved without one.
	TickLog   string           `json:"tick_log,omitempty"`
	Errors    map[string]int64 `json:"errors"`
	CPU       metrics.CPU      `json:"cpu"`
	Late      int64            `json:"late_ops,omitempty"`
	Missed    int64            `json:"missed_ops,omitempty"`
	Abandoned int64            `json:"abandoned_ops,omitempty"`
	// PacerLag, for a paced run, is how late its generator issued ops
	// that had a slot free; nil for runs unpaced or saved before it was
	// measured.
	PacerLag *PacerLag `json:"pacer_lag,omitempty"`
	// MeanInFlight is how many ops were in flight on average over the
	// measured period, of the Slots the run could keep in flight (workers
	// × queue depth); both zero in results saved before they were
	// measured. QueueShort says whether it fell short where it should
	// not.
	MeanInFlight float64 `json:"mean_in_flight,omitempty"`
	Slots        int     `json:"slots,omitempty"`
	// BelowMinRate, when set, is why the run failed: a direction's rate
	// fell below its minimum (StopReason is then StopMinRate).
	BelowMinRate *RateShortfall `json:"below_min_rate,omitempty"`
	// Queue is how full the workers' queues were, in fio's buckets; zero in
	// results saved before it was measured.
	Queue metrics.QueueCounts `json:"queue,omitzero"`
	// Histograms are the HDR latency histograms (nanoseconds) per op kind,
	// V2 compressed and base64 encoded, mergeable across results.
	Histograms map[string]string `json:"histograms"`
	// HistogramSettings are the histograms' range and precision, which
	// results merged together must share; nil in results saved before it
	// was recorded (each encoded histogram holds them too).
	HistogramSettings *metrics.HistogramSettings `json:"histogram_settings,omitempty"`

	// FirstError is the class (a key of Errors) of the first op that
	// failed; empty when none did.
	FirstError string `json:"first_error,omitempty"`
	// SteadyState is what the workload's steady-state criterion found;
	// nil without one.
	SteadyState *steady.State `json:"steady_state,omitempty"`
	// Hosts are the results the hosts of a run on many hosts measured, in
	// the order merged, each with its figures and histograms but without
	// its series (Series holds the hosts' seconds added); empty for a
	// result measured on one host.
	Hosts []*Result `json:"hosts,omitempty"`
	// Windows, for a run on many hosts that went on after losing one,
	// are its rates before the first loss and after each: the headline
	// rates are the first window's, when every host ran. Empty otherwise.
	Windows []Window `json:"windows,omitempty"`
	// ClockOffset, on a host's result within a run on many hosts, is
	// how far the host's clock was from the coordinator's.
	ClockOffset *ClockOffset `json:"clock_offset,omitempty"`
}

// ClockOffset is a host's clock offset from the coordinator's, measured
// over the round trip with the least delay, and that trip's half, within
// which the true offset lies; milliseconds.
type ClockOffset struct {
	OffsetMs      float64 `json:"offset_ms"`
	UncertaintyMs float64 `json:"uncertainty_ms"`
}

// Window is part of a run on many hosts during which one set of hosts
// ran: its span on the run's clock (seconds since the measurement
// started), how many hosts ran, and per op kind the ops and rates over
// its seconds.
type Window struct {
	FromSeconds float64                `json:"from_seconds"`
	ToSeconds   float64                `json:"to_seconds"`
	Hosts       int                    `json:"hosts"`
	Note        string                 `json:"note,omitempty"`
	Ops         map[string]WindowRates `json:"ops"`
}

// WindowRates are an op kind's ops and per-second rates over a Window.
type WindowRates struct {
	Ops          int64         `json:"ops"`
	IOPS         metrics.Stats `json:"iops"`
	BandwidthBps metrics.Stats `json:"bandwidth_bps"`
}

// DiskUsage is one block device's activity over a run.
type DiskUsage struct {
	Name string `json:"name"`
	// Util is the share of the run the device was busy, in percent.
	Util     float64 `json:"util_percent"`
	ReadIOs  int64   `json:"read_ios"`
	WriteIOs int64   `json:"write_ios"`
}

// Kinds returns the op kinds the result has, reads before writes.
func (r *Result) Kinds() []string {
	ks := make([]string, 0, len(r.Ops))
	for k := range r.Ops {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Save writes r as indented JSON to path, creating its directory, through a
// temporary file so a crash never leaves half a result. A result with a
// tick log is saved without its series, which the log holds; one without
// (made by hand, or converted from another format) keeps its series in
// the JSON, as results saved before tick logs did.
func (r *Result) Save(path string) error {
	if r.TickLog != "" || r.Series == nil {
		return atomicfile.WriteJSON(path, r)
	}
	return atomicfile.WriteJSON(path, embedded{Result: r, Series: r.Series})
}

// embedded is a result with its series in the JSON.
type embedded struct {
	*Result
	Series []metrics.Second `json:"series"`
}

// Load reads a result saved by Save, checks its schema and reads its
// series from its tick log.
func Load(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	stored := embedded{Result: &r}
	if err := json.Unmarshal(b, &stored); err != nil {
		return nil, fmt.Errorf("%s: not a cephbench result: %w", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, r.Schema, Schema)
	}
	r.Series, r.Path = stored.Series, path
	if r.TickLog == "" {
		return &r, nil
	}
	// Save names a tick log beside the result: a name that leads
	// elsewhere (to a device that never ends) is no result's.
	if r.TickLog != filepath.Base(r.TickLog) || r.TickLog == ".." {
		return nil, fmt.Errorf("%s: tick log %q is not a file name", path, r.TickLog)
	}
	log := filepath.Join(filepath.Dir(path), r.TickLog)
	if !r.Unfinished {
		if r.Series, err = ReadTickLog(log); err != nil {
			return nil, fmt.Errorf("%s: its tick log: %w", path, err)
		}
		return &r, nil
	}
	watched := cluster.NewSummary()
	intervals, err := readLog(log, watched.Add)
	if err == nil {
		err = r.rebuild(intervals, watched)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: rebuilding a run killed before it saved, from its tick log: %w", path, err)
	}
	return &r, nil
}

// RateShortfall is a direction whose rate over a cycle fell below its
// minimum: Kind ("read" or "write") did Got units per second, Unit
// "ops" or "bytes", over the CycleSeconds before it, against Min.
type RateShortfall struct {
	Kind         string  `json:"kind"`
	Unit         string  `json:"unit"`
	Min          float64 `json:"min"`
	Got          float64 `json:"got"`
	CycleSeconds float64 `json:"cycle_seconds"`
}

// Error says which minimum was not met, and by how much.
func (s *RateShortfall) Error() string {
	return fmt.Sprintf("%ss fell below their minimum rate of %.0f %s/s: %.0f %s/s over %gs",
		s.Kind, s.Min, s.Unit, s.Got, s.Unit, s.CycleSeconds)
}
