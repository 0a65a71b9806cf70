// Package aggregate reads saved results (result files and results folders)
// and groups them into measurements: one group per step, target and op
// kind, holding that measurement's repeats, with statistics across the
// repeats and latency merged exactly from their histograms. Reports and
// comparisons are built on it.
package aggregate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
)

// Source is one path given to Load.
type Source struct {
	Path string
	// Manifest is the folder's manifest; nil for a result file or a
	// folder without one.
	Manifest *result.Manifest
}

// Set is the results read from some sources, in the order they ran.
// Every result's Plan is set: results saved outside a plan get their name
// as the step, their target as the target, and repeat numbers in the
// order read.
type Set struct {
	Sources []Source
	Results []*result.Result
}

// Load reads results from paths: a results folder (the results its
// manifest lists, in the plan's order; without a manifest, every result
// file in it, in name order) or a result file. Network results
// (cephbench net) are read too, as op kinds "up" and "down" with the
// round-trip latency. It fails on a path that is neither, a file that is
// not a cephbench result, and when nothing is found.
func Load(paths ...string) (*Set, error) {
	s := &Set{}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			r, err := loadFile(p)
			if err != nil {
				return nil, err
			}
			s.Sources = append(s.Sources, Source{Path: p})
			s.Results = append(s.Results, r)
			continue
		}
		src, rs, err := loadDir(p)
		if err != nil {
			return nil, err
		}
		s.Sources = append(s.Sources, src)
		s.Results = append(s.Results, rs...)
	}
	if len(s.Results) == 0 {
		return nil, fmt.Errorf("no results in %s", strings.Join(paths, ", "))
	}
	s.label()
	return s, nil
}

func loadDir(dir string) (Source, []*result.Result, error) {
	src := Source{Path: dir}
	m, err := result.LoadManifest(dir)
	switch {
	case err == nil:
		src.Manifest = m
		var rs []*result.Result
		for _, st := range m.Steps {
			for _, f := range st.Results {
				r, err := loadFile(filepath.Join(dir, f))
				if err != nil {
					return src, nil, err
				}
				rs = append(rs, r)
			}
		}
		return src, rs, nil
	case !errors.Is(err, os.ErrNotExist):
		return src, nil, err
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return src, nil, err
	}
	sort.Strings(names)
	var rs []*result.Result
	for _, n := range names {
		r, err := loadFile(n)
		if errors.Is(err, errOtherSchema) {
			continue // a report or comparison saved beside the results
		}
		if err != nil {
			return src, nil, err
		}
		rs = append(rs, r)
	}
	return src, rs, nil
}

// errOtherSchema is a cephbench file that is not a result.
var errOtherSchema = errors.New("a cephbench file that is not a result")

// loadFile reads a cephbench result or network result.
func loadFile(path string) (*result.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var probe struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%s: not a cephbench result: %w", path, err)
	}
	switch {
	case probe.Schema == netSchema:
		return loadNet(path, b)
	case probe.Schema != result.Schema && strings.HasPrefix(probe.Schema, "cephbench."):
		return nil, fmt.Errorf("%s: %w (schema %s)", path, errOtherSchema, probe.Schema)
	}
	return result.Load(path)
}

// label fills in Plan for results saved outside a plan.
func (s *Set) label() {
	seen := map[[2]string]int{}
	for _, r := range s.Results {
		if r.Plan != nil {
			continue
		}
		key := [2]string{r.Name, TargetOf(r)}
		seen[key]++
		r.Plan = &result.PlanStep{Step: r.Name, Target: key[1], Repeat: seen[key]}
	}
}

// TargetOf names a result's target: the plan's name for it, else the
// target itself.
func TargetOf(r *result.Result) string {
	if r.Plan != nil && r.Plan.Target != "" {
		return r.Plan.Target
	}
	return r.Spec.Target.String()
}

// Stat is one figure across the repeats of a measurement.
type Stat struct {
	Values []float64 `json:"values"` // one per repeat, in order
	Mean   float64   `json:"mean"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	// Stddev is the sample standard deviation (n-1); zero for one repeat.
	Stddev float64 `json:"stddev"`
}

// StatOf computes the Stat of values.
func StatOf(values []float64) Stat {
	s := metrics.StatsOf(values)
	return Stat{Values: values, Mean: s.Mean, Min: s.Min, Max: s.Max, Stddev: s.Stddev}
}

// N is the number of repeats.
func (s Stat) N() int { return len(s.Values) }

// Group is one measurement: one op kind of one step on one target, with
// its repeats.
type Group struct {
	Step string `json:"step"`
	// Job is the result's own name when it differs from the step (a fio
	// job of a step that runs a job file); empty otherwise.
	Job    string `json:"job,omitempty"`
	Target string `json:"target"`
	Kind   string `json:"kind"`
	// BlockSize is the op size in bytes, 0 when ops vary.
	BlockSize int64 `json:"block_size"`
	// Results are the repeats, in the order they ran.
	Results []*result.Result `json:"-"`

	IOPS         Stat `json:"iops"`
	BandwidthBps Stat `json:"bandwidth_bytes_per_sec"`
	LatMeanNs    Stat `json:"latency_mean_ns"`
	LatP50Ns     Stat `json:"latency_p50_ns"`
	LatP99Ns     Stat `json:"latency_p99_ns"`
	LatMaxNs     Stat `json:"latency_max_ns"`
	CPUPercent   Stat `json:"cpu_percent"`
	// DiskUtil is the busiest device's utilisation, in percent; no values
	// when no result knows it.
	DiskUtil Stat  `json:"disk_util_percent"`
	Errors   int64 `json:"errors"`
	// Merged is the latency of every op of every repeat, from the
	// histograms merged exactly; zero when a result has no histogram.
	Merged metrics.Latency `json:"latency_all_repeats"`

	// The decoded histograms, each once: every repeat's (nil where it has
	// none) and their merge (nil when a repeat has none).
	histograms []*hdr.Histogram
	merged     *hdr.Histogram
}

// Name is how reports name the measurement's row: the step, the job when
// there is one.
func (g *Group) Name() string { return KeyOf(g).Name() }

// Groups returns the set's measurements in the order their first repeat
// ran.
func (s *Set) Groups() []Group {
	type key struct{ step, job, target, kind string }
	index := map[key]int{}
	var groups []Group
	for _, r := range s.Results {
		job := r.Name
		if job == r.Plan.Step || strings.HasPrefix(r.Plan.Step, job+" ") {
			job = ""
		}
		for _, kind := range r.Kinds() {
			k := key{r.Plan.Step, job, TargetOf(r), kind}
			i, ok := index[k]
			if !ok {
				i = len(groups)
				index[k] = i
				groups = append(groups, Group{Step: k.step, Job: job, Target: k.target, Kind: kind, BlockSize: int64(r.Spec.BlockSize)})
			}
			groups[i].Results = append(groups[i].Results, r)
		}
	}
	for i := range groups {
		groups[i].compute()
	}
	return groups
}

func (g *Group) compute() {
	var iops, bw, mean, p50, p99, maxLat, cpu, util []float64
	g.merged = metrics.NewHistogram()
	for _, r := range g.Results {
		s := r.Ops[g.Kind]
		iops = append(iops, s.IOPS.Mean)
		bw = append(bw, s.BandwidthBps.Mean)
		mean = append(mean, s.Latency.MeanNs)
		p50 = append(p50, float64(s.Latency.Percentiles.At(50)))
		p99 = append(p99, float64(s.Latency.Percentiles.At(99)))
		maxLat = append(maxLat, float64(s.Latency.MaxNs))
		if r.CPU.Percent > 0 || r.CPU.WallSeconds > 0 { // network results measure none
			cpu = append(cpu, r.CPU.Percent)
		}
		if len(r.Disks) > 0 {
			busiest := 0.0
			for _, d := range r.Disks {
				busiest = max(busiest, d.Util)
			}
			util = append(util, busiest)
		}
		g.Errors += s.Errors
		h := decodeHistogram(r.Histograms[g.Kind])
		g.histograms = append(g.histograms, h)
		if h == nil {
			g.merged = nil
		} else if g.merged != nil {
			g.merged.Merge(h)
		}
	}
	g.IOPS, g.BandwidthBps = StatOf(iops), StatOf(bw)
	g.LatMeanNs, g.LatP50Ns, g.LatP99Ns, g.LatMaxNs = StatOf(mean), StatOf(p50), StatOf(p99), StatOf(maxLat)
	g.CPUPercent, g.DiskUtil = StatOf(cpu), StatOf(util)
	if g.merged != nil {
		g.Merged = metrics.LatencyOf(g.merged)
	}
}

// decodeHistogram decodes a result's histogram; nil for none or one that
// does not decode.
func decodeHistogram(enc string) *hdr.Histogram {
	if enc == "" {
		return nil
	}
	h, err := hdr.Decode([]byte(enc))
	if err != nil {
		return nil
	}
	return h
}

// Histogram returns the merged latency histogram (nanoseconds) of the
// group's repeats, for latency distribution plots; nil when a result has
// none. It is the group's own: callers must not change it.
func (g *Group) Histogram() *hdr.Histogram { return g.merged }

// RepeatHistogram returns the latency histogram of repeat i (an index into
// Results); nil when it has none. Callers must not change it.
func (g *Group) RepeatHistogram(i int) *hdr.Histogram { return g.histograms[i] }

// CV is the coefficient of variation of a stat (stddev over mean), 0 when
// the mean is 0: the run-to-run noise of a measurement, relative.
func (s Stat) CV() float64 {
	if s.Mean == 0 || math.IsNaN(s.Mean) {
		return 0
	}
	return s.Stddev / math.Abs(s.Mean)
}
