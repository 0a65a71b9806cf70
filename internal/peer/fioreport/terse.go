package fioreport

import (
	"io"

	"github.com/cephbench/cephbench/internal/io/diskstats"
)

// WriteTerse writes fio's terse report, version 3 (--minimal): a line of
// semicolon-separated fields per job, the disks at the end of each.
func (r *Report) WriteTerse(w io.Writer) error {
	secs, groups, err := r.sections()
	if err != nil {
		return err
	}
	p := &printer{w: w}
	for _, s := range secs {
		p.printf("3;%s;%s;%d;%d", r.Version, s.job.Name, s.group, s.err)
		for d := range s.dirs {
			writeDirectionTerse(p, s, d, groups[s.group])
		}
		usr, sys := s.cpu()
		p.printf(";%f%%;%f%%;%d;%d;%d", usr, sys, s.ctx, s.majf, s.minf)
		for _, v := range distribution(s.queue.Depth) {
			p.printf(";%3.1f%%", v)
		}
		// Terse version 3 has no nanosecond buckets: fio adds them to the
		// first microsecond one.
		lat := latencyBucketsOf(s.all)
		us := lat.us
		if total := s.all.TotalCount(); total > 0 {
			us[0] += 100 * float64(lat.nsOps) / float64(total)
		}
		for _, v := range us {
			p.printf(";%3.2f%%", v)
		}
		for _, v := range lat.ms {
			p.printf(";%3.2f%%", v)
		}
		for _, u := range r.Disks {
			writeDiskTerse(p, u)
		}
		if s.job.ContinueOnError {
			p.printf(";%d;%d", s.continued, s.firstErr)
		}
		if s.job.Description != "" {
			p.printf(";%s", s.job.Description)
		}
		p.printf("\n")
	}
	return p.err
}

func writeDirectionTerse(p *printer, s *section, d int, g *groupStats) {
	dir := &s.dirs[d]
	var bw, iops uint64
	if dir.runtimeMs > 0 {
		bw = dir.bwBytes() / 1024
		iops = uint64(dir.ios) * 1000 / uint64(dir.runtimeMs)
	}
	p.printf(";%d;%d;%d;%d", dir.bytes>>10, bw, iops, dir.runtimeMs)
	p.printf(";0;0;%f;%f", 0.0, 0.0) // slat: not measured
	l := latencyOf(dir.hist)
	p.printf(";%d;%d;%f;%f", l.min/1000, l.max/1000, l.mean/1000, l.dev/1000)
	ps, _ := s.job.percentiles()
	var vals []int64
	if l.n > 0 {
		vals = percentileValues(dir.hist, ps)
	}
	for i := range maxPercentiles {
		if i < len(vals) {
			p.printf(";%f%%=%d", ps[i], vals[i]/1000)
		} else {
			p.printf(";0%%=0")
		}
	}
	p.printf(";%d;%d;%f;%f", l.min/1000, l.max/1000, l.mean/1000, l.dev/1000)
	if b := dir.bw; b.n > 0 {
		// Unlike the other formats, terse divides by the group's bandwidth
		// in whole KiB/s.
		per := 100.0
		if kib := g.agg[d] / 1024; kib > 0 {
			per = min(100, b.mean*100/float64(kib))
		}
		p.printf(";%d;%d;%f%%;%f;%f", uint64(b.min), uint64(b.max), per, b.mean, b.stddev())
	} else {
		p.printf(";0;0;%f%%;%f;%f", 0.0, 0.0, 0.0)
	}
}

func writeDiskTerse(p *printer, u diskstats.Usage) {
	p.printf(";%s;%d;%d;%d;%d;%d;%d;%d;%3.2f%%",
		u.Name, u.ReadIOs, u.WriteIOs, u.ReadMerges, u.WriteMerges, u.ReadTicks, u.WriteTicks, u.InQueue, u.Util)
	if a := u.Slaves; a != nil {
		p.printf(";slaves;%d;%d;%d;%d;%d;%d;%d;%3.2f%%",
			a.ReadIOs, a.WriteIOs, a.ReadMerges, a.WriteMerges, a.ReadTicks, a.WriteTicks, a.InQueue, a.Util)
	}
}
