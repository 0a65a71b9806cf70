// Package planrun runs a plan: its steps, each a job parsed from its
// command line and run in-process into a folder of its own, then its
// cleanup, with a manifest that records every step's outcome so that an
// interrupted or failed run can be resumed. It also builds the built-in
// quick plan for a target.
package planrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/io/atomicfile"
	"github.com/cephbench/cephbench/plan"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/report/document"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/step"
)

// Run is one run of a plan's items into a results folder. Build it with
// FromFile, Quick or Resume, set the fields that say how it is presented
// and parsed, then Execute it or DryRun it.
type Run struct {
	// Name is the plan's name.
	Name string
	// Dir is the results folder; it is created, or with Resume read.
	Dir string
	// NewDir says Dir is a name made for this run (a timestamp): when
	// another run took it, this one takes the first free of Dir-2,
	// Dir-3, ... rather than refusing.
	NewDir bool
	// Stdout and Stderr are the run's streams.
	Stdout, Stderr io.Writer
	// Live is where the live progress line goes; nil for none.
	Live io.Writer
	// JSON prints the results as a JSON array on Stdout, and the text on
	// Stderr.
	JSON bool
	// Parse turns a step's command line into the job it runs, saving
	// its results under the folder results, without I/O; its error is
	// the step's bad input. A command that runs no workload (report,
	// compare, cleanup) gives the zero Job and runs through Command.
	Parse func(args []string, results string) (frontend.Job, error)
	// Command runs a command line that runs no workload (a cleanup, a
	// step that reports), writing its text to w; it returns the
	// command's error.
	Command func(ctx context.Context, w io.Writer, args []string) error
	// Job, if set, runs each step's job instead of frontend.Run, which
	// it is like: on other hosts, say.
	Job func(ctx context.Context, j frontend.Job, out frontend.IO) error

	source  []byte // the plan as YAML, kept in the folder for --resume
	vars    map[string]string
	items   []plan.Item
	cleanup [][]string
	// prepare, if set, runs just before the first step (not for a dry
	// run): what a built-in plan needs in place (its directory).
	prepare func() error
	// finish, if set, runs after the cleanup commands: what a built-in
	// plan removes that no command can (a directory it created).
	finish func() error
	resume bool
	// echo sends each step's text to the run's text stream as well as
	// to its log; otherwise that stream gets one line per step.
	echo bool
}

// text is where the run's text goes: stdout, unless stdout is for JSON.
func (r *Run) text() io.Writer {
	if r.JSON {
		return r.Stderr
	}
	return r.Stdout
}

// The files of a results folder besides the manifest.
const (
	planFile    = "plan.yaml"
	stepLogFile = "output.txt"
	cleanupLog  = "cleanup.txt"
)

// parsed is an item's job as its command line asks for it, saving its
// results in the item's folder, and how long it runs.
type parsed struct {
	job   frontend.Job
	took  time.Duration
	exact bool // otherwise it runs at least took
}

// parseItems parses every item's command line, as far as it can without
// I/O (the command runs a workload, its flags and arguments parse, fio's
// options are known, targets parse), into the job that runs it, each
// step placed in the plan and saving in the item's folder.
func (r *Run) parseItems() ([]parsed, error) {
	jobs := make([]parsed, len(r.items))
	for i, it := range r.items {
		j, err := r.Parse(it.Args, filepath.Join(r.Dir, itemDir(i, it)))
		if err != nil {
			return nil, engine.Usagef("%s: %s: %v", it.ID, strings.Join(it.Args, " "), err)
		}
		for k := range j.Steps {
			j.Steps[k].Plan = &it.PlanStep
		}
		jobs[i].job = j
		jobs[i].took, jobs[i].exact = frontend.Estimate(j)
	}
	return jobs, nil
}

var slugUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// itemDir is the folder of item i's files: its number and its ID made safe
// for a file name.
func itemDir(i int, it plan.Item) string {
	slug := strings.Trim(slugUnsafe.ReplaceAllString(strings.NewReplacer(" @", "-", " #", "-r", "=", "-").Replace(it.ID), "-"), "-")
	return fmt.Sprintf("%03d-%s", i+1, slug)
}

// Execute runs the items not yet done, then the cleanup, and reports. It
// returns a *engine.UsageError for bad input found before any step ran,
// and step.ErrInterrupted when ctx ended; the manifest records both.
func (r *Run) Execute(ctx context.Context) error {
	jobs, err := r.parseItems()
	if err != nil {
		return err
	}
	named := r.Dir
	m, err := r.openFolder()
	if err != nil {
		return err
	}
	if r.Dir != named {
		// Another run had the name: the steps save in this one's.
		if jobs, err = r.parseItems(); err != nil {
			return err
		}
	}
	if r.prepare != nil {
		if err := r.prepare(); err != nil {
			return err
		}
	}
	todo := r.todo(m)
	fmt.Fprintf(r.text(), "cephbench %s: plan %s, %d steps (%d to run), %s\n\n",
		result.Version, r.Name, len(r.items), countTrue(todo), totalTime(r.items, jobs, todo))

	stepErr := r.runSteps(ctx, m, jobs, todo)
	r.runCleanup(ctx)

	m.Finished = time.Now().UTC()
	switch {
	case stepErr == nil:
		m.Status = result.StepDone
	case errors.Is(stepErr, step.ErrInterrupted):
		m.Status = result.StepInterrupted
	default:
		m.Status = result.StepFailed
	}
	if err := m.Save(r.Dir); err != nil {
		return fmt.Errorf("saving the manifest: %w", err)
	}
	if err := r.summarize(m); err != nil {
		return err
	}
	return stepErr
}

// runSteps runs the items to do in order, with their pauses, until one
// fails or ctx ends, recording each in m.
func (r *Run) runSteps(ctx context.Context, m *result.Manifest, jobs []parsed, todo []bool) error {
	ran := 0
	for i, it := range r.items {
		if !todo[i] {
			continue
		}
		if ran > 0 && r.items[i-1].Pause > 0 {
			if err := r.pause(ctx, r.items[i-1].Pause); err != nil {
				return step.ErrInterrupted
			}
		}
		ran++
		st := &m.Steps[i]
		jobErr, err := r.runItem(ctx, i, it, jobs[i].job, st)
		m.Status = "running"
		if saveErr := m.Save(r.Dir); saveErr != nil {
			return fmt.Errorf("saving the manifest: %w", saveErr)
		}
		switch {
		case err != nil:
			return err
		case errors.Is(jobErr, step.ErrInterrupted) || ctx.Err() != nil:
			return step.ErrInterrupted
		case engine.IsUsage(jobErr) && ran == 1 && countTrue(todo) == len(r.items):
			// Nothing ran before it: its bad input is the plan's.
			return engine.Usagef("step %s: %s", it.ID, st.Error)
		case jobErr != nil:
			return fmt.Errorf("step %s failed: %s", it.ID, st.Error)
		}
	}
	return nil
}

// openFolder creates the results folder with the plan and a manifest of
// pending steps, or, resuming, reads its manifest and matches its steps.
func (r *Run) openFolder() (*result.Manifest, error) {
	old, err := result.LoadManifest(r.Dir)
	switch {
	case err == nil && !r.resume && !r.NewDir:
		return nil, engine.Usagef("%s already holds a plan's results: resume it with --resume %s, or give another --out", r.Dir, r.Dir)
	case err != nil && r.resume:
		return nil, engine.Usagef("--resume %s: %v", r.Dir, err)
	}
	if r.NewDir && !r.resume {
		if r.Dir, err = atomicfile.ClaimDir(r.Dir); err != nil {
			return nil, engine.Usagef("cannot make the results folder: %v", err)
		}
		old = nil // another run's, if the name was taken
	} else if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", r.Dir, err)
	}
	m := &result.Manifest{
		Schema: result.ManifestSchema, Version: result.Version, Plan: r.Name, Started: time.Now().UTC(),
		Status: "running", Vars: r.vars, Host: result.ThisHost(),
	}
	done := map[string]result.ManifestStep{}
	if old != nil {
		m.Started = old.Started
		for _, st := range old.Steps {
			done[st.ID] = st
		}
	} else if err := atomicfile.Write(filepath.Join(r.Dir, planFile), r.source); err != nil {
		return nil, err
	}
	for _, it := range r.items {
		st := result.ManifestStep{ID: it.ID, PlanStep: it.PlanStep, Command: strings.Join(it.Args, " "), Status: result.StepPending}
		if prev, ok := done[it.ID]; ok && prev.Status == result.StepDone {
			st = prev
		}
		m.Steps = append(m.Steps, st)
	}
	return m, m.Save(r.Dir)
}

// todo marks the items to run: those not done, and, before each of them,
// the items it requires (a resumed read redoes the write it reads).
func (r *Run) todo(m *result.Manifest) []bool {
	todo := make([]bool, len(r.items))
	index := map[string]int{}
	for i, it := range r.items {
		index[it.ID] = i
		todo[i] = m.Steps[i].Status != result.StepDone
	}
	for i := len(r.items) - 1; i >= 0; i-- {
		if !todo[i] {
			continue
		}
		for _, req := range r.items[i].Requires {
			todo[index[req]] = true
		}
	}
	return todo
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// totalTime is the time the items to run take with their pauses; "at
// least" when some have no known length.
func totalTime(items []plan.Item, jobs []parsed, todo []bool) string {
	var total time.Duration
	all := true
	last := -1
	for i := range items {
		if todo != nil && !todo[i] {
			continue
		}
		if last >= 0 {
			total += items[last].Pause
		}
		total += jobs[i].took
		all = all && jobs[i].exact
		last = i
	}
	if all {
		return "about " + total.String()
	}
	return "at least " + total.String()
}

func (r *Run) pause(ctx context.Context, d time.Duration) error {
	if r.Live != nil {
		fmt.Fprintf(r.Live, "\r\x1b[Kpausing %s", d)
		defer fmt.Fprint(r.Live, "\r\x1b[K")
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runItem runs item i's job in-process with its text going to its log,
// and records how it ended and the results it saved in st. It returns the
// job's error, and an error of its own when the item's folder cannot be
// made.
func (r *Run) runItem(ctx context.Context, i int, it plan.Item, j frontend.Job, st *result.ManifestStep) (jobErr, err error) {
	dir := itemDir(i, it)
	abs := filepath.Join(r.Dir, dir)
	// A step run again (resumed) starts from an empty folder: its folder
	// is the plan's own, holding only what the step wrote before.
	if err := os.RemoveAll(abs); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(abs, stepLogFile))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "$ cephbench %s\n", strings.Join(it.Args, " "))

	out := frontend.IO{Stdout: logf, Stderr: logf}
	if r.echo {
		out.Stdout = io.MultiWriter(logf, r.text())
	}
	label := fmt.Sprintf("[%d/%d] %s", i+1, len(r.items), it.ID)
	if r.Live != nil {
		out.Live = &step.Live{W: r.Live, Label: label, Part: it.Step}
	}
	started := time.Now()
	if j.Command == "" {
		jobErr = r.Command(ctx, out.Stdout, it.Args)
	} else if r.Job != nil {
		jobErr = r.Job(ctx, j, out)
	} else {
		jobErr = frontend.Run(ctx, j, out)
	}

	st.Status, st.Error, st.Results, st.Log = result.StepDone, "", nil, filepath.Join(dir, stepLogFile)
	switch {
	case jobErr == nil:
	case errors.Is(jobErr, step.ErrInterrupted):
		st.Status = result.StepInterrupted
	default:
		st.Status = result.StepFailed
		st.Error = oneLine(jobErr.Error())
		fmt.Fprintf(logf, "cephbench: %s\n", st.Error)
	}
	results := r.savedIn(abs, st)
	if !r.echo {
		r.stepLine(label, st, results, time.Since(started))
	}
	return jobErr, nil
}

// savedIn records in st the results a step saved in its folder, abs, or in
// folders of their own under it (disk makes one per run), and returns
// those it can read.
func (r *Run) savedIn(abs string, st *result.ManifestStep) []*result.Result {
	var files []string
	filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return nil
	})
	var results []*result.Result
	for _, f := range files {
		rel, _ := filepath.Rel(r.Dir, f)
		st.Results = append(st.Results, rel)
		if res, err := result.Load(f); err == nil {
			results = append(results, res)
		}
	}
	return results
}

// stepLine prints a finished step's line: its figures, or how it ended.
func (r *Run) stepLine(label string, st *result.ManifestStep, results []*result.Result, took time.Duration) {
	w := r.text()
	fmt.Fprintf(w, "%s  %s", label, took.Round(time.Second))
	if st.Status != result.StepDone {
		fmt.Fprintf(w, "  %s", strings.ToUpper(st.Status))
		if st.Error != "" {
			fmt.Fprintf(w, ": %s", st.Error)
		}
	}
	for _, res := range results {
		for _, kind := range res.Kinds() {
			s := res.Ops[kind]
			fmt.Fprintf(w, "  %s %s IOPS %s MiB/s p99 %s", kind, report.IOPS(s.IOPS.Mean), report.MiBps(s.BandwidthBps.Mean),
				report.Latency(float64(s.Latency.Percentiles.At(99))))
		}
	}
	fmt.Fprintln(w)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// runCleanup runs the plan's cleanup commands, even after Ctrl-C, with
// their text in the folder's cleanup log; failures are reported, not
// fatal.
func (r *Run) runCleanup(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	if len(r.cleanup) > 0 {
		logf, err := os.OpenFile(filepath.Join(r.Dir, cleanupLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(r.Stderr, "cephbench: %v\n", err)
			return
		}
		defer logf.Close()
		for _, args := range r.cleanup {
			fmt.Fprintf(logf, "$ cephbench %s\n", strings.Join(args, " "))
			if err := r.Command(ctx, logf, args); err != nil {
				fmt.Fprintf(logf, "cephbench: %s\n", oneLine(err.Error()))
				fmt.Fprintf(r.Stderr, "cephbench: cleanup %q failed: %s\n", strings.Join(args, " "), oneLine(err.Error()))
			}
		}
	}
	if r.finish != nil {
		if err := r.finish(); err != nil {
			fmt.Fprintf(r.Stderr, "cephbench: cleaning up: %v\n", err)
		}
	}
}

// summarize prints the table of every result in the folder and where it
// is, and the JSON array of them with JSON set.
func (r *Run) summarize(m *result.Manifest) error {
	text := r.text()
	all := []*result.Result{}
	saved := false
	for _, st := range m.Steps {
		saved = saved || len(st.Results) > 0
	}
	if saved {
		// Every result of the folder, not only this run's: a resumed
		// run's table is the plan's.
		set, err := aggregate.Load(r.Dir)
		if err != nil {
			return err
		}
		all = set.Results
		fmt.Fprintln(text)
		if d := document.New(set, ""); d.Aggregates() {
			d.Table(text, false)
			fmt.Fprintf(text, "\nmore: cephbench report %s [--repeats] [--format markdown|csv|json|html]\n", r.Dir)
		} else {
			// Nothing to aggregate: a row per result says more.
			report.Table(text, all)
		}
	}
	fmt.Fprintf(text, "\nresults: %s (%s)\n", r.Dir, m.Status)
	if r.JSON {
		b, err := json.MarshalIndent(all, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(r.Stdout, "%s\n", b)
	}
	return nil
}

// DryRun prints the items with their command lines and estimated times,
// and the total, without running anything.
func (r *Run) DryRun() error {
	jobs, err := r.parseItems()
	if err != nil {
		return err
	}
	w := r.Stdout
	fmt.Fprintf(w, "plan %s: %d steps, %s\n\n", r.Name, len(r.items), totalTime(r.items, jobs, nil))
	for i, it := range r.items {
		t := "?"
		if j := jobs[i]; j.took > 0 {
			t = j.took.String()
			if !j.exact {
				t = ">=" + t
			}
		}
		fmt.Fprintf(w, "%3d  %-40s %8s  cephbench %s\n", i+1, it.ID, t, strings.Join(it.Args, " "))
		if it.Pause > 0 && i < len(r.items)-1 {
			fmt.Fprintf(w, "     pause %s\n", it.Pause)
		}
	}
	for _, args := range r.cleanup {
		fmt.Fprintf(w, "     cleanup: cephbench %s\n", strings.Join(args, " "))
	}
	return nil
}
