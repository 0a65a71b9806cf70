package result

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/internal/io/atomicfile"
	"github.com/cephbench/cephbench/metrics"
)

// A tick log is an HdrHistogram interval log (format version 1.3: any
// HdrHistogram log reader reads its histograms) with the figures a
// histogram does not hold in comment lines, which such readers skip. Each
// interval, in time order, is
//
//	#tick t=T dur=D kinds=N [in_flight=F]
//	#kind NAME ops=N bytes=N errors=N last_ns=N   ┐ N times, kinds
//	Tag=NAME,START,LENGTH,MAX,HISTFAAA...         ┘ sorted by name
//
// where T is the interval's end and D its length in seconds since the
// measurement started (Go's shortest float form, read back exactly), F
// the mean number of ops in flight over it (absent in logs written before
// it was measured, and when none were), and
// the tagged line is the kind's latency histogram (ns) of the interval,
// its times in seconds since the measurement started and its maximum in
// milliseconds, as HdrHistogram logs have them. Between intervals, a run
// on a Ceph cluster has the cluster's samples (cluster.Sample), each a
// line
//
//	#cluster {JSON}

// TickLogExt is the extension of a result's tick log.
const TickLogExt = ".hlog"

// TickLogPath is where the tick log of the result saved at resultPath
// goes: beside it, its ".json" replaced by TickLogExt.
func TickLogPath(resultPath string) string {
	return strings.TrimSuffix(resultPath, ".json") + TickLogExt
}

// TickLog streams a run's ticks to its interval log: each interval reaches
// the file (one write) when it closes, so a process killed at any moment
// leaves every closed interval on disk. Once a write fails (the disk is
// full), the intervals the file did not take are kept in memory, so that
// a copy of the whole log can still be made elsewhere. Tick is a
// metrics.Subscriber; Tick and Cluster are safe to call concurrently, and
// Close is called after both are done.
type TickLog struct {
	mu   sync.Mutex // holds buf for one interval's or sample's lines
	path string
	f    *os.File
	buf  bytes.Buffer
	lw   *hdr.HistogramLogWriter
	// written is how many bytes the file took; from the first failed
	// write on, spilling is set and unsaved is what it did not take.
	written  int64
	spilling bool
	unsaved  bytes.Buffer
	err      error // the first failure
}

// createTickLog creates the log at path, and its folder, for a run whose
// measurement started at start, and writes its header; flag is added to
// O_WRONLY|O_CREATE (O_EXCL: a new file only).
func createTickLog(path string, start time.Time, flag int) (*TickLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|flag, 0o644)
	if err != nil {
		return nil, err
	}
	l := &TickLog{path: path, f: f}
	l.lw = hdr.NewHistogramLogWriter(&l.buf)
	// The writer's methods fail only when their writer does: a
	// bytes.Buffer does not.
	_ = l.lw.OutputLogFormatVersion()
	_ = l.lw.OutputStartTime(start.UnixMilli())
	_ = l.lw.OutputComment("cephbench tick log: per interval a #tick line, then per op kind a #kind line and its histogram (ns)")
	_ = l.lw.OutputLegend()
	l.flush()
	return l, nil
}

// Tick appends one interval to the log.
func (l *TickLog) Tick(t metrics.Tick) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil && !l.spilling {
		return // a histogram failed to encode: the log cannot go on
	}
	names := make([]string, 0, len(t.Kinds))
	for name := range t.Kinds {
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Fprintf(&l.buf, "#tick t=%s dur=%s kinds=%d", exact(t.T), exact(t.Dur), len(names))
	if t.MeanInFlight > 0 {
		fmt.Fprintf(&l.buf, " in_flight=%s", exact(t.MeanInFlight))
	}
	l.buf.WriteByte('\n')
	for _, name := range names {
		k := t.Kinds[name]
		fmt.Fprintf(&l.buf, "#kind %s ops=%d bytes=%d errors=%d last_ns=%d\n", name, k.Ops, k.Bytes, k.Errors, k.LastNs)
		if err := l.lw.OutputIntervalHistogram(t.Histograms[name]); err != nil {
			l.err = fmt.Errorf("the %s histogram at %gs: %w", name, t.T, err)
			return
		}
	}
	l.flush()
}

// Cluster appends one cluster sample to the log, between intervals.
func (l *TickLog) Cluster(s cluster.Sample) {
	b, err := json.Marshal(s)
	if err != nil {
		return // a sample is numbers and strings: it always encodes
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil && !l.spilling {
		return
	}
	fmt.Fprintf(&l.buf, "%s%s\n", clusterPrefix, b)
	l.flush()
}

// clusterPrefix starts a cluster sample's line.
const clusterPrefix = "#cluster "

// flush writes what the buffer holds, one write per interval, or keeps it
// once a write failed.
func (l *TickLog) flush() {
	defer l.buf.Reset()
	if l.spilling {
		l.unsaved.Write(l.buf.Bytes())
		return
	}
	n, err := l.f.Write(l.buf.Bytes())
	l.written += int64(n)
	if err != nil {
		l.err, l.spilling = cmp.Or(l.err, err), true
		l.unsaved.Write(l.buf.Bytes()[n:])
	}
}

// copyTo writes a new file at path, which must not exist, holding every
// interval l took, and returns it as a tick log of its own.
func (l *TickLog) copyTo(path string) (*TickLog, error) {
	src, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	c := &TickLog{path: path, f: f}
	if _, err := io.CopyN(f, src, l.written); err != nil {
		c.Discard()
		return nil, err
	}
	if _, err := f.Write(l.unsaved.Bytes()); err != nil {
		c.Discard()
		return nil, err
	}
	return c, nil
}

// Close closes the file and returns the first failure to write it.
func (l *TickLog) Close() error {
	return errors.Join(l.err, l.f.Close())
}

// attach closes l and makes it r's tick log, to be saved beside r: r
// names it, and has its series read back from it as Load would.
func (r *Result) attach(l *TickLog) error {
	if err := l.Close(); err != nil {
		return fmt.Errorf("writing the tick log: %w", err)
	}
	series, err := ReadTickLog(l.path)
	if err != nil {
		return err
	}
	r.TickLog, r.Series = filepath.Base(l.path), series
	return nil
}

// Discard closes l and removes its file, for a run that made no result.
func (l *TickLog) Discard() {
	_ = l.Close() // its content is unwanted
	_ = os.Remove(l.path)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func exact(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// ReadTickLog reads a tick log back into the series it was written from.
// A final interval cut short by the end of the file (the process died
// while writing it) is left out.
func ReadTickLog(path string) ([]metrics.Second, error) {
	intervals, err := ReadIntervals(path)
	if err != nil {
		return nil, err
	}
	return seriesOf(intervals), nil
}

func seriesOf(intervals []Interval) []metrics.Second {
	series := make([]metrics.Second, len(intervals))
	for i, in := range intervals {
		series[i] = in.Second
	}
	return series
}

// Interval is one interval of a series with the latency histograms (ns)
// of its op kinds, encoded as a result's: what adding the seconds of
// several series needs, in a few hundred bytes per kind rather than a
// decoded histogram's hundreds of kilobytes.
type Interval struct {
	metrics.Second
	Histograms map[string]string
}

// ReadIntervals reads a tick log back into its intervals, each with its
// histograms, as ReadTickLog reads its series.
func ReadIntervals(path string) ([]Interval, error) {
	return readLog(path, nil)
}

// ClusterSamples reads the cluster's samples back from the tick log at
// path, in the order taken; a sample that does not decode is left out.
func ClusterSamples(path string) ([]cluster.Sample, error) {
	var samples []cluster.Sample
	_, err := readLog(path, func(s cluster.Sample) { samples = append(samples, s) })
	return samples, err
}

// readLog reads the tick log at path into its intervals, handing each
// cluster sample to sample in turn (nil: samples are skipped, not
// decoded), so that a caller that sums them up need not hold them all.
func readLog(path string, sample func(cluster.Sample)) ([]Interval, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	intervals, err := readTicks(bufio.NewReader(f), sample)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return intervals, nil
}

// SaveNew saves r, with intervals as its series (nil: none) and samples
// as its cluster samples, at path or, when that name is taken, the first
// free after it (as Begin), for a series made other than by running
// (results merged, say); it returns where r went. r's series becomes
// intervals'. A result with neither has no tick log; each sample goes
// before the first interval that ends after it was taken.
func (r *Result) SaveNew(path string, intervals []Interval, samples []cluster.Sample) (string, error) {
	if intervals == nil && samples == nil {
		r.TickLog = ""
		return atomicfile.CreateNewJSON(path, r)
	}
	p, err := Begin(path, r)
	if err != nil {
		return "", err
	}
	for _, in := range intervals {
		for len(samples) > 0 && samples[0].At <= in.T {
			p.Cluster(samples[0])
			samples = samples[1:]
		}
		t := metrics.Tick{Second: in.Second, Histograms: map[string]*hdr.Histogram{}}
		for kind, enc := range in.Histograms {
			h, err := hdr.Decode([]byte(enc))
			if err != nil {
				p.Discard()
				return "", fmt.Errorf("the %s histogram at %gs: %w", kind, in.T, err)
			}
			h.SetTag(kind)
			h.SetStartTimeMs(int64((in.T - in.Dur) * 1000))
			h.SetEndTimeMs(int64(in.T * 1000))
			t.Histograms[kind] = h
		}
		p.Tick(t)
	}
	for _, smp := range samples {
		p.Cluster(smp)
	}
	return p.Finish(r)
}

func readTicks(r *bufio.Reader, sample func(cluster.Sample)) ([]Interval, error) {
	series := []Interval{}
	var sec *Interval   // the interval being read
	var want int        // its kinds
	var kind string     // the kind whose histogram comes next
	var counts [4]int64 // its ops, bytes, errors, last_ns
	complete := func() bool { return sec == nil || (len(sec.Kinds) == want && kind == "") }
	for n := 1; ; n++ {
		line, err := r.ReadString('\n')
		if errors.Is(err, io.EOF) {
			break // a line without its newline is a write cut short
		}
		if err != nil {
			return nil, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, clusterPrefix):
			var smp cluster.Sample
			if sample != nil && json.Unmarshal([]byte(strings.TrimPrefix(line, clusterPrefix)), &smp) == nil {
				sample(smp)
			}
		case strings.HasPrefix(line, "#tick "):
			if !complete() {
				return nil, fmt.Errorf("line %d: an interval with %d of its %d kinds", n, len(sec.Kinds), want)
			}
			if sec != nil {
				series = append(series, *sec)
			}
			sec = &Interval{Second: metrics.Second{Kinds: map[string]metrics.KindSecond{}}, Histograms: map[string]string{}}
			if _, err := fmt.Sscanf(line, "#tick t=%g dur=%g kinds=%d", &sec.T, &sec.Dur, &want); err != nil {
				return nil, fmt.Errorf("line %d: %q: %w", n, line, err)
			}
			// Sscanf reads NaN and Inf, which no JSON (a report's, a
			// merged result's) can hold.
			if !finite(sec.T) || !finite(sec.Dur) || sec.Dur < 0 {
				return nil, fmt.Errorf("line %d: %q: t and dur are not seconds", n, line)
			}
			if sec.MeanInFlight, err = meanInFlightOf(line); err != nil {
				return nil, fmt.Errorf("line %d: %q: %w", n, line, err)
			}
		case strings.HasPrefix(line, "#kind "):
			if sec == nil || kind != "" {
				return nil, fmt.Errorf("line %d: a kind out of place", n)
			}
			if _, err := fmt.Sscanf(line, "#kind %s ops=%d bytes=%d errors=%d last_ns=%d", &kind, &counts[0], &counts[1], &counts[2], &counts[3]); err != nil {
				return nil, fmt.Errorf("line %d: %q: %w", n, line, err)
			}
		case strings.HasPrefix(line, "Tag="):
			tag, fields, _ := strings.Cut(strings.TrimPrefix(line, "Tag="), ",")
			parts := strings.Split(fields, ",")
			if tag != kind || len(parts) != 4 {
				return nil, fmt.Errorf("line %d: a histogram tagged %q where %q's was due", n, tag, kind)
			}
			h, err := hdr.Decode([]byte(parts[3]))
			if err != nil {
				return nil, fmt.Errorf("line %d: the %s histogram: %w", n, kind, err)
			}
			sec.Kinds[kind] = metrics.NewKindSecond(counts[0], counts[1], counts[2], counts[3], h)
			sec.Histograms[kind] = parts[3]
			kind = ""
		}
	}
	if sec != nil && complete() {
		series = append(series, *sec)
	}
	return series, nil
}

// meanInFlightOf reads a tick line's in_flight field, 0 when it has none.
func meanInFlightOf(line string) (float64, error) {
	_, field, ok := strings.Cut(line, " in_flight=")
	if !ok {
		return 0, nil
	}
	f, err := strconv.ParseFloat(field, 64)
	if err != nil || !finite(f) || f < 0 {
		return 0, errors.New("in_flight is not a count")
	}
	return f, nil
}
