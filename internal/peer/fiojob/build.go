package fiojob

import (
	"cmp"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cephbench/cephbench/internal/peer/fiolog"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/workload"
)

// build maps a parsed job onto a Workload, or says which of its options
// cephbench cannot run as fio would.
func (p *parser) build(pj *pending) (Job, error) {
	o := &pj.o
	fail := func(format string, args ...any) error {
		return fmt.Errorf("job %q (%s): %s", o.name, pj.where, fmt.Sprintf(format, args...))
	}
	// at names an option as the job set it, for errors: "bs=4k,8k (a.fio:3)".
	at := func(name string) string {
		s, ok := o.given[name]
		switch {
		case !ok:
			return name + " (fio's default)"
		case s.value == "" && s.where == pj.where:
			return name
		case s.value == "":
			return fmt.Sprintf("%s (%s)", name, s.where)
		case s.where == pj.where:
			return name + "=" + s.value
		}
		return fmt.Sprintf("%s=%s (%s)", name, s.value, s.where)
	}

	p.noteIgnored(o)

	mode := rwModes[o.rw]
	w := spec.Workload{Name: o.name, Pattern: spec.Sequential, ReadPercent: mode.reads,
		Direct: o.direct, Keep: p.plan.Keep, Force: p.plan.Force,
		FsyncEvery: int(o.fsync), EndFsync: o.endFsync}
	if mode.random {
		w.Pattern = spec.Random
	}
	if mode.reads < 0 {
		w.ReadPercent = int(o.rwmixread)
	}
	reads := w.Reads()

	if err := blockSizes(o, &w); err != nil {
		return Job{}, fail("%s", err)
	}
	bs := int64(w.BlockSize)
	if o.direct && bs%512 != 0 && o.kbBase == 1024 && strings.Contains(strings.ToLower(o.given["bs"].value), "ib") {
		return Job{}, fail("%s: that is %d bytes with kb_base=1024 (fio then counts KiB, MiB... in powers of 1000), not a multiple of 512 as direct I/O needs; write 4k, or set kb_base=1000",
			at("bs"), bs)
	}

	for _, name := range []string{"pool", "rbdname", "clientname", "clustername", "conf"} {
		_, set := o.given[name]
		ok := o.ioengine == "rados" || o.ioengine == "rbd" && name != "conf"
		if set && !ok {
			return Job{}, fail("%s is an option of ioengine=rados or rbd, not of ioengine=%s", at(name), o.ioengine)
		}
	}

	region, amount, err := clonesBytes(o, at)
	if err != nil {
		return Job{}, fail("%s", err)
	}

	qd := o.iodepth
	perJobFiles := false
	switch e := o.ioengine; {
	case slices.Contains(syncEngines, e), e == "libaio", e == "io_uring":
		w.IOEngine = e
		if slices.Contains(syncEngines, e) {
			// Each call blocks until its I/O is done, so fio never has
			// more than one in flight whatever iodepth says.
			w.IOEngine, qd = "psync", 1
		}
		path := o.filename
		switch {
		case path != "" && o.directory != "":
			path = filepath.Join(o.directory, path)
		case path == "":
			path, perJobFiles = o.directory, true
			if path == "" {
				path = "."
			}
			if region == 0 && o.sizePct > 0 {
				return Job{}, fail("%s: a percentage of files that the job lays out needs filesize= (or filename= of an existing file)", at("size"))
			}
			if region == 0 {
				return Job{}, fail("no size: fio lays out a file per job clone in directory %q and needs size= (or filesize=)", path)
			}
		}
		w.Target = spec.Target{Scheme: "file", Location: path}
		w.FileSize = spec.Size(region)
		if o.nrfiles > 1 && !perJobFiles {
			return Job{}, fail("%s with filename= is not supported: cephbench lays out a clone's several files in directory= only", at("nrfiles"))
		}
		if o.nrfiles > 1 {
			w.FilesPerWorker, w.FileService = int(o.nrfiles), o.fileService
		}
		if o.filesizeLow > 0 {
			w.MinFileSize = spec.Size(o.filesizeLow)
		}
		if perJobFiles {
			if strings.ContainsRune(o.name, '/') || o.name == "." || o.name == ".." {
				return Job{}, fail("job name %q cannot name its files in directory %q (fio names them JOBNAME.N.0)", o.name, path)
			}
			w.FilePrefix, w.FileNameFormat = o.name, o.fileNameFormat()
		}
	case e == "null":
		w.Target = spec.Target{Scheme: "null"}
		w.FileSize = spec.Size(region)
	case e == "rbd":
		if o.pool == "" || o.rbdname == "" {
			return Job{}, fail("ioengine=rbd needs pool= and rbdname= (the image's pool and name)")
		}
		if strings.ContainsAny(o.pool+o.rbdname, "/?") {
			return Job{}, fail("pool=%s rbdname=%s: names with '/' or '?' are not supported", o.pool, o.rbdname)
		}
		w.Target = spec.Target{Scheme: "rbd", Location: o.pool + "/" + o.rbdname + "?" + cephQuery(o)}
		w.FileSize = spec.Size(region)
	case e == "rados":
		if o.pool == "" {
			return Job{}, fail("ioengine=rados needs pool=")
		}
		if strings.ContainsAny(o.pool, "/?") {
			return Job{}, fail("pool=%s: names with '/' or '?' are not supported", o.pool)
		}
		if region == 0 {
			return Job{}, fail("ioengine=rados needs size=: each job clone reads and writes one object of that size")
		}
		if o.fsync > 0 || o.endFsync {
			return Job{}, fail("fsync and end_fsync are not supported with ioengine=rados: a RADOS write is durable when it completes")
		}
		// fio's rados engine gives each clone one object of size bytes,
		// named JOBNAME.N.0, and writes it at block offsets; cephbench's
		// rados engine names its objects itself. Cycle keeps sequential
		// writes going over the same objects for loops and time_based.
		w.Target = spec.Target{Scheme: "rados", Location: o.pool + "?" + cephQuery(o)}
		w.ObjectSize = spec.Size(region)
		w.Objects = o.numjobs
		w.Cycle = true
	}
	w.QueueDepth = int(qd)
	w.Workers = int(o.numjobs)
	if o.nrfiles > 1 && w.Target.Scheme != "file" {
		return Job{}, fail("%s is supported with file I/O engines only", at("nrfiles"))
	}
	if err := where(&w, o, mode.random, at); err != nil {
		return Job{}, fail("%s", err)
	}

	// Bounds. Workload bounds are totals over its workers, fio's are per
	// clone: the byte and op bounds are multiplied by numjobs.
	wholeTarget := false
	if o.timeBased {
		if o.runtime == 0 {
			return Job{}, fail("%s needs runtime=", at("time_based"))
		}
		w.Duration = spec.Duration(o.runtime)
	} else {
		w.Duration = spec.Duration(o.runtime)
		n := o.loops * o.numjobs
		switch {
		case o.filesizeLow > 0 && o.size == 0 && o.ioSize == 0:
			// Each file is its own size: fio does one pass over them all.
			for file := range w.Workers * w.FilesPerWorker {
				w.TotalBytes += spec.Size(workload.FileSize(&w, file))
			}
			w.TotalBytes *= spec.Size(o.loops)
		case amount > 0:
			if amount > (1<<62)/n {
				return Job{}, fail("%d bytes %d times is out of range", amount, n)
			}
			w.TotalBytes = spec.Size(amount * n)
		case o.ioengine == "null":
			if w.Duration == 0 && o.numberIOs == 0 {
				return Job{}, fail("ioengine=null needs size=, io_size=, number_ios= or runtime= to end")
			}
		default:
			wholeTarget = true
		}
		if o.numberIOs > 0 {
			if o.numberIOs > (1<<62)/n {
				return Job{}, fail("%s: out of range", at("number_ios"))
			}
			w.TotalOps = o.numberIOs * n
		}
	}
	// Each clone does its own size and number_ios, as fio's do.
	w.BoundsPerWorker = o.numjobs > 1 && (w.TotalBytes > 0 || w.TotalOps > 0 || wholeTarget)
	w.Ramp = spec.Duration(o.ramp)
	w.StopOnError = continueOnError[o.continueOnError]
	if o.steadyState.Window > 0 {
		ss := o.steadyState
		w.SteadyState = &ss
	}
	if o.thinkTime > 0 {
		if o.thinkSpin > o.thinkTime {
			return Job{}, fail("%s is longer than %s", at("thinktime_spin"), at("thinktime"))
		}
		w.ThinkTime, w.ThinkSpin, w.ThinkEvery = spec.Duration(o.thinkTime), spec.Duration(o.thinkSpin), o.thinkBlocks
	}

	w.BufferMemory, w.BufferAlign, w.HugepageSize = o.mem, spec.Size(o.memAlign), spec.Size(o.hugepageSize)
	if o.memFile != "" {
		// Anonymous huge pages come from the same reserve as a hugetlbfs
		// file's: the buffers are the same memory.
		note := fmt.Sprintf("%s: the buffers are anonymous huge pages from the system's reserve, not the file %s", at("iomem"), o.memFile)
		if !slices.Contains(p.plan.Notes, note) {
			p.plan.Notes = append(p.plan.Notes, note)
		}
	}

	if w.BlockSizes != "" && max(o.rate[0], o.rate[1]) > 0 {
		return Job{}, fail("%s with block sizes that vary is not supported: fio caps bytes per direction, cephbench would pace ops of the largest size", at("rate"))
	}
	if err := setRates(&w, o, at); err != nil {
		return Job{}, fail("%s", err)
	}

	switch {
	case o.verifyOnly && (o.verify == "" || reads):
		return Job{}, fail("%s checks what a write-only job with verify= wrote before", at("verify_only"))
	case o.verifyOnly:
		// The job's writes, replayed as reads: the same offsets in the
		// same order, as randrepeat draws them again.
		w.ReadPercent, w.Verify = 100, true
	case o.verify != "" && reads && o.verifyBacklog > 0:
		return Job{}, fail("%s reads back a job's writes as it goes, which cephbench does for write-only jobs only", at("verify_backlog"))
	case o.verify != "" && reads:
		w.Verify = true
	case o.verify != "":
		w.VerifyWrites = o.doVerify
		if o.doVerify && o.verifyBacklog > 0 {
			// fio takes a batch with no backlog and ignores it.
			w.VerifyBacklog, w.VerifyBacklogBatch = o.verifyBacklog, o.verifyBacklogBatch
		}
	}

	// fio's own fix-ups: a batch of 0 or more than iodepth is iodepth, and
	// the most to reap at once is at least the least.
	batchSubmit := o.batchSubmit
	if batchSubmit == 0 || batchSubmit > o.iodepth {
		batchSubmit = o.iodepth
	}
	if w.IOEngine == "libaio" || w.IOEngine == "io_uring" {
		w.SubmitBatch = int(batchSubmit)
	}
	check := w
	if wholeTarget && check.Duration == 0 && check.TotalOps == 0 {
		check.TotalBytes = check.BlockSize // SetTargetSize will set the bound
	}
	if err := check.Validate(); err != nil {
		return Job{}, fail("%v", err)
	}

	batchMax := max(o.batchMax, o.batchMin)
	// fio prints block sizes as min-max, with 4 significant figures, in
	// binary units unless kb_base=1000.
	dirs := bsHeader(o)
	header := dirs[1]
	if reads {
		header = dirs[0]
	}
	return Job{
		Name: o.name, Description: o.description, Where: pj.where,
		Stonewall: o.stonewall, NumJobs: int(o.numjobs), GroupReporting: o.groupReporting,
		Workload: w, WholeTarget: wholeTarget,
		RW: o.rw, BS: header, BSDirs: dirs,
		IOEngine: o.ioengine, IODepth: int(o.iodepth), KBBase: int(o.kbBase), Options: pj.options,
		StartDelay: o.startdelay, Loops: int(o.loops),
		Unlink: o.unlink, VerifyAlg: o.verify,
		PercentileList: slices.Clone(o.percentiles), LatPercentiles: o.latPct, ClatPercentiles: o.clatPct,
		NoRandomMap: o.norandommap, RandRepeat: o.randrepeat, RandSeed: o.randseed, RandSeedSet: o.given["randseed"] != (setting{}),
		IODepthBatchSubmit: int(batchSubmit), IODepthBatchCompleteMin: int(o.batchMin), IODepthBatchCompleteMax: int(batchMax),
		Logs:        logsOf(o),
		perJobFiles: perJobFiles, newGroup: o.newGroup,
		ContinueOnError: o.continueOnError, ExitAll: o.exitAll, ExitAllOnError: o.exitAllOnError, ExitWhat: o.exitWhat,
	}, nil
}

// clonesBytes returns the bytes each file (or object) of a job clone
// spans, its region, and what one loop of a clone reads and writes, its
// amount, as fio's setup_files works them out: size is split between a
// clone's nrfiles files unless filesize gives theirs, offset is part of
// filesize, and the amount is capped at what the files hold. With a
// filesize range each file is its own size, and the caller bounds the job
// by their total when no size= is given.
func clonesBytes(o *opts, at func(string) string) (region, amount int64, err error) {
	nf, bs := o.nrfiles, min(o.bs[0], o.bs[1])
	switch {
	case o.filesizeLow > 0 && (o.offset > 0 || o.sizePct > 0 || o.offsetPct > 0):
		return 0, 0, fmt.Errorf("offset= or size=N%% with a range %s is not supported: give one file size", at("filesize"))
	case o.filesizeLow > 0 && o.size > nf*(o.filesizeLow-o.filesizeLow%bs):
		return 0, 0, fmt.Errorf("%s over %d files of a range %s is not supported: fio and cephbench draw the sizes apart, so the bytes done would differ unless size= is at most %d files of the smallest size, %d",
			at("size"), nf, at("filesize"), nf, nf*(o.filesizeLow-o.filesizeLow%bs))
	case o.filesizeLow > 0:
		region = o.filesize // the largest; each file's is its own
	case o.filesize > 0:
		region = o.filesize - min(o.offset, o.filesize) // the file is filesize bytes, offset included
		if o.sizePct > 0 {
			// fio takes the percentage of the file, cut to whole blocks.
			region = min(region, o.filesize*o.sizePct/100/bs*bs)
		}
	case nf > 1 && o.size%(nf*bs) != 0:
		return 0, 0, fmt.Errorf("%s is not %d files of whole %d-byte blocks (nrfiles=%d): fio would make the first files a block larger, which cephbench does not", at("size"), nf, bs, nf)
	default:
		region = o.size / nf
	}
	switch {
	case o.ioSize > 0:
		amount = o.ioSize
	case o.size > 0 && o.filesize > 0:
		amount = min(o.size, nf*region)
	default:
		amount = nf * region
	}
	return region, amount, nil
}

// where sets the part of each file a job clone addresses (offset,
// offset_increment, and their percentages) and how its random offsets
// spread (random_distribution, norandommap), as fio does: clone N starts
// at offset+N*offset_increment and spans size bytes, its file laid out to
// hold them; with filesize, the file is filesize bytes and the clone spans
// what follows its offset (the caller's region). fio keeps a random map,
// visiting every block once per pass, unless norandommap or a
// distribution other than random; cephbench keeps one only for ops of
// one size at whole-block offsets (see the README on sizes that vary).
func where(w *spec.Workload, o *opts, random bool, at func(string) string) error {
	w.Offset, w.OffsetIncrement = spec.Size(o.offset), spec.Size(o.offsetIncrement)
	w.OffsetPercent = int(o.offsetPct)
	if o.filesize == 0 {
		w.SizePercent = int(o.sizePct) // of the target's size, as found
	}
	if o.offsetPct > 0 && (o.size > 0 || o.filesize > 0 || o.sizePct > 0) {
		return fmt.Errorf("%s with size= or filesize= is not supported: fio takes the percentage of the size a file has before the job lays it out, 0 for a new one; use it on an existing file or device without size=", at("offset"))
	}
	w.Distribution = o.randomDistribution
	dist, _ := spec.ParseDistribution(o.randomDistribution) // checked when set
	oneSize := w.BlockSizes == "" && (w.BlockAlign == 0 || w.BlockAlign == w.BlockSize)
	w.RandomMap = random && !o.norandommap && dist.Kind == spec.DistRandom && oneSize
	if o.offset == 0 && o.offsetIncrement == 0 || o.offsetPct > 0 {
		return nil
	}
	switch {
	case o.ioengine == "rados":
		return fmt.Errorf("%s: ioengine=rados gives each clone an object of its own, from its start", at("offset"))
	case o.filesize > 0 && o.offsetIncrement > 0:
		return fmt.Errorf("%s with %s is not supported: give size= for each clone's region instead", at("offset_increment"), at("filesize"))
	case o.filesize > 0 && o.offset+int64(w.BlockSize) > o.filesize:
		return fmt.Errorf("%s leaves no %d-byte block of the %d-byte files (%s)", at("offset"), w.BlockSize, o.filesize, at("filesize"))
	}
	return nil
}

// logsOf is the job's log files, nil for none: each log given takes the
// job's name when given none, as fio names it.
func logsOf(o *opts) *fiolog.Options {
	logs := o.logs
	for i, dst := range []*string{&logs.BW, &logs.Lat, &logs.IOPS, &logs.Hist} {
		name := []string{"write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log"}[i]
		if _, ok := o.given[name]; !ok {
			continue
		}
		*dst = o.logNames[i]
		if *dst == "" {
			*dst = o.name
		}
	}
	if !logs.Any() {
		return nil
	}
	return &logs
}

// noteIgnored adds the no-op options o was given to those the run names
// in its one note.
func (p *parser) noteIgnored(o *opts) {
	for name := range o.given {
		if byName[name].noop {
			if p.ignored == nil {
				p.ignored = map[string]bool{}
			}
			p.ignored[name] = true
		}
	}
}

// cephQuery is the connection part of an rbd:// or rados:// target. As in
// fio, clientname is the client id without "client." (default admin), and
// a name with a dot is a full entity name.
func cephQuery(o *opts) string {
	q := url.Values{}
	switch {
	case strings.Contains(o.clientname, "."):
		q.Set("name", o.clientname)
	case o.clientname != "":
		q.Set("id", o.clientname)
	default:
		q.Set("id", "admin")
	}
	if o.cluster != "" {
		q.Set("cluster", o.cluster)
	}
	if o.conf != "" {
		q.Set("conf", o.conf)
	}
	return q.Encode()
}

// setRates paces w's reads and writes each on its own schedule and sets
// their floors, as fio's rate, rate_iops, rate_min and rate_iops_min do
// per clone (w's rates are totals over its workers). A direction the job
// does not issue is left alone, but refused as fio refuses it: a rate in
// bytes and one in ops, or a floor above the rate.
func setRates(w *spec.Workload, o *opts, at func(string) string) error {
	clones := float64(o.numjobs)
	for d, dir := range []*spec.DirRate{&w.ReadRate, &w.WriteRate} {
		switch {
		case o.rate[d] > 0 && o.rateIOPS[d] > 0:
			return fmt.Errorf("%s and %s: fio takes one of them per direction", at("rate"), at("rate_iops"))
		case o.rate[d] > 0 && o.rateMin[d] > o.rate[d]:
			return fmt.Errorf("%s is above %s: a minimum rate cannot exceed the rate", at("rate_min"), at("rate"))
		case o.rateIOPS[d] > 0 && o.rateIOPSMin[d] > o.rateIOPS[d]:
			return fmt.Errorf("%s is above %s: a minimum rate cannot exceed the rate", at("rate_iops_min"), at("rate_iops"))
		case d == 0 && !w.Reads() || d == 1 && !w.Writes():
			continue
		}
		dir.Bytes = float64(o.rate[d]) * clones
		dir.IOPS = float64(o.rateIOPS[d]) * clones
		// fio checks the floor in bytes when it has one, else in ops.
		if o.rateMin[d] > 0 {
			dir.MinBytes = float64(o.rateMin[d]) * clones
		} else {
			dir.MinIOPS = float64(o.rateIOPSMin[d]) * clones
		}
	}
	if w.ReadRate.HasMin() || w.WriteRate.HasMin() {
		w.RateCycle = spec.Duration(o.rateCycle * int64(time.Millisecond))
	}
	w.RateProcess = o.rateProcess
	return nil
}

// checkSharedDirs refuses two jobs of the same name that run at the same
// time in one directory without filename=: their files (JOBNAME.N.0)
// would be the same, and two sessions would lay out and remove them under
// each other.
func checkSharedDirs(jobs []Job) error {
	seen := map[string]*Job{}
	for i := range jobs {
		j := &jobs[i]
		if j.Stonewall {
			clear(seen)
		}
		if !j.perJobFiles {
			continue
		}
		format := cmp.Or(j.Workload.FileNameFormat, defaultFilenameFormat)
		files := filepath.Join(filepath.Clean(j.Workload.Target.Location), strings.ReplaceAll(format, "$jobname", j.Workload.FilePrefix))
		if other, ok := seen[files]; ok {
			return fmt.Errorf("jobs %q (%s) and %q (%s) run at the same time on the same files (%s); give them different names, directory= or filename=, or put stonewall between them",
				other.Name, other.Where, j.Name, j.Where, files)
		}
		seen[files] = j
	}
	return nil
}
