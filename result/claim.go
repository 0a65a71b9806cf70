package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/internal/io/atomicfile"
	"github.com/cephbench/cephbench/metrics"
)

// Pending is a result being measured, its name claimed: the result a run
// will save, held by a provisional result that says the run did not
// finish, and its tick log beside it, streaming. A run killed at any
// moment leaves a result that Load reads, rebuilt from the seconds its
// tick log holds. Tick is a metrics.Subscriber; Tick and Cluster may be
// called concurrently, Pending's other methods from one goroutine once
// they are done.
type Pending struct {
	path string
	log  *TickLog
}

// Begin claims path, or the first free of its name with -2, -3, ...
// before ".json", for the result that r, a run starting at r.Start,
// becomes: it creates the JSON file and its tick log exclusively, so that
// no run's result ever takes another's place, and writes r there marked
// Unfinished. r is not kept.
func Begin(path string, r *Result) (*Pending, error) {
	return claim(path, r, func(p string) (*TickLog, error) { return createTickLog(p, r.Start, os.O_EXCL) })
}

// claim is Begin with the tick log made by newLog, which creates the file
// at its path exclusively.
func claim(path string, r *Result, newLog func(path string) (*TickLog, error)) (*Pending, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	for n := 1; n <= atomicfile.MaxSuffix; n++ {
		p := filepath.Join(dir, atomicfile.Suffixed(name, n)+".json")
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		log, err := newLog(TickLogPath(p))
		if err == nil {
			if err = writeUnfinished(f, r, filepath.Base(log.path)); err != nil {
				log.Discard()
			}
		}
		if err = errors.Join(err, f.Close()); err != nil {
			_ = os.Remove(p) // ours, made just now
		}
		if errors.Is(err, fs.ErrExist) {
			continue // a tick log of that name, left without its result
		}
		if err != nil {
			return nil, err
		}
		return &Pending{path: p, log: log}, nil
	}
	return nil, fmt.Errorf("%s and the %d names after it are taken", path, atomicfile.MaxSuffix-1)
}

// writeUnfinished writes r, marked unfinished, with its tick log's name.
func writeUnfinished(f *os.File, r *Result, tickLog string) error {
	u := *r
	u.Schema, u.Unfinished, u.TickLog, u.Interrupted, u.StopReason = Schema, true, tickLog, true, StopInterrupted
	b, err := json.MarshalIndent(&u, "", "  ")
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return err
}

// Path is where the result is saved.
func (p *Pending) Path() string { return p.path }

// Tick appends one interval to the result's tick log.
func (p *Pending) Tick(t metrics.Tick) { p.log.Tick(t) }

// Cluster appends one sample of the cluster's to the result's tick log,
// between its intervals: Load rebuilds a killed run's Cluster.During
// from them.
func (p *Pending) Cluster(s cluster.Sample) { p.log.Cluster(s) }

// Discard removes the claimed result and its tick log, for a run that
// made no result.
func (p *Pending) Discard() {
	p.log.Discard()
	_ = os.Remove(p.path) // ours: the provisional result
}

// Finish makes the tick log r's and saves r in place of the provisional
// result; it returns where r was saved. When that fails (the disk filled
// up, say), r and its whole series go to a fallback folder instead
// (FallbackDirs): the returned path is that copy and the error, a
// *FallbackError, names both places. Only when no fallback can be written
// either is the path empty.
func (p *Pending) Finish(r *Result) (string, error) {
	err := p.save(r)
	if err == nil {
		return p.path, nil
	}
	saved, fbErr := p.fallback(r)
	if fbErr != nil {
		return "", fmt.Errorf("saving the result to %s: %w; no fallback place took it either: %w", p.path, err, fbErr)
	}
	_ = os.Remove(p.path)     // the provisional result, superseded
	_ = os.Remove(p.log.path) // its copy is whole
	return saved, &FallbackError{Path: p.path, Fallback: saved, Err: err}
}

// save makes the tick log r's and saves r in place of the provisional
// result.
func (p *Pending) save(r *Result) error {
	if err := r.attach(p.log); err != nil {
		return err
	}
	return r.Save(p.path)
}

// FallbackError is a result that could not be saved where it should have
// been, and was saved in a fallback place instead.
type FallbackError struct {
	Path, Fallback string
	Err            error
}

func (e *FallbackError) Error() string {
	return fmt.Sprintf("saving the result to %s: %v; it was saved to %s instead", e.Path, e.Err, e.Fallback)
}

func (e *FallbackError) Unwrap() error { return e.Err }

// FallbackDirs are where a result that cannot be saved in its own folder
// goes, the first that takes it: under $XDG_STATE_HOME (or ~/.local/state)
// and under the system's temporary folder.
func FallbackDirs() []string {
	var dirs []string
	state := os.Getenv("XDG_STATE_HOME")
	if home, err := os.UserHomeDir(); state == "" && err == nil {
		state = filepath.Join(home, ".local", "state")
	}
	if state != "" {
		dirs = append(dirs, filepath.Join(state, "cephbench", "unsaved"))
	}
	return append(dirs, filepath.Join(os.TempDir(), "cephbench-unsaved"))
}

// fallback saves r, with every interval its tick log took, under the
// first of FallbackDirs that takes it.
func (p *Pending) fallback(r *Result) (string, error) {
	var errs []error
	for _, dir := range FallbackDirs() {
		saved, err := p.copyTo(r, filepath.Join(dir, filepath.Base(p.path)))
		if err == nil {
			return saved, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", dir, err))
	}
	return "", errors.Join(errs...)
}

// copyTo saves r at path, or the first free name after it, with a copy
// of every interval p's tick log took.
func (p *Pending) copyTo(r *Result, path string) (string, error) {
	q, err := claim(path, r, p.log.copyTo)
	if err != nil {
		return "", err
	}
	if err := q.save(r); err != nil {
		q.Discard()
		return "", err
	}
	return q.path, nil
}

// rebuild fills in the figures of an unfinished result from intervals,
// its tick log's, and what the cluster did during the run from the
// summary of the log's samples: what a run killed before it saved had
// measured in the seconds it finished.
func (r *Result) rebuild(intervals []Interval, watched *cluster.Summary) error {
	r.Series = seriesOf(intervals)
	if during := watched.During(); during.Samples > 0 {
		if r.Cluster == nil {
			r.Cluster = &cluster.Pair{}
		}
		r.Cluster.During = during
	}
	r.Ops, r.Errors, r.Histograms = map[string]metrics.KindSummary{}, map[string]int64{}, map[string]string{}
	var elapsed float64
	sums := map[string]*hdr.Histogram{}
	rates := map[string]*[2][]float64{} // per kind: IOPS, bytes/s of each whole second
	for _, in := range intervals {
		elapsed = max(elapsed, in.T)
		for kind, k := range in.Kinds {
			s := r.Ops[kind]
			s.Ops, s.Bytes, s.Errors = s.Ops+k.Ops, s.Bytes+k.Bytes, s.Errors+k.Errors
			r.Ops[kind] = s
			if k.Errors > 0 {
				r.Errors[kind] += k.Errors
			}
			if rates[kind] == nil {
				rates[kind] = &[2][]float64{}
			}
			if in.Dur >= 0.5 { // as a run's own: a short final second is noise
				rates[kind][0] = append(rates[kind][0], float64(k.Ops)/in.Dur)
				rates[kind][1] = append(rates[kind][1], float64(k.Bytes)/in.Dur)
			}
			h, err := hdr.Decode([]byte(in.Histograms[kind]))
			if err != nil {
				return fmt.Errorf("the %s histogram at %gs: %w", kind, in.T, err)
			}
			if sums[kind] == nil {
				sums[kind] = h
			} else {
				sums[kind].Merge(h)
			}
		}
	}
	for kind, s := range r.Ops {
		s.IOPS, s.BandwidthBps = metrics.StatsOf(rates[kind][0]), metrics.StatsOf(rates[kind][1])
		if elapsed > 0 {
			s.IOPS.Mean, s.BandwidthBps.Mean = float64(s.Ops)/elapsed, float64(s.Bytes)/elapsed
		}
		s.Latency = metrics.LatencyOf(sums[kind])
		r.Ops[kind] = s
		enc, err := sums[kind].EncodeV2()
		if err != nil {
			return fmt.Errorf("encoding the %s histogram: %w", kind, err)
		}
		r.Histograms[kind] = string(enc)
	}
	r.ElapsedSeconds = elapsed
	r.End = r.Start.Add(time.Duration(elapsed * float64(time.Second)))
	// Once: a rebuilt result saved again is rebuilt again when loaded.
	if note := fmt.Sprintf("the run was killed before it saved its result: these figures are rebuilt from the %d seconds its tick log holds", len(intervals)); !slices.Contains(r.Notes, note) {
		r.Notes = append(r.Notes, note)
	}
	return nil
}
