package fioreport

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/internal/io/diskstats"
)

// object is a JSON object that keeps its keys in order, as fio's do.
// Values are string, int64, uint64, float64 (printed as fio prints
// floats, with six decimals, so that consumers see the same types),
// *object and []*object.
type object struct {
	keys []string
	vals []any
}

func (o *object) add(key string, v any) *object {
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, v)
	return o
}

// write prints o the way fio lays out its JSON, at nesting level.
func (o *object) write(p *printer, level int) {
	p.printf("{\n")
	for i, k := range o.keys {
		if i > 0 {
			p.printf(",\n")
		}
		p.printf("%s%s : ", indent(level+1), quote(k))
		writeValue(p, o.vals[i], level+1)
	}
	p.printf("\n%s}", indent(level))
}

func writeValue(p *printer, v any, level int) {
	switch v := v.(type) {
	case string:
		p.printf("%s", quote(v))
	case int64, uint64, int:
		p.printf("%d", v)
	case float64:
		p.printf("%s", strconv.FormatFloat(v, 'f', 6, 64))
	case *object:
		v.write(p, level)
	case []any:
		p.printf("[\n")
		for i, e := range v {
			if i > 0 {
				p.printf(",\n")
			}
			p.printf("%s", indent(level+1))
			writeValue(p, e, level+1)
		}
		p.printf("\n%s]", indent(level))
	case []*object:
		p.printf("[\n")
		for i, o := range v {
			if i > 0 {
				p.printf(",\n")
			}
			p.printf("%s", indent(level+1))
			o.write(p, level+1)
		}
		p.printf("\n%s]", indent(level))
	default:
		panic(fmt.Sprintf("fioreport: no JSON for %T", v))
	}
}

func indent(level int) string { return strings.Repeat("  ", level) }

// quote is a JSON string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// WriteJSON writes fio's --output-format=json report.
func (r *Report) WriteJSON(w io.Writer) error { return r.writeJSON(w, false) }

// WriteJSONPlus writes fio's --output-format=json+ report: JSON with each
// latency that has percentiles also binned, in fio's own buckets. Each of
// cephbench's histogram buckets lies inside one of fio's, so the counts are
// exactly those fio would have counted.
func (r *Report) WriteJSONPlus(w io.Writer) error { return r.writeJSON(w, true) }

func (r *Report) writeJSON(w io.Writer, plus bool) error {
	secs, groups, err := r.sections()
	if err != nil {
		return err
	}
	root := (&object{}).
		add("fio version", r.Version).
		add("timestamp", r.Time.Unix()).
		add("timestamp_ms", r.Time.UnixMilli()).
		add("time", r.Time.Format(ctime))
	if len(r.GlobalOptions) > 0 {
		root.add("global options", options(r.GlobalOptions))
	}
	elapsed := r.elapsed()
	jobs := []*object{}
	for _, s := range secs {
		jobs = append(jobs, jobJSON(s, groups[s.group], elapsed, plus))
	}
	root.add("jobs", jobs)
	if len(r.Disks) > 0 {
		var disks []*object
		for _, u := range r.Disks {
			disks = append(disks, diskJSON(u))
		}
		root.add("disk_util", disks)
	}
	p := &printer{w: w}
	root.write(p, 0)
	p.printf("\n")
	return p.err
}

// elapsed is fio's "elapsed": whole seconds, rounded up, from the first
// job's start to the last one's end.
func (r *Report) elapsed() int64 {
	var first, last time.Time
	for _, g := range r.Groups {
		for _, j := range g.Jobs {
			if j.Result == nil {
				continue
			}
			if first.IsZero() || j.Result.Start.Before(first) {
				first = j.Result.Start
			}
			if j.Result.End.After(last) {
				last = j.Result.End
			}
		}
	}
	if first.IsZero() {
		return 0
	}
	return int64(math.Ceil(last.Sub(first).Seconds()))
}

func options(opts []Option) *object {
	o := &object{}
	for _, opt := range opts {
		o.add(opt.Name, opt.Value)
	}
	return o
}

func jobJSON(s *section, g *groupStats, elapsed int64, plus bool) *object {
	j := s.job
	o := (&object{}).
		add("jobname", j.Name).
		add("groupid", int64(s.group)).
		add("error", int64(s.err)).
		add("eta", int64(0)).
		add("elapsed", elapsed)
	opts := (&object{}).add("name", j.Name)
	for _, opt := range j.Options {
		if opt.Name != "name" {
			opts.add(opt.Name, opt.Value)
		}
	}
	o.add("job options", opts)
	ps, _ := j.percentiles()
	for d := range s.dirs {
		o.add(dirNames[d], directionJSON(s, d, g, ps, plus))
	}
	o.add("trim", directionJSON(s, -1, g, ps, plus))
	o.add("sync", (&object{}).add("total_ios", s.syncs()).add("lat_ns", latencyJSON(s.sync, ps, false)))

	usr, sys := s.cpu()
	o.add("job_runtime", int64(s.runMs)).
		add("usr_cpu", usr).
		add("sys_cpu", sys).
		add("ctx", s.ctx).
		add("majf", s.majf).
		add("minf", s.minf)
	depth, submit, complete := distribution(s.queue.Depth), distribution(s.queue.Submit), distribution(s.queue.Complete)
	o.add("iodepth_level", shares(depth[:], []string{"1", "2", "4", "8", "16", "32", ">=64"}))
	batch := []string{"0", "4", "8", "16", "32", "64", ">=64"}
	o.add("iodepth_submit", shares(submit[:], batch))
	o.add("iodepth_complete", shares(complete[:], batch))
	lat := latencyBucketsOf(s.all)
	o.add("latency_ns", shares(lat.ns[:], latencyLabels[:10]))
	o.add("latency_us", shares(lat.us[:], latencyLabels[:10]))
	o.add("latency_ms", shares(lat.ms[:], latencyLabels[:]))
	errorsJSON(o, s)
	if j.IODepth > 0 {
		o.add("latency_depth", int64(j.IODepth)).
			add("latency_target", int64(0)).
			add("latency_percentile", 100.0).
			add("latency_window", int64(0))
	}
	if j.Description != "" {
		o.add("desc", j.Description)
	}
	if s.steady != nil {
		o.add("steadystate", steadyJSON(s.steady))
	}
	return o
}

func shares(vals []float64, labels []string) *object {
	o := &object{}
	for i, l := range labels {
		o.add(l, vals[i])
	}
	return o
}

// directionJSON is a direction's object; d < 0 is one cephbench never
// does (trim), all zeros.
func directionJSON(s *section, d int, g *groupStats, ps []float64, plus bool) *object {
	var dir direction
	if d >= 0 {
		dir = s.dirs[d]
	}
	var latPs []float64 // fio's lat_ns has percentiles only with lat_percentiles
	if s.job.LatPercentiles {
		latPs = ps
	}
	bw := dir.bwBytes()
	o := (&object{}).
		add("io_bytes", dir.bytes).
		add("io_kbytes", dir.bytes>>10).
		add("bw_bytes", bw).
		add("bw", bw/1024).
		add("iops", dir.iopsRate()).
		add("runtime", dir.runtimeMs).
		add("total_ios", dir.ios).
		add("short_ios", int64(0)).
		add("drop_ios", int64(0)).
		add("slat_ns", latencyJSON(nil, nil, false)).
		add("clat_ns", latencyJSON(dir.hist, ps, plus)).
		add("lat_ns", latencyJSON(dir.hist, latPs, plus))
	per := 0.0
	if dir.bw.n > 0 {
		per = g.aggPercent(d, dir.bw.mean)
	}
	o.add("bw_min", uint64(dir.bw.min)).
		add("bw_max", uint64(dir.bw.max)).
		add("bw_agg", per).
		add("bw_mean", dir.bw.mean).
		add("bw_dev", dir.bw.stddev()).
		add("bw_samples", int64(dir.bw.n)).
		add("iops_min", uint64(dir.iops.min)).
		add("iops_max", uint64(dir.iops.max)).
		add("iops_mean", dir.iops.mean).
		add("iops_stddev", dir.iops.stddev()).
		add("iops_samples", int64(dir.iops.n))
	return o
}

// latencyJSON is a latency's object: its summary, and when ps is given and
// there are samples, its percentiles (and bins, for JSON+).
func latencyJSON(h *hdr.Histogram, ps []float64, plus bool) *object {
	l := latencyOf(h)
	o := (&object{}).
		add("min", l.min).
		add("max", l.max).
		add("mean", l.mean).
		add("stddev", l.dev).
		add("N", l.n)
	if len(ps) == 0 || l.n == 0 {
		return o
	}
	pct := &object{}
	for i, v := range percentileValues(h, ps) {
		pct.add(strconv.FormatFloat(ps[i], 'f', 6, 64), v)
	}
	o.add("percentile", pct)
	if plus {
		bins := &object{}
		idx, counts := fioBins(h)
		for i, x := range idx {
			bins.add(strconv.FormatInt(platValue(x), 10), counts[i])
		}
		o.add("bins", bins)
	}
	return o
}

func diskJSON(u diskstats.Usage) *object {
	o := (&object{}).
		add("name", u.Name).
		add("read_ios", u.ReadIOs).
		add("write_ios", u.WriteIOs).
		add("read_merges", u.ReadMerges).
		add("write_merges", u.WriteMerges).
		add("read_ticks", u.ReadTicks).
		add("write_ticks", u.WriteTicks).
		add("in_queue", u.InQueue).
		add("util", u.Util)
	if a := u.Slaves; a != nil {
		o.add("aggr_read_ios", a.ReadIOs).
			add("aggr_write_ios", a.WriteIOs).
			add("aggr_read_merges", a.ReadMerges).
			add("aggr_write_merge", a.WriteMerges). // sic: fio's name
			add("aggr_read_ticks", a.ReadTicks).
			add("aggr_write_ticks", a.WriteTicks).
			add("aggr_in_queue", a.InQueue).
			add("aggr_util", a.Util)
	}
	return o
}
