// Package fiojob reads fio's command lines and INI job files and turns
// each job into a spec.Workload that cephbench's engines run, keeping beside
// it what fio's own output prints about the job (reporting group, rw, bs,
// engine, depth, percentiles).
//
// It follows fio 3.33: option names and aliases, [global] inheritance,
// numjobs, stonewall and new_group, fio's size units (with kb_base=1024, 4k
// and 4KB are 4096 but 4KiB is 4000) and time units (seconds by default).
// Where cephbench cannot do what a job asks, Parse fails with an error that
// names the option, its value and where it was given, rather than running
// something else under fio's name. Where fio itself is lax (1.5g read as
// one byte, unknown suffixes ignored, unset ${VAR} replaced by nothing),
// Parse is strict.
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

// Plan is everything a fio command line asks for: the jobs in fio's order
// and how to report them.
type Plan struct {
	// Jobs in the order fio starts them: command-line jobs, then each job
	// file's sections in order. A job without Stonewall starts together
	// with the jobs before it, back to the last stonewall.
	Jobs []Job
	// OutputFormats holds normal, json, json+ and terse, each at most once
	// (json+ includes json); default normal.
	OutputFormats []string
	// Output is --output's file; "" means standard output.
	Output string
	// StatusInterval is --status-interval: print the full output this
	// often while running; zero means only at the end.
	StatusInterval time.Duration
	// Force and Keep are cephbench's --force (write over data cephbench did
	// not create) and --keep (leave created files and images); every
	// job's Workload carries them too.
	Force, Keep bool
	// ResultsDir is cephbench's --results: where its own JSON results go;
	// "" means the caller's default.
	ResultsDir string
	// GlobalOptions are the default options as given, for fio's JSON
	// "global options": the command line's before the first --name (or
	// after --name=global), then the job files' [global] sections', in
	// order, canonical names with values as written.
	GlobalOptions []Option
	// Notes are what the parse has to tell the user before the run, one
	// line each: the options given that change nothing in cephbench.
	Notes []string
	// Help and Version report --help and --version. Parse then reads
	// nothing else and returns no jobs: the caller prints and exits.
	Help, Version bool
}

// Job is one fio job: a section of a job file or a --name on the command
// line, with its numjobs clones run as the workers of one Workload.
type Job struct {
	Name, Description string
	// Where the job was defined: "FILE:LINE" of its section, or "command
	// line".
	Where string
	// Group is the reporting group, 0-based as fio prints it (g=0). A job
	// with stonewall or new_group starts a new group unless it is the first.
	Group int
	// Stonewall: the job waits for every earlier job to finish first. The
	// first job of a second or later job file has it, as in fio.
	Stonewall bool
	NumJobs   int
	// GroupReporting reports the job's clones, and the other jobs of its
	// group that have it, as one.
	GroupReporting bool

	// Workload is what cephbench's runner executes. Validate() returns nil
	// for it, except for a WholeTarget job without runtime or number_ios,
	// which has no bound until SetTargetSize gives it one.
	Workload spec.Workload
	// WholeTarget: the job gives no size, so fio does one pass (times
	// Loops) over the whole file, device or image, whose size only the
	// engine knows. Workload.TotalBytes is zero until the caller passes
	// that size to SetTargetSize.
	WholeTarget bool

	// What fio's output prints that the workload does not carry.
	RW string // fio's canonical rw: read, write, randread, randwrite, rw, randrw
	// BS is the block size as fio's job header prints it, "4096B-4096B";
	// BSDirs has it for reads, writes and trims, the header's (R), (W), (T).
	BS       string
	BSDirs   [3]string
	IOEngine string // as the job names it ("sync", "libaio", "rbd"); fio's default is psync
	IODepth  int    // as given; sync engines still run one I/O at a time
	// KBBase is the job's kb_base, 1024 or 1000, which also decides
	// whether fio prints units as KiB or kB.
	KBBase int
	// Options are the options given in the job's own section (or after its
	// --name), canonical names with values as written, in order: fio's
	// JSON "job options". Defaults and [global] ones are not included.
	Options []Option

	// StartDelay: wait this long after the job's start before any I/O.
	// The Workload has no field for it: the caller waits.
	StartDelay time.Duration
	// Loops is how many times fio repeats the job; a size-bound Workload
	// already counts it in TotalBytes and TotalOps.
	Loops int
	// Unlink: fio removes the job's files when it ends (its default is to
	// keep them). cephbench removes the files it created unless --keep,
	// whatever Unlink says, and never removes files it did not create.
	Unlink bool
	// VerifyAlg is verify='s method ("crc32c", "md5") or "" for none.
	// Workload.Verify is on for any method: cephbench checks reads against
	// its own per-block data, so it finds the same corruption with another
	// encoding.
	VerifyAlg string
	// PercentileList (fio's default unless given), LatPercentiles and
	// ClatPercentiles say which latency percentiles fio prints.
	PercentileList                  []float64
	LatPercentiles, ClatPercentiles bool

	// NoRandomMap is Workload.RandomMap's opposite, for random jobs with
	// a uniform distribution. RandRepeat (fio's default) makes every run
	// draw the same offsets; a caller keeps that by giving the runner a
	// fixed seed.
	NoRandomMap, RandRepeat bool
	// RandSeed is randseed's value, when RandSeedSet: the seed of the
	// job's random offsets and mix, whatever RandRepeat says.
	RandSeed    uint64
	RandSeedSet bool
	// IODepthBatchSubmit, IODepthBatchCompleteMin, IODepthBatchCompleteMax:
	// iodepth_batch_submit, iodepth_batch_complete_min and _max, as fio
	// corrects them. The first is the kernel queues' Workload.SubmitBatch;
	// the other two change nothing: a worker reaps each I/O as it
	// completes and refills its slot at once.
	IODepthBatchSubmit, IODepthBatchCompleteMin, IODepthBatchCompleteMax int

	// Logs are the fio log files the job writes, with their names
	// resolved (the job's name where none was given); nil for none.
	Logs *fiolog.Options

	// perJobFiles: the target is a directory in which the file engine lays
	// out JOBNAME.N.0 per worker, as fio names them. Two jobs of one name
	// running together there would share files, so Parse refuses that.
	perJobFiles bool
	newGroup    bool // new_group: a new reporting group without waiting

	// ContinueOnError is continue_on_error as fio names it: none, read,
	// write, io, verify or all. Workload.StopOnError holds what it means.
	ContinueOnError string
	// ExitAll: when the job ends, the jobs ExitWhat names end too. It is
	// fio's exitall, which one job turns on for all, so Parse sets it on
	// every job when one has it. ExitAllOnError does the same only when
	// the job ends in error.
	ExitAll, ExitAllOnError bool
	// ExitWhat is exit_what: group (the jobs of the job's reporting
	// group), stonewall (every running job) or all (every job).
	ExitWhat string
}

// Option is one option as a job gave it.
type Option struct{ Name, Value string }

// Passes is how many passes over its target a WholeTarget job makes: one
// per loop and clone, as fio does.
func (j *Job) Passes() int64 { return int64(max(j.Loops, 1)) * int64(max(j.NumJobs, 1)) }

// Parse reads fio's command line (the arguments after "fio") and the job
// files it names, with getenv for ${VAR} in job files (an empty or unset
// variable is an error) and readFile for job files and their includes
// ("-" is passed on as is). Options before the first --name are defaults
// for every job, job files' included.
func Parse(args []string, getenv func(string) string, readFile func(path string) ([]byte, error)) (*Plan, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if readFile == nil {
		return nil, errors.New("fiojob: no readFile given")
	}
	p := &parser{getenv: getenv, readFile: readFile, plan: &Plan{OutputFormats: []string{"normal"}}}
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		switch strings.TrimLeft(a, "-") {
		case "help", "h":
			p.plan.Help = true
		case "version", "v":
			p.plan.Version = true
		}
	}
	if p.plan.Help || p.plan.Version {
		return p.plan, nil
	}
	defaults, files, err := p.commandLine(args)
	if err != nil {
		return nil, err
	}
	for i, f := range files {
		// fio separates job files by a stonewall and starts each from the
		// defaults; unlike fio 3.33, which keeps the command line's
		// defaults for the first file only, every file gets them.
		if err := p.jobFile(f, defaults.clone(), i > 0); err != nil {
			return nil, err
		}
	}
	if len(p.pending) == 0 {
		return nil, errors.New("no jobs: give --name=NAME with job options, or a job file")
	}
	for i := range p.pending {
		j, err := p.build(&p.pending[i])
		if err != nil {
			return nil, err
		}
		p.plan.Jobs = append(p.plan.Jobs, j)
	}
	if len(p.ignored) > 0 {
		p.plan.Notes = append(p.plan.Notes, "fio options that change nothing in cephbench, ignored: "+strings.Join(slices.Sorted(maps.Keys(p.ignored)), ", "))
	}
	assignGroups(p.plan.Jobs)
	if slices.ContainsFunc(p.plan.Jobs, func(j Job) bool { return j.ExitAll }) {
		for i := range p.plan.Jobs {
			p.plan.Jobs[i].ExitAll = true
		}
	}
	if err := checkSharedDirs(p.plan.Jobs); err != nil {
		return nil, err
	}
	return p.plan, nil
}

type parser struct {
	getenv   func(string) string
	readFile func(string) ([]byte, error)
	plan     *Plan
	pending  []pending
	ignored  map[string]bool // the no-op options the jobs were given
}

// pending is a job as parsed, before it is mapped to a workload.
type pending struct {
	o       opts
	where   string
	options []Option
}

// fioOnly are fio's own command-line options (not job options) that
// cephbench fio does not take.
var fioOnly = []string{
	"latency-log", "bandwidth-log", "append-terse", "cmdhelp", "enghelp", "showcmd",
	"readonly", "eta", "eta-interval", "eta-newline", "debug", "parse-only", "section",
	"inflate-log", "alloc-size", "profile", "warnings-fatal", "max-jobs", "terse-version",
	"server", "server-internal", "daemonize", "client", "remote-config", "cpuclock-test",
	"crctest", "memcpytest", "idle-prof", "trigger-file", "trigger-timeout", "trigger",
	"trigger-remote", "aux-path", "merge-blktrace-only",
}

const cmdline = "command line"

// commandLine reads the options and returns the defaults the command line
// leaves (fio's plus those before the first --name, or after
// --name=global) and the job files it names. Command-line jobs are added
// to p.pending as they end.
func (p *parser) commandLine(args []string) (opts, []string, error) {
	defaults := defaultOpts()
	var files []string
	var job *pending // nil: options set the defaults
	finish := func() {
		if job != nil {
			p.pending = append(p.pending, *job)
			job = nil
		}
	}
	for _, a := range args {
		if strings.ContainsFunc(a, isControl) {
			return defaults, nil, fmt.Errorf("fio argument %q holds a control character", a)
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			files = append(files, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			files = append(files, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		// next takes the following argument as the option's value.
		next := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) || len(args[i+1]) > 1 && args[i+1][0] == '-' {
				return "", fmt.Errorf("%s: %s needs a value", cmdline, a)
			}
			i++
			return args[i], nil
		}
		if handled, err := p.ownFlag(a, name, value, hasValue, next); handled || err != nil {
			if err != nil {
				return defaults, nil, err
			}
			continue
		}
		if slices.Contains(fioOnly, name) {
			return defaults, nil, fmt.Errorf("%s: fio option --%s is not supported by cephbench fio", cmdline, name)
		}
		opt, err := lookup(name)
		if err != nil {
			return defaults, nil, fmt.Errorf("%s: %s: %w", cmdline, a, err)
		}
		bare := false
		switch {
		case hasValue:
		case opt.arg == flag:
			bare = true
		case opt.arg == boolean:
			// fio takes "--direct 1"; a bare --direct followed by anything
			// but a number means on.
			if i+1 < len(args) && isUint(args[i+1]) {
				i++
				value = args[i]
			} else {
				bare = true
			}
		default:
			if value, err = next(); err != nil {
				return defaults, nil, err
			}
		}
		if opt.name == "name" {
			finish()
			if strings.HasPrefix(value, "global") {
				// As in fio, which takes any name starting with global:
				// what follows sets the defaults again.
				continue
			}
			job = &pending{o: defaults.clone(), where: cmdline}
		}
		target, given := &defaults, &p.plan.GlobalOptions
		if job != nil {
			target, given = &job.o, &job.options
		}
		*given = append(*given, Option{Name: opt.name, Value: value})
		if err := target.apply(opt, value, bare, cmdline); err != nil {
			return defaults, nil, err
		}
	}
	finish()
	return defaults, files, nil
}

// ownFlag takes the command-line options that set how fio itself runs
// rather than a job (--output, --minimal, --force...): it reports whether
// a (named name, with its value if hasValue; next reads a separate one)
// was one of them.
func (p *parser) ownFlag(a, name, value string, hasValue bool, next func() (string, error)) (bool, error) {
	switch name {
	case "output", "results", "output-format", "status-interval":
		v, err := next()
		if err != nil {
			return true, err
		}
		return true, p.fioOption(name, v)
	case "minimal":
		p.plan.OutputFormats = []string{"terse"}
		return true, nil
	case "force", "keep":
		b := true
		if hasValue {
			var err error
			if b, err = strconv.ParseBool(value); err != nil {
				return true, fmt.Errorf("%s: %s: want true or false", cmdline, a)
			}
		}
		if name == "force" {
			p.plan.Force = b
		} else {
			p.plan.Keep = b
		}
		return true, nil
	}
	return false, nil
}

// fioOption sets one of fio's own options that take a value.
func (p *parser) fioOption(name, v string) error {
	switch name {
	case "output":
		p.plan.Output = v
	case "results":
		p.plan.ResultsDir = v
	case "output-format":
		formats, err := parseFormats(v)
		if err != nil {
			return fmt.Errorf("%s: --output-format=%s: %w", cmdline, v, err)
		}
		p.plan.OutputFormats = formats
	case "status-interval":
		d, err := parseTime(v, time.Second)
		if err == nil && d < time.Millisecond {
			err = errors.New("must be at least 1ms")
		}
		if err != nil {
			return fmt.Errorf("%s: --status-interval=%s: %w", cmdline, v, err)
		}
		p.plan.StatusInterval = d
	}
	return nil
}

// parseFormats reads --output-format's comma-separated list, as fio does:
// minimal and csv mean terse, and json+ includes json.
func parseFormats(v string) ([]string, error) {
	var out []string
	add := func(f string) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, f := range strings.Split(v, ",") {
		switch f = strings.TrimSpace(f); f {
		case "normal", "json", "json+":
			add(f)
		case "terse", "minimal", "csv":
			add("terse")
		default:
			return nil, fmt.Errorf("unknown format %q (want normal, json, json+ or terse)", f)
		}
	}
	if slices.Contains(out, "json+") {
		kept := out[:0]
		for _, f := range out {
			if f != "json" {
				kept = append(kept, f)
			}
		}
		out = kept
	}
	return out, nil
}

func isUint(s string) bool {
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}

// assignGroups numbers the reporting groups as fio does: a job with
// stonewall or new_group opens a new group, unless no job came before it
// in the current one.
func assignGroups(jobs []Job) {
	group, inGroup := 0, 0
	for i := range jobs {
		if (jobs[i].Stonewall || jobs[i].newGroup) && inGroup > 0 {
			group++
			inGroup = 0
		}
		jobs[i].Group = group
		inGroup += jobs[i].NumJobs
	}
}
