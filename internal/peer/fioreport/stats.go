package fioreport

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/metrics"
)

// kinds are cephbench's op kinds in fio's direction order: read, write.
var kinds = [2]string{"read", "write"}

// samples is fio's io_stat of a rate: how it sums samples over jobs is
// fio's, not statistics' (see add).
type samples struct {
	n             int
	min, max      float64
	mean, squares float64 // squares: the sum of squared deviations from the mean
}

func samplesOf(xs []float64) samples {
	if len(xs) == 0 {
		return samples{}
	}
	st := metrics.StatsOf(xs)
	s := samples{n: st.Samples, min: st.Min, max: st.Max, mean: st.Mean}
	for _, x := range xs {
		s.squares += (x - s.mean) * (x - s.mean)
	}
	return s
}

// add sums o into s as fio's group reporting does for bandwidth and IOPS:
// minimums, maximums and means are added, since the jobs ran at once.
func (s *samples) add(o samples) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		*s = o
		return
	}
	s.n += o.n
	s.min += o.min
	s.max += o.max
	s.mean += o.mean
	s.squares += o.squares
}

func (s samples) stddev() float64 {
	if s.n < 2 {
		return 0
	}
	return math.Sqrt(s.squares / float64(s.n-1))
}

// direction is one direction's figures of a section.
type direction struct {
	bytes, ios int64
	runtimeMs  int64
	hist       *hdr.Histogram // nil: no op in this direction
	bw, iops   samples        // bw in KiB/s
}

// section is what fio prints as one job: a job, or with group reporting a
// whole group.
type section struct {
	job     *Job // the first job: name, description, percentiles, options
	group   int
	members int
	err     int
	errText string
	dirs    [2]direction
	all     *hdr.Histogram // every direction's latencies, for fio's latency buckets
	sync    *hdr.Histogram // the syncs' latencies (fsync=, end_fsync); nil without any
	// CPU times and the run time they are shared over, in milliseconds.
	userMs, sysMs, runMs float64
	ctx, majf, minf      int64
	queue                metrics.QueueCounts
}

func newSection(j *Job, group int) (*section, error) {
	s := &section{job: j, group: group, members: max(j.NumJobs, 1), err: j.Err, errText: j.ErrText, all: metrics.NewHistogram()}
	r := j.Result
	if r == nil {
		return s, nil
	}
	for d, kind := range kinds {
		ks, ok := r.Ops[kind]
		if !ok || ks.Ops == 0 {
			continue
		}
		h, err := hdr.Decode([]byte(r.Histograms[kind]))
		if err != nil {
			return nil, fmt.Errorf("job %s: the %s histogram: %w", j.Name, kind, err)
		}
		dir := &s.dirs[d]
		dir.bytes, dir.ios, dir.hist = ks.Bytes, ks.Ops, h
		// fio's run time is whole milliseconds; a run under one still
		// did its ops in some time.
		dir.runtimeMs = max(int64(r.ElapsedSeconds*1000), 1)
		dir.bw, dir.iops = seriesSamples(r.Series, kind)
		s.all.Merge(h)
	}
	if ks, ok := r.Ops["sync"]; ok && ks.Ops > 0 {
		h, err := hdr.Decode([]byte(r.Histograms["sync"]))
		if err != nil {
			return nil, fmt.Errorf("job %s: the sync histogram: %w", j.Name, err)
		}
		s.sync = h
	}
	wall := r.CPU.WallSeconds
	if wall == 0 { // a result saved before CPU figures carried their period
		wall = r.ElapsedSeconds
	}
	s.runMs = wall * 1000 * float64(s.members)
	s.userMs, s.sysMs = r.CPU.UserSeconds*1000, r.CPU.SystemSeconds*1000
	s.ctx, s.majf, s.minf = r.CPU.ContextSwitches, r.CPU.MajorFaults, r.CPU.MinorFaults
	s.queue = r.Queue
	return s, nil
}

// seriesSamples returns kind's bandwidth (KiB/s) and IOPS over the
// intervals of the series that metrics.Collector.Summary uses.
func seriesSamples(series []metrics.Second, kind string) (bw, iops samples) {
	var bws, ops []float64
	for _, sec := range series {
		if sec.Dur < 0.5 {
			continue
		}
		ks := sec.Kinds[kind]
		bws = append(bws, float64(ks.Bytes)/sec.Dur/1024)
		ops = append(ops, float64(ks.Ops)/sec.Dur)
	}
	return samplesOf(bws), samplesOf(ops)
}

// add sums o into s as fio's group reporting does.
func (s *section) add(o *section) {
	s.members += o.members
	if s.err == 0 {
		s.err, s.errText = o.err, o.errText
	}
	for d := range s.dirs {
		a, b := &s.dirs[d], &o.dirs[d]
		if b.hist == nil {
			continue
		}
		if a.hist == nil {
			a.hist = metrics.NewHistogram()
		}
		a.hist.Merge(b.hist)
		a.bytes += b.bytes
		a.ios += b.ios
		a.runtimeMs = max(a.runtimeMs, b.runtimeMs)
		a.bw.add(b.bw)
		a.iops.add(b.iops)
	}
	s.all.Merge(o.all)
	if o.sync != nil {
		if s.sync == nil {
			s.sync = metrics.NewHistogram()
		}
		s.sync.Merge(o.sync)
	}
	s.userMs += o.userMs
	s.sysMs += o.sysMs
	s.runMs += o.runMs
	s.ctx += o.ctx
	s.majf += o.majf
	s.minf += o.minf
	s.queue.Add(&o.queue)
}

func (s *section) did() bool { return s.dirs[0].ios+s.dirs[1].ios > 0 }

func (s *section) cpu() (usr, sys float64) {
	if s.runMs == 0 {
		return 0, 0
	}
	return s.userMs * 100 / s.runMs, s.sysMs * 100 / s.runMs
}

// bwBytes and iops are fio's rates of a direction, over its whole-
// millisecond run time.
func (d *direction) bwBytes() uint64 {
	if d.runtimeMs == 0 {
		return 0
	}
	return uint64(d.bytes) * 1000 / uint64(d.runtimeMs)
}

func (d *direction) iopsRate() float64 {
	if d.runtimeMs == 0 {
		return 0
	}
	return 1000 * float64(d.ios) / float64(d.runtimeMs)
}

// latency is fio's summary of a latency: min, max, mean, the sample
// standard deviation and the count, in nanoseconds.
type latency struct {
	min, max  int64
	mean, dev float64
	n         int64
}

func latencyOf(h *hdr.Histogram) latency {
	if h == nil || h.TotalCount() == 0 {
		return latency{}
	}
	n := h.TotalCount()
	l := latency{min: h.Min(), max: h.Max(), mean: h.Mean(), n: n}
	if n > 1 {
		// HDR's deviation is the population's; fio prints the sample's.
		l.dev = h.StdDev() * math.Sqrt(float64(n)/float64(n-1))
	}
	return l
}

// percentiles returns the job's percentile list, sorted and cut to fio's
// length, and how many decimals fio prints them with.
func (j *Job) percentiles() (list []float64, precision int) {
	list = DefaultPercentiles
	if j.PercentileList != nil {
		list = slices.Clone(j.PercentileList)
		slices.Sort(list)
	}
	list = list[:min(len(list), maxPercentiles)]
	for _, p := range list {
		// fio counts the decimals as written in the job file; these are
		// the fewest that write the value.
		s := strconv.FormatFloat(p, 'f', -1, 64)
		for i := range s {
			if s[i] == '.' {
				precision = max(precision, len(s)-i-1)
			}
		}
	}
	return list, precision
}

// percentileValues are h's values at ps, in nanoseconds.
func percentileValues(h *hdr.Histogram, ps []float64) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = h.ValueAtPercentile(p)
	}
	return out
}

// latencyBuckets are fio's latency distribution: the share of ops, in
// percent, under each of 2, 4, 10, 20, 50, 100, 250, 500, 750 and 1000
// nanoseconds, then microseconds, then 2 ... 2000 and more milliseconds.
// An HDR bucket wider than a nanosecond (above 2048 ns) can straddle an
// edge; it counts in the fio bucket of its lowest value.
type latencyBuckets struct {
	ns, us [10]float64
	ms     [12]float64
	nsOps  int64 // ops under a microsecond
}

var latencyEdges = [12]int64{2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000, math.MaxInt64}

func latencyBucketsOf(h *hdr.Histogram) latencyBuckets {
	var counts [32]int64 // ns, us and ms buckets end to end
	total := h.TotalCount()
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		v, base, n := b.From, 0, 10
		switch {
		case v >= int64(time.Millisecond):
			v, base, n = v/int64(time.Millisecond), 20, 12
		case v >= int64(time.Microsecond):
			v, base = v/int64(time.Microsecond), 10
		}
		i := 0
		for i < n-1 && v >= latencyEdges[i] {
			i++
		}
		counts[base+i] += b.Count
	}
	out := latencyBuckets{}
	for _, c := range counts[:10] {
		out.nsOps += c
	}
	share := func(c int64) float64 {
		if total == 0 || c == 0 {
			return 0
		}
		// fio shows a bucket with any op as at least 0.01%.
		return max(100*float64(c)/float64(total), 0.01)
	}
	for i := range 10 {
		out.ns[i] = share(counts[i])
		out.us[i] = share(counts[10+i])
	}
	for i := range 12 {
		out.ms[i] = share(counts[20+i])
	}
	return out
}

// distribution is fio's share of each bucket of counts, in percent; a
// bucket with anything in it shows as at least 0.1%.
func distribution(counts [metrics.QueueBuckets]int64) [metrics.QueueBuckets]float64 {
	var total int64
	for _, c := range counts {
		total += c
	}
	var out [metrics.QueueBuckets]float64
	if total == 0 {
		return out
	}
	for i, c := range counts {
		if c > 0 {
			out[i] = max(100*float64(c)/float64(total), 0.1)
		}
	}
	return out
}

// fio's latency histogram: 64 buckets per power of two, values under 128
// exact, the last bucket taking everything from about 17 s.
const (
	platBits = 6
	platVal  = 1 << platBits
	platNr   = 29 * platVal
)

// platIndex is fio's bucket of a latency in nanoseconds.
func platIndex(v int64) int {
	msb := 63
	for msb > 0 && v>>msb == 0 {
		msb--
	}
	if msb <= platBits {
		return int(v)
	}
	errorBits := msb - platBits
	idx := (errorBits+1)<<platBits + (int(v>>errorBits) & (platVal - 1))
	return min(idx, platNr-1)
}

// platValue is the value fio gives its bucket idx: the middle of its range.
func platValue(idx int) int64 {
	if idx < platVal<<1 {
		return int64(idx)
	}
	errorBits := idx>>platBits - 1
	base := int64(1) << (errorBits + platBits)
	k := int64(idx % platVal)
	return base + int64((float64(k)+0.5)*float64(int64(1)<<errorBits))
}

// fioBins regroups h into fio's buckets. Every HDR bucket lies inside one
// of fio's: HDR's are 1 ns wide up to 2048 ns and 1/1024 of a power of two
// above, fio's 1 ns wide up to 128 ns and 1/64 of a power of two above,
// both starting at each power of two. So the counts are exactly those fio
// would have counted.
func fioBins(h *hdr.Histogram) (idx []int, counts []int64) {
	bins := map[int]int64{}
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			bins[platIndex(b.From)] += b.Count
		}
	}
	for i := range bins {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		counts = append(counts, bins[i])
	}
	return idx, counts
}

// groupStats is fio's group_run_stats: a group's sections summed up.
type groupStats struct {
	id             int
	minRun, maxRun [2]int64
	minBW, maxBW   [2]uint64
	ioBytes        [2]uint64
	agg            [2]uint64 // the group's bandwidth: all its bytes over its longest run
}

func groupStatsOf(id int, secs []*section) *groupStats {
	g := &groupStats{id: id}
	for d := range 2 {
		g.minRun[d], g.minBW[d] = math.MaxInt64, math.MaxUint64
	}
	for _, s := range secs {
		for d := range s.dirs {
			dir := &s.dirs[d]
			if dir.runtimeMs == 0 {
				continue
			}
			g.minRun[d] = min(g.minRun[d], dir.runtimeMs)
			g.maxRun[d] = max(g.maxRun[d], dir.runtimeMs)
			bw := dir.bwBytes()
			g.minBW[d] = min(g.minBW[d], bw)
			g.maxBW[d] = max(g.maxBW[d], bw)
			g.ioBytes[d] += uint64(dir.bytes)
		}
	}
	for d := range 2 {
		if g.maxRun[d] > 0 {
			g.agg[d] = g.ioBytes[d] * 1000 / uint64(g.maxRun[d])
		}
	}
	return g
}

// aggPercent is the share of the group's bandwidth a section's mean
// sampled bandwidth (KiB/s) is, as fio's normal and JSON output compute
// it, mean truncated to an integer included.
func (g *groupStats) aggPercent(d int, meanKiB float64) float64 {
	if g.agg[d] <= 1024 {
		return 100
	}
	return min(100, float64(int64(meanKiB))*100/(float64(g.agg[d])/1024))
}

// sections builds the sections of every group and each group's stats.
func (r *Report) sections() ([]*section, map[int]*groupStats, error) {
	var all []*section
	groups := map[int]*groupStats{}
	for gi := range r.Groups {
		g := &r.Groups[gi]
		var secs []*section
		for ji := range g.Jobs {
			for _, part := range g.Jobs[ji].parts(g.GroupReporting) {
				s, err := newSection(part, g.ID)
				if err != nil {
					return nil, nil, err
				}
				if g.GroupReporting && len(secs) > 0 {
					secs[0].add(s)
					continue
				}
				secs = append(secs, s)
			}
		}
		all = append(all, secs...)
		groups[g.ID] = groupStatsOf(g.ID, secs)
	}
	return all, groups, nil
}

// PlatBins is how many latency bins fio 3.33 keeps (its histogram log's
// columns, JSON+'s bins).
const PlatBins = platNr

// PlatIndex is fio's latency bin of v nanoseconds, from 0 to PlatBins-1.
func PlatIndex(v int64) int { return platIndex(v) }
