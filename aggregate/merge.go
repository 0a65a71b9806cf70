package aggregate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// HostRun is one host's measurement of a step that ran on several hosts
// at once.
type HostRun struct {
	// Name names the run in errors and notes: the file it was read from,
	// or its host.
	Name   string
	Result *result.Result
	// Intervals are its series with their histograms (result.ReadIntervals,
	// or the ticks an agent sent); nil when not known, which leaves the
	// merged result without a series.
	Intervals []result.Interval
	// Cluster are the samples of its watch of the cluster, from its tick
	// log; none for a host that did not watch (on many hosts, only the
	// first does).
	Cluster []cluster.Sample
}

// LoadHostRun reads the result saved at path and, when it has a tick log,
// its seconds with their histograms and its cluster samples; the run is
// named by path.
func LoadHostRun(path string) (HostRun, error) {
	r, err := result.Load(path)
	if err != nil {
		return HostRun{}, err
	}
	run := HostRun{Name: path, Result: r}
	if r.TickLog != "" {
		log := filepath.Join(filepath.Dir(path), r.TickLog)
		if run.Intervals, err = result.ReadIntervals(log); err == nil {
			run.Cluster, err = result.ClusterSamples(log)
		}
		if err != nil {
			return run, fmt.Errorf("%s: its tick log: %w", path, err)
		}
	}
	return run, nil
}

// Watcher is the index of the run that watched the cluster (its result
// has what the cluster did during the run), or failing that the first
// that recorded the cluster's state; 0 when none did. A merged result
// takes its cluster from it, and its cluster samples (ClusterOf).
func Watcher(runs []HostRun) int {
	if i := slices.IndexFunc(runs, func(r HostRun) bool { return r.Result.Cluster != nil && r.Result.Cluster.During != nil }); i >= 0 {
		return i
	}
	return max(slices.IndexFunc(runs, func(r HostRun) bool { return r.Result.Cluster != nil }), 0)
}

// ClusterOf is the cluster samples the merged result of runs keeps: the
// watching run's (Watcher); nil when none watched.
func ClusterOf(runs []HostRun) []cluster.Sample {
	if len(runs) == 0 {
		return nil
	}
	return runs[Watcher(runs)].Cluster
}

// windowSlack is how far the hosts' measured windows may differ before a
// merged result says so: the clock skew a run on many hosts allows
// (Ceph's own mon_clock_drift_allowed), within which hosts start
// together.
const windowSlack = 50 * time.Millisecond

// MergeHosts merges the measurements of one step made on several hosts at
// once into the one result of the whole run, and its series.
//
// Ops, bytes and errors per op kind are the hosts' sums, the latency
// figures those of the hosts' histograms added (never averages of the
// hosts' figures), CPU and queue counts sums. The measured window is the
// intersection of the hosts' windows (each from its Start, after its
// ramp, for its ElapsedSeconds); a note says how much shorter than their
// union it is when they differ by more than 50 ms. The series
// adds the hosts' intervals on absolute time: each host's intervals are
// shifted by its start's distance from the earliest start, in whole
// intervals (one second) rounded to the nearest, so its k-th second
// lands on the merged second nearest it. The rates are over the seconds
// every host contributed to (the window, to the second): their mean is
// their ops over their time, their spread over those of at least half a
// second; when there are none (no series, or windows that do not overlap)
// the rates are the sums of the hosts' own. Each host's result is kept in
// the merged result's Hosts, without its series; the cluster's state
// and what it did during the run are the watching host's (Watcher), the
// place in a plan and the name the first result's.
//
// Results are the same step when their workloads are equal except for
// the parts that are each host's own: the target's location (a host's
// directory, pool, image or bucket), the file prefix and the pacing rates
// (a host's share of the whole rate; the merged workload's rates are
// their sum). Their op kinds may differ (a host whose ops of a kind all
// failed), their names and plans need not match. They must also measure
// the same thing and share histogram settings. An error names the two
// results and the field that differs. MergeHosts changes none of the
// runs.
func MergeHosts(runs []HostRun) (*result.Result, []result.Interval, error) {
	if i := slices.IndexFunc(runs, func(r HostRun) bool { return r.Intervals == nil }); i >= 0 {
		m, err := MergeAdded(runs, nil)
		if err != nil {
			return nil, nil, err
		}
		m.Notes = append(m.Notes, fmt.Sprintf("no per-second series: %s came without its seconds' histograms (a tick log)", runs[i].Name))
		return m, nil, nil
	}
	if err := sameSteps(runs); err != nil {
		return nil, nil, err
	}
	var intervals []result.Interval
	var encodeErr error
	names := make([]string, len(runs))
	for i, run := range runs {
		names[i] = run.Name
	}
	series := NewSeriesAdder(names, shifts(runs), func(t metrics.Tick) {
		in, err := encodeInterval(t)
		encodeErr = cmp.Or(encodeErr, err)
		intervals = append(intervals, in)
	})
	if err := addIntervals(runs, series); err != nil {
		return nil, nil, err
	}
	series.Close()
	if encodeErr != nil {
		return nil, nil, encodeErr
	}
	m, err := MergeAdded(runs, series)
	return m, intervals, err
}

// MergeAdded is MergeHosts for runs whose seconds series added as they
// came (their Intervals are not read), as a coordinator adds its hosts'
// ticks during the run; series nil leaves the merged result without a
// series, its rates the sums of the hosts' own. The rates are those of
// series' first window; its Windows, when a host was lost, are the
// result's.
func MergeAdded(runs []HostRun, series *SeriesAdder) (*result.Result, error) {
	if err := sameSteps(runs); err != nil {
		return nil, err
	}
	m := mergedShell(runs)
	hists, err := addHistograms(runs, m)
	if err != nil {
		return nil, err
	}
	lags := make([]*result.PacerLag, len(runs))
	for i, run := range runs {
		lags[i] = run.Result.PacerLag
	}
	if m.PacerLag, err = result.MergePacerLags(lags); err != nil {
		return nil, err
	}
	from, to, notes := window(runs)
	m.ElapsedSeconds = max(to.Sub(from).Seconds(), 0)
	if series != nil {
		m.Series = slices.Clone(series.Series())
		m.Windows = series.Windows()
	}
	for kind, h := range hists {
		s := m.Ops[kind]
		s.Latency = metrics.LatencyOf(h)
		s.IOPS, s.BandwidthBps = metrics.Stats{}, metrics.Stats{}
		if iops, bw, ok := series.firstWindowRates(kind); ok {
			s.IOPS, s.BandwidthBps = iops, bw
		} else {
			for _, run := range runs {
				s.IOPS.Mean += run.Result.Ops[kind].IOPS.Mean
				s.BandwidthBps.Mean += run.Result.Ops[kind].BandwidthBps.Mean
			}
		}
		m.Ops[kind] = s
	}
	names := make([]string, len(runs))
	for i, run := range runs {
		names[i] = run.Name
		for _, n := range run.Result.Notes {
			notes = append(notes, run.Name+": "+n)
		}
	}
	m.Notes = append([]string{fmt.Sprintf("merged from %d hosts' results: %s", len(runs), strings.Join(names, ", "))}, notes...)
	return m, nil
}

// sameSteps reports the first of runs that is not the same step as the
// first, or too few runs to merge.
func sameSteps(runs []HostRun) error {
	if len(runs) < 2 {
		return fmt.Errorf("merging needs the results of at least two hosts, got %d", len(runs))
	}
	for _, run := range runs[1:] {
		if err := sameStep(runs[0], run); err != nil {
			return err
		}
	}
	return nil
}

// sameStep reports how b is not the same step as a, naming both and the
// field.
func sameStep(a, b HostRun) error {
	differ := func(field string, va, vb any) error {
		shown := func(v any) any {
			if v == nil || v == "" {
				return "unset"
			}
			return v
		}
		return fmt.Errorf("%s and %s are not the same step: their %s differ (%v and %v)", a.Name, b.Name, field, shown(va), shown(vb))
	}
	if a.Result.Measures != b.Result.Measures {
		return differ("measures", a.Result.Measures, b.Result.Measures)
	}
	sa, errA := settingsOf(a)
	sb, errB := settingsOf(b)
	if err := cmp.Or(errA, errB); err != nil {
		return err
	}
	if sa != nil && sb != nil && *sa != *sb {
		return differ("histogram_settings", fmt.Sprintf("%+v", *sa), fmt.Sprintf("%+v", *sb))
	}
	wa, wb := stepPart(a.Result.Spec), stepPart(b.Result.Spec)
	if reflect.DeepEqual(wa, wb) {
		return nil
	}
	// The field as the result's JSON names it, which is what a user
	// reading the files sees.
	var ma, mb any
	ja, _ := json.Marshal(wa) // a workload always marshals
	jb, _ := json.Marshal(wb)
	_ = json.Unmarshal(ja, &ma)
	_ = json.Unmarshal(jb, &mb)
	field, va, vb := firstDifference("spec", ma, mb)
	return differ(field, va, vb)
}

// firstDifference is the path of the first field, in name order, where a
// and b (JSON values) differ, and its values there.
func firstDifference(path string, a, b any) (string, any, any) {
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	if !okA || !okB {
		return path, a, b
	}
	keys := slices.Collect(maps.Keys(ma))
	keys = slices.AppendSeq(keys, maps.Keys(mb))
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		if !reflect.DeepEqual(ma[k], mb[k]) {
			return firstDifference(path+"."+k, ma[k], mb[k])
		}
	}
	return path, a, b
}

// stepPart is w without what each host has of its own.
func stepPart(w spec.Workload) spec.Workload {
	w.Target.Location, w.FilePrefix = "", ""
	w.ScaleRates(0)
	return w
}

// settingsOf is the histogram settings run's result declares, or those
// of its histograms for a result that does not; nil for one with
// neither.
func settingsOf(run HostRun) (*metrics.HistogramSettings, error) {
	if s := run.Result.HistogramSettings; s != nil {
		return s, nil
	}
	for _, kind := range run.Result.Kinds() {
		if enc := run.Result.Histograms[kind]; enc != "" {
			h, err := hdr.Decode([]byte(enc))
			if err != nil {
				return nil, fmt.Errorf("%s: its %s histogram: %w", run.Name, kind, err)
			}
			return new(metrics.SettingsOf(h)), nil
		}
	}
	return nil, nil
}

// mergedShell is the merged result with everything added but latency,
// rates and the series: counts, the workload, times, CPU, the hosts.
func mergedShell(runs []HostRun) *result.Result {
	first := runs[0].Result
	m := &result.Result{
		Schema: result.Schema, Version: result.Version, Name: first.Name, Spec: first.Spec,
		Measures: first.Measures, Host: mergedHost(runs), Start: first.Start, End: first.End,
		StopReason: first.StopReason, Cluster: runs[Watcher(runs)].Result.Cluster, Plan: first.Plan,
		Ops: map[string]metrics.KindSummary{}, Errors: map[string]int64{}, Histograms: map[string]string{},
	}
	var locations, prefixes []string
	m.Spec.ScaleRates(0)
	for _, run := range runs {
		r := run.Result
		locations = appendNew(locations, r.Spec.Target.Location)
		prefixes = appendNew(prefixes, r.Spec.FilePrefix)
		m.Spec.AddRates(&r.Spec)
		if r.Start.Before(m.Start) {
			m.Start = r.Start
		}
		if r.End.After(m.End) {
			m.End = r.End
		}
		if r.Interrupted {
			m.Interrupted, m.StopReason = true, r.StopReason
		}
		if r.BelowMinRate != nil && m.BelowMinRate == nil {
			// A host below its share's minimum failed the whole run.
			m.BelowMinRate, m.StopReason = r.BelowMinRate, r.StopReason
		}
		if m.HistogramSettings == nil {
			m.HistogramSettings = r.HistogramSettings
		}
		for kind, s := range r.Ops {
			t := m.Ops[kind]
			t.Ops += s.Ops
			t.Bytes += s.Bytes
			t.Errors += s.Errors
			m.Ops[kind] = t
		}
		for class, n := range r.Errors {
			m.Errors[class] += n
		}
		m.CPU.UserSeconds += r.CPU.UserSeconds
		m.CPU.SystemSeconds += r.CPU.SystemSeconds
		m.CPU.Percent += r.CPU.Percent
		m.CPU.WallSeconds = max(m.CPU.WallSeconds, r.CPU.WallSeconds)
		m.CPU.ContextSwitches += r.CPU.ContextSwitches
		m.CPU.MajorFaults += r.CPU.MajorFaults
		m.CPU.MinorFaults += r.CPU.MinorFaults
		m.Queue.Add(&r.Queue)
		m.Late += r.Late
		m.Missed += r.Missed
		m.Abandoned += r.Abandoned
		// The hosts ran at once: their queues add up.
		m.MeanInFlight += r.MeanInFlight
		m.Slots += r.Slots
		own := *r
		own.Series, own.TickLog = nil, "" // its tick log is not beside the merged result
		m.Hosts = append(m.Hosts, &own)
	}
	m.Spec.Target.Location = strings.Join(locations, ",")
	if len(prefixes) > 1 {
		m.Spec.FilePrefix = ""
	}
	return m
}

// appendNew appends s to list unless it holds it.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// mergedHost describes the hosts as one: their names, their CPUs and
// memory added, and what they share.
func mergedHost(runs []HostRun) result.Host {
	first := runs[0].Result.Host
	h := first
	var names []string
	h.CPUs, h.MemoryBytes = 0, 0
	for _, run := range runs {
		o := run.Result.Host
		names = append(names, o.Hostname)
		h.CPUs += o.CPUs
		h.MemoryBytes += o.MemoryBytes
		if o.Kernel != first.Kernel {
			h.Kernel = ""
		}
		if o.OS != first.OS {
			h.OS = ""
		}
		if o.Arch != first.Arch {
			h.Arch = ""
		}
		if o.CPUModel != first.CPUModel {
			h.CPUModel = ""
		}
		if o.GoVersion != first.GoVersion {
			h.GoVersion = ""
		}
	}
	h.Hostname = strings.Join(names, ",")
	return h
}

// addHistograms adds the hosts' histograms of each op kind into m's
// encoded histograms, and returns the sums.
func addHistograms(runs []HostRun, m *result.Result) (map[string]*hdr.Histogram, error) {
	sums := map[string]*hdr.Histogram{}
	for _, run := range runs {
		for _, kind := range run.Result.Kinds() {
			enc := run.Result.Histograms[kind]
			if enc == "" {
				return nil, fmt.Errorf("%s: its %s ops have no histogram to add", run.Name, kind)
			}
			h, err := hdr.Decode([]byte(enc))
			if err != nil {
				return nil, fmt.Errorf("%s: its %s histogram: %w", run.Name, kind, err)
			}
			if sums[kind] == nil {
				sums[kind] = h
			} else {
				sums[kind].Merge(h)
			}
		}
	}
	for kind, h := range sums {
		enc, err := h.EncodeV2()
		if err != nil {
			return nil, fmt.Errorf("encoding the merged %s histogram: %w", kind, err)
		}
		m.Histograms[kind] = string(enc)
	}
	return sums, nil
}

// measured is a result's measured window on absolute time.
func measured(r *result.Result) (from, to time.Time) {
	from = r.Start.Add(r.Spec.Ramp.D())
	return from, from.Add(time.Duration(r.ElapsedSeconds * float64(time.Second)))
}

// window returns the intersection of the runs' measured windows (to is
// before from when they do not overlap), and a note when it falls short
// of their union.
func window(runs []HostRun) (from, to time.Time, notes []string) {
	from, to = measured(runs[0].Result)
	first, last := from, to
	latest, earliest := runs[0].Name, runs[0].Name
	for _, run := range runs[1:] {
		f, t := measured(run.Result)
		if f.After(from) {
			from, latest = f, run.Name
		}
		if t.Before(to) {
			to, earliest = t, run.Name
		}
		first, last = minTime(first, f), maxTime(last, t)
	}
	union := last.Sub(first)
	switch overlap := to.Sub(from); {
	case overlap <= 0:
		notes = append(notes, fmt.Sprintf("the hosts' measured windows do not overlap (%s started %.3fs after %s ended): the hosts did not run at once, and the rates are the sums of each host's own", latest, -overlap.Seconds(), earliest))
	case union-overlap > windowSlack:
		notes = append(notes, fmt.Sprintf("the hosts' measured windows overlap for %.3fs of the %.3fs from the first start to the last end (%.1f%%; %s started last, %s ended first): the rates are over the overlap",
			overlap.Seconds(), union.Seconds(), 100*overlap.Seconds()/union.Seconds(), latest, earliest))
	}
	return from, to, notes
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// shifts is, per run, how many whole seconds its start is from the
// earliest run's, rounded to the nearest: its k-th second is added into
// the merged second nearest it.
func shifts(runs []HostRun) []int {
	base, _ := measured(runs[0].Result)
	for _, run := range runs[1:] {
		f, _ := measured(run.Result)
		base = minTime(base, f)
	}
	out := make([]int, len(runs))
	for i, run := range runs {
		f, _ := measured(run.Result)
		out[i] = int(math.Round(f.Sub(base).Seconds()))
	}
	return out
}

// addIntervals adds the runs' intervals into series, merged second by
// merged second, so that it holds the sum of one second at a time.
func addIntervals(runs []HostRun, series *SeriesAdder) error {
	last := 0
	for i, run := range runs {
		last = max(last, series.shift[i]+len(run.Intervals))
	}
	for b := range last {
		for i, run := range runs {
			k := b - series.shift[i]
			if k < 0 || k >= len(run.Intervals) {
				continue
			}
			t, err := decodeInterval(run.Intervals[k])
			if err != nil {
				return fmt.Errorf("%s: %w", run.Name, err)
			}
			series.Add(i, t)
			if k == len(run.Intervals)-1 {
				series.End(i)
			}
		}
	}
	return nil
}

// decodeInterval is in as a tick, its histograms decoded.
func decodeInterval(in result.Interval) (metrics.Tick, error) {
	t := metrics.Tick{Second: in.Second, Histograms: make(map[string]*hdr.Histogram, len(in.Kinds))}
	for kind := range in.Kinds {
		enc := in.Histograms[kind]
		if enc == "" {
			return t, fmt.Errorf("its %s second at %gs has no histogram to add", kind, in.T)
		}
		h, err := hdr.Decode([]byte(enc))
		if err != nil {
			return t, fmt.Errorf("its %s second at %gs: %w", kind, in.T, err)
		}
		t.Histograms[kind] = h
	}
	return t, nil
}

// encodeInterval is t as an interval, its histograms encoded.
func encodeInterval(t metrics.Tick) (result.Interval, error) {
	in := result.Interval{Second: t.Second, Histograms: map[string]string{}}
	for kind, h := range t.Histograms {
		enc, err := h.EncodeV2()
		if err != nil {
			return in, fmt.Errorf("encoding the merged %s second at %gs: %w", kind, in.T, err)
		}
		in.Histograms[kind] = string(enc)
	}
	return in, nil
}
