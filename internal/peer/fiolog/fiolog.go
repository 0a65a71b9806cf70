// Package fiolog writes fio 3.33's log files (write_bw_log, write_lat_log,
// write_iops_log, write_hist_log) from a run's measured ops, one sample per
// op as it completes, so that fio's own tools (fio2gnuplot,
// fio_generate_plots, fiologparser_hist.py) read them unchanged.
//
// The lines are fio's: "time (ms), value, direction, block size[, offset],
// priority", times in milliseconds since the job's measured start, latencies
// in nanoseconds, bandwidth in KiB/s; with log_avg_msec, lines average (or,
// with log_max_value, take the largest of) a window, as fio's do. The
// histogram log's lines are fio's 1856 latency bins (29 groups of 64) of
// the window's completion latencies, merged 2^log_hist_coarseness at a time.
//
// cephbench times each op once, from its start to its completion: the lat
// and clat logs carry that same latency, and the slat log is empty, as
// fio's is for its synchronous engines.
package fiolog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Options say which logs a job writes and how: fio's options of the same
// names.
type Options struct {
	// BW, Lat, IOPS and Hist are the logs' name prefixes (write_bw_log=
	// and the like, or the job's name when given without a value); ""
	// writes no such log. Relative names are in the process's folder.
	BW   string `json:"bw,omitempty"`
	Lat  string `json:"lat,omitempty"`
	IOPS string `json:"iops,omitempty"`
	Hist string `json:"hist,omitempty"`
	// AvgMsec is log_avg_msec: 0 logs every op, N one line per N ms
	// window and direction.
	AvgMsec int `json:"avg_msec,omitempty"`
	// MaxValue is log_max_value: a window's line has its largest value,
	// not its mean.
	MaxValue bool `json:"max_value,omitempty"`
	// HistMsec is log_hist_msec, the histogram log's window; 0 writes an
	// empty histogram log, as fio does. HistCoarseness is
	// log_hist_coarseness (0 to 6).
	HistMsec       int `json:"hist_msec,omitempty"`
	HistCoarseness int `json:"hist_coarseness,omitempty"`
	// PerJob is per_job_logs: NAME_bw.N.log per clone, N being fio's
	// thread number, made anew; without it one NAME_bw.log that each
	// clone appends its lines to when the job ends, after what earlier
	// runs left there, as fio does.
	PerJob bool `json:"per_job"`
	// Offset (log_offset) adds each op's offset as a column; Prio
	// (log_prio) prints the priority column as fio's hex priority value.
	Offset bool `json:"offset,omitempty"`
	Prio   bool `json:"prio,omitempty"`
}

// Any says whether o asks for any log.
func (o Options) Any() bool { return o.BW != "" || o.Lat != "" || o.IOPS != "" || o.Hist != "" }

// Sample is one op that completed: its clone (from 0 within the job),
// direction, place and times since the job's measured start.
type Sample struct {
	Clone        int
	Write        bool
	Offset, Size int64
	Start, End   time.Duration
}

// Logs are one job's open log files. Add may be called concurrently.
type Logs struct {
	o      Options
	clones []*cloneLogs
	// shared are the files every clone appends to when !PerJob, by kind.
	shared map[kind]string
}

// kind is one of fio's log files of a job.
type kind int

const (
	bwLog kind = iota
	iopsLog
	latLog
	slatLog
	clatLog
	histLog
	numKinds
)

var kindNames = [numKinds]string{"bw", "iops", "lat", "slat", "clat", "clat_hist"}

// Open creates the log files of a job of clones clones, first being fio's
// thread number of its first clone (1 for the first job's). Errors name
// the file.
func Open(o Options, first, clones int) (*Logs, error) {
	l := &Logs{o: o, shared: map[kind]string{}}
	for c := range clones {
		cl := &cloneLogs{o: &l.o}
		l.clones = append(l.clones, cl)
		for k := range numKinds {
			prefix := o.prefix(k)
			if prefix == "" {
				continue
			}
			var f *os.File
			var err error
			if o.PerJob {
				f, err = os.Create(fmt.Sprintf("%s_%s.%d.log", prefix, kindNames[k], first+c))
			} else {
				// Each clone's lines go to a file of its own, appended to
				// the shared log in clone order at the end, as fio
				// appends each clone's log when it ends.
				name := fmt.Sprintf("%s_%s.log", prefix, kindNames[k])
				l.shared[k] = name
				f, err = os.CreateTemp(filepath.Dir(name), ".cephbench-log-*")
			}
			if err != nil {
				return nil, errors.Join(err, l.close(false))
			}
			cl.files[k] = f
			cl.w[k] = bufio.NewWriterSize(f, 64<<10)
		}
	}
	return l, nil
}

// prefix is the name prefix of kind k's file, "" if o writes none.
func (o Options) prefix(k kind) string {
	switch k {
	case bwLog:
		return o.BW
	case iopsLog:
		return o.IOPS
	case histLog:
		return o.Hist
	}
	return o.Lat
}

// Add logs s. Samples of one clone should come in completion order, as
// fio's do; a sample a little out of order lands in the window it arrives
// in.
func (l *Logs) Add(s Sample) {
	if s.Clone < 0 || s.Clone >= len(l.clones) {
		return
	}
	c := l.clones[s.Clone]
	c.mu.Lock()
	defer c.mu.Unlock()
	c.add(s)
}

// Close ends the logs at elapsed, the job's measured time: it writes the
// windows still open, as fio does when a job ends, and closes the files.
func (l *Logs) Close(elapsed time.Duration) error {
	for _, c := range l.clones {
		c.mu.Lock()
		c.finish(ms(elapsed))
		c.mu.Unlock()
	}
	return l.close(true)
}

// Remove closes the logs of a job that never ran and removes their files.
func (l *Logs) Remove() { l.close(false) }

// close flushes and closes every file; with keep false (a failed Open)
// it removes them.
func (l *Logs) close(keep bool) error {
	var errs []error
	for _, c := range l.clones {
		for k, f := range c.files {
			if f == nil {
				continue
			}
			if err := c.w[k].Flush(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", f.Name(), err))
			}
			if shared, ok := l.shared[kind(k)]; ok && keep {
				errs = append(errs, appendTo(shared, f))
			}
			if err := f.Close(); err != nil {
				errs = append(errs, err)
			}
			if _, ok := l.shared[kind(k)]; ok || !keep {
				os.Remove(f.Name())
			}
		}
	}
	return errors.Join(errs...)
}

// appendTo appends the content of f to the file name, creating it.
func appendTo(name string, f *os.File) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	out, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, f)
	return errors.Join(err, out.Close())
}

func ms(d time.Duration) int64 { return int64(d / time.Millisecond) }
