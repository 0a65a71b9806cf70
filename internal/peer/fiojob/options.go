package fiojob

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cephbench/cephbench/internal/peer/fiolog"
	"github.com/cephbench/cephbench/spec"
)

// opts is one job's options as parsed so far. A job starts as a copy of
// the defaults in force where it is defined (fio's own, the command line's
// options before the first --name, then the [global] sections before it),
// and its own options overwrite them in turn.
type opts struct {
	given map[string]setting // canonical option name -> its last setting

	name, description string
	rw                string // read, write, randread, randwrite, rw or randrw
	bs                [3]int64
	kbBase            int64
	// bsDist is reads' and writes' op sizes from bssplit or bsrange, in
	// spec.BlockSizes' syntax (bytes); empty: bs's.
	bsDist      [2]string
	bsUnaligned bool
	blockalign  [3]int64 // 0: each direction's smallest size
	rwPostfix   string   // N of rw=MODE:N
	rwIdentical bool     // rw_sequencer=identical

	ioengine                        string
	iodepth                         int64
	batchSubmit, batchMin, batchMax int64

	filename, directory string
	size, filesize      int64
	ioSize, numberIOs   int64
	numjobs, loops      int64

	runtime, ramp, startdelay time.Duration
	timeBased                 bool

	rwmixread      int64
	rate, rateIOPS [3]int64
	// The floors per direction, rate_cycle in milliseconds, and
	// rate_process.
	rateMin, rateIOPSMin [3]int64
	rateCycle            int64
	rateProcess          string

	direct, groupReporting, stonewall, newGroup bool
	norandommap, randrepeat                     bool
	randomDistribution                          string
	randseed                                    uint64
	offset, offsetIncrement                     int64
	offsetPct, sizePct                          int64
	nrfiles, filesizeLow                        int64
	fileService, filenameFormat                 string
	fsync                                       int64
	endFsync, unlink                            bool
	verify                                      string
	doVerify, verifyOnly                        bool
	verifyBacklog, verifyBacklogBatch           int64

	percentiles         []float64
	latPct, clatPct     bool
	pool, rbdname       string
	clientname, cluster string
	conf                string

	// fio's log files: the names given to write_bw_log, write_lat_log,
	// write_iops_log and write_hist_log ("" for the job's name; whether
	// each is on is whether it was given) and how they are written.
	logs                    fiolog.Options
	logNames                [4]string
	continueOnError         string // fio's name for it; "none" by default
	exitAll, exitAllOnError bool
	exitWhat                string
	steadyState             spec.SteadyState // its window is ss_dur, 0 for none
	thinkTime, thinkSpin    time.Duration
	thinkBlocks             int64
	// mem is iomem's kind (spec.BufferMemories, "" for malloc), memAlign
	// iomem_align's, hugepageSize hugepage-size's; memFile is the file
	// iomem's value names after a colon.
	mem, memFile           string
	memAlign, hugepageSize int64
}

// setting is where an option got its value, for error messages.
type setting struct{ value, where string }

// defaultOpts returns fio 3.33's defaults on Linux.
func defaultOpts() opts {
	return opts{
		given:       map[string]setting{},
		rw:          "read",
		bs:          [3]int64{4096, 4096, 4096},
		kbBase:      1024,
		ioengine:    "psync",
		iodepth:     1,
		batchSubmit: 1,
		batchMin:    1,
		numjobs:     1,
		nrfiles:     1,
		loops:       1,
		rwmixread:   50,
		rateCycle:   1000,
		randrepeat:  true,
		doVerify:    true,
		clatPct:     true,
		percentiles: defaultPercentiles,
		logs:        fiolog.Options{PerJob: true},

		continueOnError: "none",
		exitWhat:        "group",
		steadyState:     spec.SteadyState{Metric: "iops", Slope: true, Limit: 0.01, Percent: true},
		thinkBlocks:     1,
	}
}

// defaultPercentiles is fio's percentile_list default.
var defaultPercentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// clone copies o so that setting options on the copy leaves o alone.
func (o *opts) clone() opts {
	c := *o
	c.given = maps.Clone(o.given)
	return c
}

// argKind is how an option takes its value.
type argKind uint8

const (
	// needsValue: --bs=4k, or --bs 4k on the command line.
	needsValue argKind = iota
	// flag: fio's "set" options (group_reporting, time_based, stonewall):
	// bare means on, =0 off; the next argument is never their value.
	flag
	// boolean: 1 or 0. fio wants the value, but a bare one is taken as on,
	// as nobody means anything else by it.
	boolean
)

// option is one fio job option cephbench knows.
type option struct {
	name  string
	alias string
	arg   argKind
	set   func(o *opts, v string) error
	// noop: the option changes nothing in cephbench (noops); a run names
	// those it was given in one note.
	noop bool
}

// table lists the options cephbench maps, under fio's names and aliases.
var table = []option{
	{name: "name", set: func(o *opts, v string) error { o.name = v; return nil }},
	{name: "description", set: func(o *opts, v string) error { o.description = v; return nil }},
	{name: "rw", alias: "readwrite", set: setRW},
	{name: "bs", alias: "blocksize", set: func(o *opts, v string) error {
		o.bsDist = [2]string{} // the last of bs, bsrange and bssplit wins
		return setDirs(&o.bs, v, func(s string) (int64, error) {
			n, err := parseSize(s, o.kbBase)
			if err == nil && n == 0 {
				err = errors.New("a block size must be positive")
			}
			return n, err
		})
	}},
	{name: "bssplit", set: setBSSplit},
	{name: "bsrange", alias: "blocksize_range", set: setBSRange},
	{name: "bs_unaligned", alias: "blocksize_unaligned", arg: flag, set: boolSetter(func(o *opts) *bool { return &o.bsUnaligned })},
	{name: "ba", alias: "blockalign", set: func(o *opts, v string) error {
		return setDirs(&o.blockalign, v, func(s string) (int64, error) { return blockSize(s, o.kbBase) })
	}},
	{name: "rw_sequencer", set: setRWSequencer},
	{name: "kb_base", set: func(o *opts, v string) error {
		switch strings.TrimSpace(v) {
		case "1024":
			o.kbBase = 1024
		case "1000":
			o.kbBase = 1000
		default:
			return errors.New("want 1024 or 1000")
		}
		return nil
	}},
	{name: "size", set: func(o *opts, v string) error {
		pct, isPct, err := parsePercent(v)
		if !isPct {
			o.sizePct = 0
			return sizeSetter(func(o *opts) *int64 { return &o.size })(o, v)
		}
		o.size, o.sizePct = 0, pct
		return err
	}},
	{name: "filesize", set: func(o *opts, v string) error {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(v), "-")
		if !isRange {
			hi = lo
		}
		var err error
		if o.filesizeLow, err = parseSize(lo, o.kbBase); err == nil {
			o.filesize, err = parseSize(hi, o.kbBase)
		}
		switch {
		case err != nil:
			return err
		case o.filesize < o.filesizeLow:
			return errors.New("the range's high end is below its low end")
		case !isRange:
			o.filesizeLow = 0
		}
		return nil
	}},
	{name: "io_size", alias: "io_limit", set: sizeSetter(func(o *opts) *int64 { return &o.ioSize })},
	{name: "number_ios", set: sizeSetter(func(o *opts) *int64 { return &o.numberIOs })},
	{name: "offset", alias: "fileoffset", set: func(o *opts, v string) error {
		pct, isPct, err := parsePercent(v)
		if isPct {
			o.offset, o.offsetPct = 0, pct
			if pct == 100 {
				err = errors.New("an offset of 100% leaves nothing of the file")
			}
			return err
		}
		o.offset, o.offsetPct = 0, 0
		o.offset, err = parseSize(v, o.kbBase)
		return err
	}},
	{name: "offset_increment", set: func(o *opts, v string) error {
		n, err := parseSize(v, o.kbBase)
		if errors.Is(err, errPercent) {
			err = errOffsetPercent
		}
		o.offsetIncrement = n
		return err
	}},
	{name: "nrfiles", alias: "nr_files", set: countSetter(func(o *opts) *int64 { return &o.nrfiles }, 1)},
	{name: "file_service_type", set: func(o *opts, v string) error {
		if _, _, err := spec.ParseFileService(v); err != nil {
			return err
		}
		o.fileService = strings.TrimSpace(v)
		return nil
	}},
	{name: "filename_format", set: func(o *opts, v string) error {
		if strings.ContainsRune(v, '/') {
			return errors.New("names in subdirectories are not supported: give names inside directory=")
		}
		o.filenameFormat = strings.TrimSpace(v)
		return nil
	}},
	{name: "numjobs", set: countSetter(func(o *opts) *int64 { return &o.numjobs }, 1)},
	{name: "iodepth", set: countSetter(func(o *opts) *int64 { return &o.iodepth }, 1)},
	{name: "iodepth_batch", alias: "iodepth_batch_submit", set: countSetter(func(o *opts) *int64 { return &o.batchSubmit }, 0)},
	{name: "iodepth_batch_complete_min", alias: "iodepth_batch_complete", set: countSetter(func(o *opts) *int64 { return &o.batchMin }, 0)},
	{name: "iodepth_batch_complete_max", set: countSetter(func(o *opts) *int64 { return &o.batchMax }, 0)},
	{name: "loops", set: func(o *opts, v string) error {
		n, err := parseCount(v, o.kbBase)
		if err != nil {
			return err
		}
		o.loops = max(n, 1) // fio runs loops=0 once
		return nil
	}},
	{name: "fsync", set: countSetter(func(o *opts) *int64 { return &o.fsync }, 0)},
	{name: "rwmixread", set: func(o *opts, v string) error { return setMix(o, v, false) }},
	{name: "rwmixwrite", set: func(o *opts, v string) error { return setMix(o, v, true) }},
	{name: "ioengine", set: setEngine},
	{name: "runtime", alias: "timeout", set: timeSetter(func(o *opts) *time.Duration { return &o.runtime })},
	{name: "ramp_time", set: timeSetter(func(o *opts) *time.Duration { return &o.ramp })},
	{name: "startdelay", set: timeSetter(func(o *opts) *time.Duration { return &o.startdelay })},
	{name: "time_based", arg: flag, set: boolSetter(func(o *opts) *bool { return &o.timeBased })},
	{name: "filename", set: func(o *opts, v string) error { return setPath(&o.filename, v, "files") }},
	{name: "directory", set: func(o *opts, v string) error { return setPath(&o.directory, v, "directories") }},
	{name: "rate", set: func(o *opts, v string) error {
		return setDirs(&o.rate, v, func(s string) (int64, error) { return parseSize(s, o.kbBase) })
	}},
	{name: "rate_iops", set: func(o *opts, v string) error {
		return setDirs(&o.rateIOPS, v, func(s string) (int64, error) { return parseCount(s, o.kbBase) })
	}},
	{name: "rate_min", alias: "ratemin", set: func(o *opts, v string) error {
		return setDirs(&o.rateMin, v, func(s string) (int64, error) { return parseSize(s, o.kbBase) })
	}},
	{name: "rate_iops_min", set: func(o *opts, v string) error {
		return setDirs(&o.rateIOPSMin, v, func(s string) (int64, error) { return parseCount(s, o.kbBase) })
	}},
	{name: "rate_cycle", alias: "ratecycle", set: countSetter(func(o *opts) *int64 { return &o.rateCycle }, 1)},
	{name: "rate_process", set: func(o *opts, v string) error {
		switch p := strings.TrimSpace(v); p {
		case "linear", "poisson":
			o.rateProcess = p
			return nil
		}
		return errors.New("want linear or poisson")
	}},
	// cephbench has no thinktime to leave out of the rate, so the
	// schedule is the same either way.
	{name: "rate_ignore_thinktime", arg: boolean, set: func(o *opts, v string) error {
		_, err := parseBool(v, v == "")
		return err
	}},
	{name: "direct", arg: boolean, set: boolSetter(func(o *opts) *bool { return &o.direct })},
	{name: "buffered", arg: boolean, set: func(o *opts, v string) error {
		b, err := parseBool(v, v == "")
		o.direct = !b
		return err
	}},
	{name: "group_reporting", arg: flag, set: boolSetter(func(o *opts) *bool { return &o.groupReporting })},
	{name: "stonewall", alias: "wait_for_previous", arg: flag, set: boolSetter(func(o *opts) *bool { return &o.stonewall })},
	{name: "new_group", arg: flag, set: boolSetter(func(o *opts) *bool { return &o.newGroup })},
	{name: "norandommap", arg: flag, set: boolSetter(func(o *opts) *bool { return &o.norandommap })},
	{name: "random_distribution", set: func(o *opts, v string) error {
		if _, err := spec.ParseDistribution(v); err != nil {
			return err
		}
		o.randomDistribution = strings.TrimSpace(v)
		return nil
	}},
	// cephbench draws offsets from its own seeded generator whichever fio
	// names (see workload's picker): the generator changes which
	// sequence of offsets fio makes, not how they spread.
	{name: "random_generator", set: func(_ *opts, v string) error {
		switch strings.TrimSpace(v) {
		case "tausworthe", "lfsr", "tausworthe64":
			return nil
		}
		return errors.New("want tausworthe, lfsr or tausworthe64")
	}},
	{name: "randseed", set: func(o *opts, v string) error {
		n, err := parseCount(v, o.kbBase)
		o.randseed = uint64(n)
		return err
	}},
	{name: "randrepeat", arg: boolean, set: boolSetter(func(o *opts) *bool { return &o.randrepeat })},
	{name: "end_fsync", arg: boolean, set: boolSetter(func(o *opts) *bool { return &o.endFsync })},
	{name: "unlink", arg: boolean, set: boolSetter(func(o *opts) *bool { return &o.unlink })},
	{name: "lat_percentiles", arg: boolean, set: boolSetter(func(o *opts) *bool { return &o.latPct })},
	{name: "clat_percentiles", arg: boolean, set: boolSetter(func(o *opts) *bool { return &o.clatPct })},
	{name: "verify", set: setVerify},
	{name: "do_verify", arg: boolean, set: boolSetter(func(o *opts) *bool { return &o.doVerify })},
	{name: "verify_only", arg: flag, set: boolSetter(func(o *opts) *bool { return &o.verifyOnly })},
	{name: "verify_backlog", set: countSetter(func(o *opts) *int64 { return &o.verifyBacklog }, 0)},
	{name: "verify_backlog_batch", set: countSetter(func(o *opts) *int64 { return &o.verifyBacklogBatch }, 0)},
	{name: "percentile_list", set: setPercentiles},
	{name: "write_bw_log", arg: flag, set: logName(0)},
	{name: "write_lat_log", arg: flag, set: logName(1)},
	{name: "write_iops_log", arg: flag, set: logName(2)},
	{name: "write_hist_log", arg: flag, set: logName(3)},
	{name: "log_avg_msec", set: intSetter(func(o *opts) *int { return &o.logs.AvgMsec }, 0)},
	{name: "log_hist_msec", set: intSetter(func(o *opts) *int { return &o.logs.HistMsec }, 0)},
	{name: "log_hist_coarseness", set: intSetter(func(o *opts) *int { return &o.logs.HistCoarseness }, 6)},
	{name: "log_max_value", arg: boolean, set: boolSetter(func(o *opts) *bool { return &o.logs.MaxValue })},
	{name: "per_job_logs", arg: boolean, set: boolSetter(func(o *opts) *bool { return &o.logs.PerJob })},
	{name: "log_offset", arg: boolean, set: boolSetter(func(o *opts) *bool { return &o.logs.Offset })},
	{name: "log_prio", arg: boolean, set: boolSetter(func(o *opts) *bool { return &o.logs.Prio })},
	{name: "pool", set: stringSetter(func(o *opts) *string { return &o.pool })},
	{name: "rbdname", set: stringSetter(func(o *opts) *string { return &o.rbdname })},
	{name: "clientname", set: stringSetter(func(o *opts) *string { return &o.clientname })},
	{name: "clustername", set: stringSetter(func(o *opts) *string { return &o.cluster })},
	{name: "conf", set: stringSetter(func(o *opts) *string { return &o.conf })},
	{name: "continue_on_error", set: setContinueOnError},
	{name: "exitall", arg: flag, set: boolSetter(func(o *opts) *bool { return &o.exitAll })},
	{name: "exitall_on_error", arg: flag, set: boolSetter(func(o *opts) *bool { return &o.exitAllOnError })},
	{name: "exit_what", set: func(o *opts, v string) error {
		v = strings.TrimSpace(v)
		if v != "group" && v != "stonewall" && v != "all" {
			return errors.New("want group, stonewall or all")
		}
		o.exitWhat = v
		return nil
	}},
	{name: "steadystate", alias: "ss", set: setSteadyState},
	{name: "steadystate_duration", alias: "ss_dur", set: timeSetter(func(o *opts) *time.Duration { return (*time.Duration)(&o.steadyState.Window) })},
	{name: "steadystate_ramp_time", alias: "ss_ramp", set: timeSetter(func(o *opts) *time.Duration { return (*time.Duration)(&o.steadyState.Ramp) })},
	{name: "thinktime", set: func(o *opts, v string) error {
		d, err := parseTime(v, time.Microsecond)
		o.thinkTime = d
		return err
	}},
	{name: "thinktime_spin", set: func(o *opts, v string) error {
		d, err := parseTime(v, time.Microsecond)
		o.thinkSpin = d
		return err
	}},
	{name: "thinktime_blocks", set: countSetter(func(o *opts) *int64 { return &o.thinkBlocks }, 1)},
	{name: "iomem", alias: "mem", set: setMem},
	{name: "iomem_align", alias: "mem_align", set: sizeSetter(func(o *opts) *int64 { return &o.memAlign })},
	{name: "hugepage-size", set: sizeSetter(func(o *opts) *int64 { return &o.hugepageSize })},
}

// setMem takes iomem's kind, and a file after a colon. fio's kinds are
// cephbench's buffer memories but thp, which is cephbench's own.
func setMem(o *opts, v string) error {
	kind, file, _ := strings.Cut(strings.TrimSpace(v), ":")
	if kind == "cudamalloc" || kind == "thp" || !slices.Contains(spec.BufferMemories, kind) {
		return fmt.Errorf("want malloc, mmap, mmaphuge, mmapshared, shm or shmhuge")
	}
	if file != "" && kind != "mmaphuge" {
		return fmt.Errorf("a file for %s is not supported: cephbench maps anonymous memory", kind)
	}
	o.mem, o.memFile = kind, file
	return nil
}

// continueOnError maps continue_on_error's values to the kinds of failure
// that still end the job (spec.Workload.StopOnError): fio goes on after
// the kinds named and stops at any other.
var continueOnError = map[string]string{
	"none": "all", "0": "all",
	"read":   "write,verify",
	"write":  "read,verify",
	"io":     "verify",
	"verify": "read,write",
	"all":    "", "1": "",
}

func setContinueOnError(o *opts, v string) error {
	v = strings.TrimSpace(v)
	if _, ok := continueOnError[v]; !ok {
		return errors.New("want none, read, write, io, verify or all (or 0, 1)")
	}
	switch v {
	case "0":
		v = "none"
	case "1":
		v = "all"
	}
	o.continueOnError = v
	return nil
}

// setSteadyState reads steadystate's criterion, its bandwidth limits in
// the job's kb_base, as fio does; ss_dur sets its window.
func setSteadyState(o *opts, v string) error {
	kind, limit, _ := strings.Cut(strings.TrimSpace(v), ":")
	c, err := spec.ParseSteadyCriterion(kind + ":1")
	if err != nil {
		return err
	}
	if pct, isPct := strings.CutSuffix(strings.TrimSpace(limit), "%"); !isPct && c.Metric == "bw" && limit != "" {
		n, err := parseSize(pct, o.kbBase)
		if err != nil {
			return err
		}
		c.Limit = float64(n)
	} else if c, err = spec.ParseSteadyCriterion(v); err != nil {
		return err
	}
	c.Window, c.Ramp = o.steadyState.Window, o.steadyState.Ramp
	o.steadyState = c
	return nil
}

// defaultFilenameFormat is how fio names a job's files in its directory,
// which the file engine's names with a file prefix follow.
const defaultFilenameFormat = "$jobname.$jobnum.$filenum"

// fileNameFormat is o's filename_format for the file engine: empty when
// it is fio's default, which the engine's own names follow.
func (o *opts) fileNameFormat() string {
	if o.filenameFormat == defaultFilenameFormat {
		return ""
	}
	return o.filenameFormat
}

// errOffsetPercent refuses an increment in percent of the file.
var errOffsetPercent = errors.New("an increment in percent of the file is not supported; give it in bytes (4m, 1g)")

// parsePercent reads "N%" (1..100): isPct says whether v is a percentage
// at all, err what is wrong with it.
func parsePercent(v string) (pct int64, isPct bool, err error) {
	n, ok := strings.CutSuffix(strings.TrimSpace(v), "%")
	if !ok {
		return 0, false, nil
	}
	pct, err = strconv.ParseInt(strings.TrimSpace(n), 10, 64)
	if err != nil || pct < 1 || pct > 100 {
		return 0, true, errors.New("want a whole percentage, 1% to 100%")
	}
	return pct, true, nil
}

// byName finds options by name and alias: table's, then the no-op and
// matching ones.
var byName = func() map[string]*option {
	m := map[string]*option{}
	all := append(slices.Clone(table), extraOptions()...)
	for i := range all {
		m[all[i].name] = &all[i]
		if all[i].alias != "" {
			m[all[i].alias] = &all[i]
		}
	}
	return m
}()

// lookup finds the option called name. An error says whether fio has it
// (so that only cephbench lacks it) or nobody does, with the nearest name.
func lookup(name string) (*option, error) {
	if o, ok := byName[name]; ok {
		return o, nil
	}
	if why, ok := refused[name]; ok {
		return nil, fmt.Errorf("fio option %q is not supported by cephbench fio: %s", name, why)
	}
	if near := nearest(name); near != "" {
		return nil, fmt.Errorf("unknown option %q (did you mean %s?)", name, near)
	}
	return nil, fmt.Errorf("unknown option %q", name)
}

// nearest returns the known option closest to name in edit distance, if
// it is close enough to be a likely typo.
func nearest(name string) string {
	best, bestD := "", len(name)/3+1
	for n := range byName {
		if d := editDistance(name, n); d < bestD || d == bestD && best != "" && n < best {
			best, bestD = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// apply sets option opt to value v (bare: given without a value) on o,
// recording where it came from.
func (o *opts) apply(opt *option, v string, bare bool, where string) error {
	switch {
	case bare && opt.arg == needsValue:
		return fmt.Errorf("%s: option %s needs a value", where, opt.name)
	case !bare && strings.TrimSpace(v) == "":
		return fmt.Errorf("%s: option %s has an empty value", where, opt.name)
	}
	if err := opt.set(o, v); err != nil {
		return fmt.Errorf("%s: %s=%s: %w", where, opt.name, v, err)
	}
	o.given[opt.name] = setting{value: v, where: where}
	return nil
}

// rwModes are fio's rw= values cephbench runs, with their canonical name
// (what fio prints) and pattern; reads is the read share, -1 for rwmixread.
var rwModes = map[string]struct {
	canonical string
	random    bool
	reads     int
}{
	"read": {"read", false, 100}, "write": {"write", false, 0},
	"randread": {"randread", true, 100}, "randwrite": {"randwrite", true, 0},
	"rw": {"rw", false, -1}, "readwrite": {"rw", false, -1}, "randrw": {"randrw", true, -1},
}

func setRW(o *opts, v string) error {
	mode, postfix, _ := strings.Cut(strings.TrimSpace(v), ":")
	m, ok := rwModes[mode]
	switch {
	case strings.Contains(mode, "trim"):
		return errors.New("trims are not supported: cephbench's engines read and write")
	case !ok:
		return errors.New("want read, write, randread, randwrite, rw (readwrite) or randrw")
	}
	o.rw, o.rwPostfix = m.canonical, postfix
	return nil
}

func setMix(o *opts, v string, writes bool) error {
	n, err := parseCount(v, o.kbBase)
	if err != nil {
		return err
	}
	if n > 100 {
		return errors.New("want a percentage, 0 to 100")
	}
	if writes {
		n = 100 - n
	}
	o.rwmixread = n
	return nil
}

// syncEngines are fio's engines that issue one blocking system call per
// I/O; cephbench's psync mode does the same with pread/pwrite.
var syncEngines = []string{"sync", "psync", "vsync", "pvsync", "pvsync2"}

func setEngine(o *opts, v string) error {
	e := strings.TrimSpace(v)
	switch {
	case slices.Contains(syncEngines, e), e == "libaio", e == "io_uring", e == "null", e == "rbd", e == "rados":
		o.ioengine = e
		return nil
	}
	return errors.New("engine not supported: cephbench fio runs sync, psync, vsync, pvsync, pvsync2, libaio, io_uring, rbd, rados and null")
}

func setPath(dst *string, v, what string) error {
	paths := splitPaths(v)
	switch {
	case len(paths) > 1:
		return fmt.Errorf("several %s are not supported; give one", what)
	case paths[0] == "":
		return errors.New("empty path")
	}
	*dst = paths[0]
	return nil
}

// splitPaths splits fio's ':'-separated file names; "\:" is a colon in a
// name.
func splitPaths(v string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == ':':
			cur.WriteByte(':')
			i++
		case v[i] == ':':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(v[i])
		}
	}
	return append(out, cur.String())
}

// verifyAlgs are fio's verify methods that check a block's data and where
// it belongs. cephbench checks reads against its own per-block data (a
// header naming the block and its offset, as meta's does, and a fixed
// pattern) instead of a checksum, which finds the same corruption and
// misplaced blocks, so any of them turns verification on.
var verifyAlgs = []string{
	"md5", "crc64", "crc32", "crc32c", "crc32c-intel", "crc16", "crc7",
	"sha1", "sha256", "sha512", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "xxhash", "meta",
}

func setVerify(o *opts, v string) error {
	v = strings.TrimSpace(v)
	switch {
	case v == "0" || v == "none":
		o.verify = ""
	case slices.Contains(verifyAlgs, v):
		o.verify = v
	case v == "pattern" || v == "null":
		return errors.New("not supported: cephbench verifies with its own per-block data, not a given pattern; use a checksum method such as crc32c")
	default:
		return fmt.Errorf("unknown verify method (want 0 or one of %s)", strings.Join(verifyAlgs, ", "))
	}
	return nil
}

func setPercentiles(o *opts, v string) error {
	parts := strings.Split(v, ":")
	if len(parts) > 20 {
		return errors.New("at most 20 percentiles")
	}
	list := make([]float64, 0, len(parts))
	for _, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 || f > 100 {
			return fmt.Errorf("%q is not a percentile (want 0 to 100, separated by ':')", p)
		}
		list = append(list, f)
	}
	o.percentiles = list
	return nil
}

func sizeSetter(field func(*opts) *int64) func(*opts, string) error {
	return func(o *opts, v string) error {
		if err := single(v); err != nil {
			return err
		}
		n, err := parseSize(v, o.kbBase)
		if err != nil {
			return err
		}
		*field(o) = n
		return nil
	}
}

func countSetter(field func(*opts) *int64, least int64) func(*opts, string) error {
	return func(o *opts, v string) error {
		if err := single(v); err != nil {
			return err
		}
		n, err := parseCount(v, o.kbBase)
		if err != nil {
			return err
		}
		if n < least {
			return fmt.Errorf("must be at least %d", least)
		}
		*field(o) = n
		return nil
	}
}

func timeSetter(field func(*opts) *time.Duration) func(*opts, string) error {
	return func(o *opts, v string) error {
		if err := single(v); err != nil {
			return err
		}
		d, err := parseTime(v, time.Second)
		if err != nil {
			return err
		}
		*field(o) = d
		return nil
	}
}

func boolSetter(field func(*opts) *bool) func(*opts, string) error {
	return func(o *opts, v string) error {
		b, err := parseBool(v, v == "")
		if err != nil {
			return err
		}
		*field(o) = b
		return nil
	}
}

// logName sets the name of log i (bw, lat, iops, hist) as given: bare,
// the log takes the job's name, as in fio.
func logName(i int) func(*opts, string) error {
	return func(o *opts, v string) error {
		o.logNames[i] = strings.TrimSpace(v)
		return nil
	}
}

// intSetter sets a count of at most most (0: no limit), such as
// milliseconds.
func intSetter(field func(*opts) *int, most int64) func(*opts, string) error {
	return func(o *opts, v string) error {
		if err := single(v); err != nil {
			return err
		}
		n, err := parseCount(v, o.kbBase)
		switch {
		case err != nil:
			return err
		case n < 0 || n > 1<<31-1:
			return errors.New("out of range")
		case most > 0 && n > most:
			return fmt.Errorf("must be at most %d", most)
		}
		*field(o) = int(n)
		return nil
	}
}

func stringSetter(field func(*opts) *string) func(*opts, string) error {
	return func(o *opts, v string) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("empty value")
		}
		*field(o) = strings.TrimSpace(v)
		return nil
	}
}
