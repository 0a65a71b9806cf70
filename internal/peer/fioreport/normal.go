package fioreport

import (
	"io"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/internal/io/diskstats"
	"github.com/cephbench/cephbench/spec"
)

// WriteHeader writes what fio prints before it starts its jobs: a line per
// job, "..." after a job with clones, the version line and how many
// clones start. It needs no results. cephbench runs clones as threads of
// one process, so it counts threads where fio counts processes.
func (r *Report) WriteHeader(w io.Writer) error {
	p := &printer{w: w}
	total := 0
	for _, g := range r.Groups {
		for _, j := range g.Jobs {
			bs := j.sizeBounds()
			p.printf("%s: (g=%d): rw=%s, bs=(R) %s-%s, (W) %s-%s, (T) %s-%s, ioengine=%s, iodepth=%d\n",
				j.Name, g.ID, j.RW, bs[0], bs[1], bs[2], bs[3], bs[2], bs[3], j.IOEngine, j.IODepth)
			if j.NumJobs > 1 {
				p.printf("...\n")
			}
			total += max(j.NumJobs, 1)
		}
	}
	p.printf("%s\n", r.Version)
	plural := "s"
	if total == 1 {
		plural = ""
	}
	p.printf("Starting %d thread%s\n", total, plural)
	return p.err
}

// sizeBounds is the smallest and largest read size, then write size, as
// fio's header prints them; trims take the writes'.
func (j *Job) sizeBounds() [4]string {
	r := spec.SizeDist{Min: spec.Size(j.BlockSize), Max: spec.Size(j.BlockSize)}
	w := r
	if j.BlockSizes != "" {
		r, w, _ = j.BlockSizes.Directions()
	}
	var s [4]string
	for i, n := range []spec.Size{r.Min, r.Max, w.Min, w.Max} {
		s[i] = num2str(uint64(n), 4, true, unitByte)
	}
	return s
}

// WriteNormal writes fio's normal report: a section per job (per group
// with group reporting), a paragraph per group, then the disks.
func (r *Report) WriteNormal(w io.Writer) error {
	secs, groups, err := r.sections()
	if err != nil {
		return err
	}
	p := &printer{w: w}
	p.printf("\n")
	for _, s := range secs {
		if s.did() { // fio prints nothing for a job that did no io
			r.writeSection(p, s, groups[s.group])
		}
	}
	for _, g := range r.Groups {
		writeGroup(p, groups[g.ID])
	}
	if len(r.Disks) > 0 {
		p.printf("\nDisk stats (read/write):\n")
		for _, u := range r.Disks {
			writeDisk(p, u)
		}
	}
	return p.err
}

func errText(s *section) string {
	if s.errText != "" {
		return s.errText
	}
	return unix.Errno(s.err).Error()
}

func (r *Report) writeSection(p *printer, s *section, g *groupStats) {
	date := r.Time.Format(ctime)
	if s.err == 0 {
		p.printf("%s: (groupid=%d, jobs=%d): err=%2d: pid=%d: %s\n", s.job.Name, s.group, s.members, s.err, r.PID, date)
	} else {
		p.printf("%s: (groupid=%d, jobs=%d): err=%2d (%s): pid=%d: %s\n", s.job.Name, s.group, s.members, s.err, errText(s), r.PID, date)
	}
	if s.job.Description != "" {
		p.printf("  Description  : [%s]\n", s.job.Description)
	}
	for d := range s.dirs {
		if s.dirs[d].bytes > 0 {
			writeDirection(p, s, d, g)
		}
	}

	lat := latencyBucketsOf(s.all)
	writeLatencyBuckets(p, lat.ns[:], "nsec")
	writeLatencyBuckets(p, lat.us[:], "usec")
	writeLatencyBuckets(p, lat.ms[:], "msec")
	if l := latencyOf(s.sync); l.n > 0 {
		p.printf("  fsync/fdatasync/sync_file_range:\n")
		p.writeLatency("sync", l)
		ps, precision := s.job.percentiles()
		p.writePercentiles("sync", ps, precision, percentileValues(s.sync, ps))
	}

	usr, sys := s.cpu()
	p.printf("  cpu          : usr=%3.2f%%, sys=%3.2f%%, ctx=%d, majf=%d, minf=%d\n", usr, sys, s.ctx, s.majf, s.minf)
	q := distribution(s.queue.Depth)
	p.printf("  IO depths    : 1=%3.1f%%, 2=%3.1f%%, 4=%3.1f%%, 8=%3.1f%%, 16=%3.1f%%, 32=%3.1f%%, >=64=%3.1f%%\n",
		q[0], q[1], q[2], q[3], q[4], q[5], q[6])
	q = distribution(s.queue.Submit)
	p.printf("     submit    : 0=%3.1f%%, 4=%3.1f%%, 8=%3.1f%%, 16=%3.1f%%, 32=%3.1f%%, 64=%3.1f%%, >=64=%3.1f%%\n",
		q[0], q[1], q[2], q[3], q[4], q[5], q[6])
	q = distribution(s.queue.Complete)
	p.printf("     complete  : 0=%3.1f%%, 4=%3.1f%%, 8=%3.1f%%, 16=%3.1f%%, 32=%3.1f%%, 64=%3.1f%%, >=64=%3.1f%%\n",
		q[0], q[1], q[2], q[3], q[4], q[5], q[6])
	p.printf("     issued rwts: total=%d,%d,0,%d short=0,0,0,0 dropped=0,0,0,0\n", s.dirs[0].ios, s.dirs[1].ios, s.syncs())
	if s.job.IODepth > 0 {
		// cephbench has no latency target: these are fio's figures
		// without one.
		p.printf("     latency   : target=0, window=0, percentile=100.00%%, depth=%d\n", s.job.IODepth)
	}
}

var dirNames = [2]string{"read", "write"}

// syncs is how many syncs the section's jobs made.
func (s *section) syncs() int64 {
	if s.sync == nil {
		return 0
	}
	return s.sync.TotalCount()
}

func writeDirection(p *printer, s *section, d int, g *groupStats) {
	dir := &s.dirs[d]
	bw := dir.bwBytes()
	iops := uint64(dir.ios) * 1000 / uint64(dir.runtimeMs)
	zone := ""
	if d == 1 {
		zone = "; 0 zone resets" // cephbench does no zoned I/O
	}
	p.printf("  %s: IOPS=%s, BW=%s (%s)(%s/%dmsec)%s\n", dirNames[d],
		num2str(iops, 4, false, unitNone), num2str(bw, 4, true, unitBytePerSec), num2str(bw, 4, false, unitBytePerSec),
		num2str(uint64(dir.bytes), 4, true, unitByte), dir.runtimeMs, zone)

	if l := latencyOf(dir.hist); l.n > 0 {
		p.writeLatency("clat", l)
		p.writeLatency(" lat", l)
		ps, precision := s.job.percentiles()
		vals := percentileValues(dir.hist, ps)
		p.writePercentiles("clat", ps, precision, vals)
		if s.job.LatPercentiles {
			p.writePercentiles("lat", ps, precision, vals)
		}
	}

	if bw := dir.bw; bw.n > 0 {
		per := g.aggPercent(d, bw.mean)
		unit, lo, hi, mean, dev := "KiB", uint64(bw.min), uint64(bw.max), bw.mean, bw.stddev()
		if mean > 1024*1024 {
			unit, lo, hi, mean, dev = "MiB", lo/1024, hi/1024, mean/1024, dev/1024
		}
		p.printf("   bw (%5s/s): min=%5d, max=%5d, per=%3.2f%%, avg=%5.02f, stdev=%5.02f, samples=%d\n",
			unit, lo, hi, per, mean, dev, bw.n)
	}
	if iops := dir.iops; iops.n > 0 {
		p.printf("   iops        : min=%5d, max=%5d, avg=%5.02f, stdev=%5.02f, samples=%d\n",
			uint64(iops.min), uint64(iops.max), iops.mean, iops.stddev(), iops.n)
	}
}

var latencyLabels = [12]string{"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"}

// writeLatencyBuckets is fio's "lat (unit)" lines: the non-empty buckets,
// five to a line.
func writeLatencyBuckets(p *printer, shares []float64, unit string) {
	n := 0
	for i, v := range shares {
		if v <= 0 {
			continue
		}
		switch {
		case n%5 == 0 && n > 0:
			p.printf("\n  lat (%s)   : ", unit)
		case n == 0:
			p.printf("  lat (%s)   : ", unit)
		default:
			p.printf(", ")
		}
		p.printf("%s=%3.2f%%", latencyLabels[i], v)
		n++
	}
	if n > 0 {
		p.printf("\n")
	}
}

func writeGroup(p *printer, g *groupStats) {
	p.printf("\nRun status group %d (all jobs):\n", g.id)
	for d, name := range [2]string{"   READ", "  WRITE"} {
		if g.maxRun[d] == 0 {
			continue
		}
		p.printf("%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%d-%dmsec\n", name,
			num2str(g.agg[d], 4, true, unitBytePerSec), num2str(g.agg[d], 4, false, unitBytePerSec),
			num2str(g.minBW[d], 4, true, unitBytePerSec), num2str(g.maxBW[d], 4, true, unitBytePerSec),
			num2str(g.minBW[d], 4, false, unitBytePerSec), num2str(g.maxBW[d], 4, false, unitBytePerSec),
			num2str(g.ioBytes[d], 4, true, unitByte), num2str(g.ioBytes[d], 4, false, unitByte),
			g.minRun[d], g.maxRun[d])
	}
}

func writeDisk(p *printer, u diskstats.Usage) {
	if u.Slaves != nil {
		p.printf("  ")
	}
	p.printf("  %s: ios=%d/%d, merge=%d/%d, ticks=%d/%d, in_queue=%d, util=%3.2f%%",
		u.Name, u.ReadIOs, u.WriteIOs, u.ReadMerges, u.WriteMerges, u.ReadTicks, u.WriteTicks, u.InQueue, u.Util)
	if a := u.Slaves; a != nil {
		p.printf(", aggrios=%d/%d, aggrmerge=%d/%d, aggrticks=%d/%d, aggrin_queue=%d, aggrutil=%3.2f%%",
			a.ReadIOs, a.WriteIOs, a.ReadMerges, a.WriteMerges, a.ReadTicks, a.WriteTicks, a.InQueue, a.Util)
	}
	p.printf("\n")
}
