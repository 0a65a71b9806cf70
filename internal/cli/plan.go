package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/internal/io/atomicfile"
	"github.com/cephbench/cephbench/internal/peer/fiojob"
	"github.com/cephbench/cephbench/plan"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/report/document"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// planRun is one run of a plan's items into a results folder.
type planRun struct {
	env     Env
	name    string
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
	dir    string
	resume bool
	// echo sends each step's text to stdout as well as to its log;
	// otherwise stdout gets one line per step.
	echo bool
	// live is where the live progress line goes; nil for none.
	live io.Writer
	// format "json" prints the results as a JSON array on stdout.
	format string
}

// text is where the run's text goes: stdout, unless stdout is for JSON.
func (r *planRun) text() io.Writer {
	if r.format == "json" {
		return r.env.Stderr
	}
	return r.env.Stdout
}

// The files of a results folder besides the manifest.
const (
	planFile    = "plan.yaml"
	stepLogFile = "output.txt"
	cleanupLog  = "cleanup.txt"
)

// checked is what checking an item's command line found.
type checked struct {
	// took is how long the command runs, zero when unknown; with exact
	// false it runs at least that long.
	took  time.Duration
	exact bool
	// savesResults: the command takes --results (report, compare and
	// cleanup do not).
	savesResults bool
}

// checkItems validates every item's command line as far as it can without
// I/O (the command exists and may run in a plan, its flags and arguments
// parse, fio's options are known, targets parse), and says how long each
// runs and whether it saves results.
func checkItems(items []plan.Item) ([]checked, error) {
	checks := make([]checked, len(items))
	for i, it := range items {
		c, err := checkCommand(it.Args)
		if err != nil {
			return nil, usagef("%s: %s: %v", it.ID, strings.Join(it.Args, " "), err)
		}
		checks[i] = c
	}
	return checks, nil
}

// notInPlans are commands a plan cannot run: they do not end, start
// clusters, or run plans themselves.
var notInPlans = map[string]bool{"run": true, "sandbox": true, "net server": true, "plans": true}

func checkCommand(args []string) (checked, error) {
	root := newRoot(Env{Stdout: io.Discard, Stderr: io.Discard})
	cmd, rest, err := root.Find(args)
	if err != nil {
		return checked{}, err
	}
	path := strings.TrimPrefix(cmd.CommandPath(), "cephbench ")
	if cmd == root || !cmd.Runnable() {
		return checked{}, fmt.Errorf("%q is not a cephbench command", strings.Join(args, " "))
	}
	if notInPlans[path] || notInPlans[strings.Fields(path)[0]] {
		return checked{}, fmt.Errorf("%q cannot run in a plan", path)
	}
	if path == "fio" { // fio parses its own command line, --results too
		p, err := fiojob.Parse(rest, os.Getenv, os.ReadFile)
		if err != nil {
			return checked{}, err
		}
		return checked{took: fioEstimate(p), exact: true, savesResults: true}, nil
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return checked{}, err
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return checked{}, err
	}
	if f := cmd.Flags().Lookup("target"); f != nil && f.Value.String() != "" {
		if _, err := spec.ParseTarget(f.Value.String()); err != nil {
			return checked{}, err
		}
	}
	c := checked{savesResults: cmd.Flags().Lookup("results") != nil}
	c.took, c.exact = estimate(path, cmd)
	return c, nil
}

// fioEstimate is a fio command's time: jobs between stonewalls run
// together, so each stretch takes its longest job.
func fioEstimate(p *fiojob.Plan) time.Duration {
	var total, stretch time.Duration
	for i, j := range p.Jobs {
		if i > 0 && j.Stonewall {
			total += stretch
			stretch = 0
		}
		stretch = max(stretch, time.Duration(j.Workload.Duration+j.Workload.Ramp)+j.StartDelay)
	}
	return total + stretch
}

// estimate reads a parsed command's flags for how long it runs.
func estimate(path string, cmd *cobra.Command) (time.Duration, bool) {
	flag := func(name string) time.Duration {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			return 0
		}
		d, err := spec.ParseDuration(f.Value.String())
		if err != nil {
			return 0
		}
		return time.Duration(d)
	}
	switch path {
	case "bench":
		d := flag("duration")
		if d == 0 {
			if cmd.Flags().Changed("ops") || cmd.Flags().Changed("total") {
				return flag("ramp"), false
			}
			d = 10 * time.Second
		}
		return d + flag("ramp"), true
	case "rados bench":
		secs, _ := strconv.Atoi(cmd.Flags().Arg(0))
		return time.Duration(secs) * time.Second, cmd.Flags().Arg(1) == "write"
	case "rados load-gen":
		return flag("run-length"), true
	case "net client":
		return flag("time") + flag("rtt"), true
	case "s3 bench":
		phases := 0
		for _, p := range []string{"put", "get", "list", "delete", "mixed"} {
			if cmd.Flags().Changed(p) {
				phases++
			}
		}
		return time.Duration(max(phases, 1)) * flag("duration"), true
	case "rbd bench", "rbd bench-write", "disk":
		return flag("duration"), false
	}
	return 0, false
}

var slugUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// itemDir is the folder of item i's files: its number and its ID made safe
// for a file name.
func itemDir(i int, it plan.Item) string {
	slug := strings.Trim(slugUnsafe.ReplaceAllString(strings.NewReplacer(" @", "-", " #", "-r", "=", "-").Replace(it.ID), "-"), "-")
	return fmt.Sprintf("%03d-%s", i+1, slug)
}

// run executes the items not yet done, then the cleanup, and reports.
func (r *planRun) run(ctx context.Context) error {
	checks, err := checkItems(r.items)
	if err != nil {
		return err
	}
	m, err := r.openFolder()
	if err != nil {
		return err
	}
	if r.prepare != nil {
		if err := r.prepare(); err != nil {
			return err
		}
	}
	todo := r.todo(m)
	fmt.Fprintf(r.text(), "cephbench %s: plan %s, %d steps (%d to run), %s\n\n",
		result.Version, r.name, len(r.items), countTrue(todo), totalTime(r.items, checks, todo))

	var stepErr error
	ran := 0
	for i, it := range r.items {
		if !todo[i] {
			continue
		}
		if ran > 0 && r.items[i-1].Pause > 0 {
			if err := r.pause(ctx, r.items[i-1].Pause); err != nil {
				stepErr = errInterrupted
				break
			}
		}
		ran++
		st := &m.Steps[i]
		code, err := r.runItem(ctx, i, it, checks[i].savesResults, st)
		m.Status = "running"
		if saveErr := m.Save(r.dir); saveErr != nil {
			return fmt.Errorf("saving the manifest: %w", saveErr)
		}
		if err != nil {
			stepErr = err
			break
		}
		if code == ExitInterrupted || ctx.Err() != nil {
			stepErr = errInterrupted
			break
		}
		if code != ExitOK {
			stepErr = &exitError{ExitFailure, fmt.Errorf("step %s failed: %s", it.ID, st.Error)}
			if ran == 1 && code == ExitUsage && countTrue(todo) == len(r.items) {
				// Nothing ran before it: its bad input is the plan's.
				stepErr = &exitError{ExitUsage, fmt.Errorf("step %s: %s", it.ID, st.Error)}
			}
			break
		}
	}
	r.runCleanup(ctx)

	m.Finished = time.Now().UTC()
	switch {
	case stepErr == nil:
		m.Status = result.StepDone
	case errors.Is(stepErr, errInterrupted):
		m.Status = result.StepInterrupted
	default:
		m.Status = result.StepFailed
	}
	if err := m.Save(r.dir); err != nil {
		return fmt.Errorf("saving the manifest: %w", err)
	}
	if err := r.summarize(m); err != nil {
		return err
	}
	return stepErr
}

// openFolder creates the results folder with the plan and a manifest of
// pending steps, or, resuming, reads its manifest and matches its steps.
func (r *planRun) openFolder() (*result.Manifest, error) {
	old, err := result.LoadManifest(r.dir)
	switch {
	case err == nil && !r.resume:
		return nil, usagef("%s already holds a plan's results: resume it with --resume %s, or give another --out", r.dir, r.dir)
	case err != nil && r.resume:
		return nil, usagef("--resume %s: %v", r.dir, err)
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", r.dir, err)
	}
	m := &result.Manifest{
		Schema: result.ManifestSchema, Version: result.Version, Plan: r.name, Started: time.Now().UTC(),
		Status: "running", Vars: r.vars, Host: result.ThisHost(),
	}
	done := map[string]result.ManifestStep{}
	if old != nil {
		m.Started = old.Started
		for _, st := range old.Steps {
			done[st.ID] = st
		}
	} else if err := atomicfile.Write(filepath.Join(r.dir, planFile), r.source); err != nil {
		return nil, err
	}
	for _, it := range r.items {
		st := result.ManifestStep{ID: it.ID, PlanStep: it.PlanStep, Command: strings.Join(it.Args, " "), Status: result.StepPending}
		if prev, ok := done[it.ID]; ok && prev.Status == result.StepDone {
			st = prev
		}
		m.Steps = append(m.Steps, st)
	}
	return m, m.Save(r.dir)
}

// todo marks the items to run: those not done, and, before each of them,
// the items it requires (a resumed read redoes the write it reads).
func (r *planRun) todo(m *result.Manifest) []bool {
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
func totalTime(items []plan.Item, checks []checked, todo []bool) string {
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
		total += checks[i].took
		all = all && checks[i].exact
		last = i
	}
	if all {
		return "about " + total.String()
	}
	return "at least " + total.String()
}

func (r *planRun) pause(ctx context.Context, d time.Duration) error {
	if r.live != nil {
		fmt.Fprintf(r.live, "\r\x1b[Kpausing %s", d)
		defer fmt.Fprint(r.live, "\r\x1b[K")
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

// runItem runs item i in-process with its text going to its log, then
// stamps its results with their place in the plan and records them in st.
func (r *planRun) runItem(ctx context.Context, i int, it plan.Item, savesResults bool, st *result.ManifestStep) (int, error) {
	dir := itemDir(i, it)
	abs := filepath.Join(r.dir, dir)
	// A step run again (resumed) starts from an empty folder: its folder
	// is the plan's own, holding only what the step wrote before.
	if err := os.RemoveAll(abs); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return 0, err
	}
	logf, err := os.Create(filepath.Join(abs, stepLogFile))
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "$ cephbench %s\n", strings.Join(it.Args, " "))

	var stderr bytes.Buffer
	child := Env{Stdout: logf, Stderr: io.MultiWriter(logf, &stderr)}
	if r.echo {
		child.Stdout = io.MultiWriter(logf, r.text())
	}
	label := fmt.Sprintf("[%d/%d] %s", i+1, len(r.items), it.ID)
	if r.live != nil {
		child.live = &step.Live{W: r.live, Label: label, Part: it.Step}
	}
	args := it.Args
	if savesResults {
		args = append(append([]string{}, args...), "--results", abs)
	}
	started := time.Now()
	code := Main(ctx, child, args)

	st.Status, st.Error, st.Results, st.Log = result.StepDone, "", nil, filepath.Join(dir, stepLogFile)
	switch code {
	case ExitOK:
	case ExitInterrupted:
		st.Status = result.StepInterrupted
	default:
		st.Status = result.StepFailed
		st.Error = lastLine(stderr.String())
	}
	// Commands save their results in the folder given or in folders of
	// their own under it (disk makes one per run).
	var files []string
	filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return nil
	})
	var results []*result.Result
	for _, f := range files {
		if err := stampPlan(f, it.PlanStep); err != nil {
			return code, err
		}
		rel, _ := filepath.Rel(r.dir, f)
		st.Results = append(st.Results, rel)
		if res, err := result.Load(f); err == nil {
			results = append(results, res)
		}
	}
	if !r.echo {
		r.stepLine(label, st, results, time.Since(started))
	}
	return code, nil
}

// stepLine prints a finished step's line: its figures, or how it ended.
func (r *planRun) stepLine(label string, st *result.ManifestStep, results []*result.Result, took time.Duration) {
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

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimPrefix(lines[len(lines)-1], "cephbench: ")
}

// stampPlan adds the plan's placing of a result to its file, keeping every
// other field as it is (results of every schema carry it).
func stampPlan(path string, ps result.PlanStep) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	placed, err := json.Marshal(ps)
	if err != nil {
		return err
	}
	doc["plan"] = placed
	return atomicfile.WriteJSON(path, doc)
}

// runCleanup runs the plan's cleanup commands, even after Ctrl-C, with
// their text in the folder's cleanup log; failures are reported, not
// fatal.
func (r *planRun) runCleanup(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	if len(r.cleanup) > 0 {
		logf, err := os.OpenFile(filepath.Join(r.dir, cleanupLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(r.env.Stderr, "cephbench: %v\n", err)
			return
		}
		defer logf.Close()
		for _, args := range r.cleanup {
			fmt.Fprintf(logf, "$ cephbench %s\n", strings.Join(args, " "))
			var stderr bytes.Buffer
			if code := Main(ctx, Env{Stdout: logf, Stderr: io.MultiWriter(logf, &stderr)}, args); code != ExitOK {
				fmt.Fprintf(r.env.Stderr, "cephbench: cleanup %q failed: %s\n", strings.Join(args, " "), lastLine(stderr.String()))
			}
		}
	}
	if r.finish != nil {
		if err := r.finish(); err != nil {
			fmt.Fprintf(r.env.Stderr, "cephbench: cleaning up: %v\n", err)
		}
	}
}

// summarize prints the table of every result in the folder and where it
// is, and the JSON array of them with --format json.
func (r *planRun) summarize(m *result.Manifest) error {
	text := r.text()
	all := []*result.Result{}
	saved := false
	for _, st := range m.Steps {
		saved = saved || len(st.Results) > 0
	}
	if saved {
		// Every result of the folder, not only this run's: a resumed
		// run's table is the plan's.
		set, err := aggregate.Load(r.dir)
		if err != nil {
			return err
		}
		all = set.Results
		fmt.Fprintln(text)
		if d := document.New(set, ""); d.Aggregates() {
			d.Table(text, false)
			fmt.Fprintf(text, "\nmore: cephbench report %s [--repeats] [--format markdown|csv|json|html]\n", r.dir)
		} else {
			// Nothing to aggregate: a row per result says more.
			report.Table(text, all)
		}
	}
	fmt.Fprintf(text, "\nresults: %s (%s)\n", r.dir, m.Status)
	if r.format == "json" {
		b, err := json.MarshalIndent(all, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(r.env.Stdout, "%s\n", b)
	}
	return nil
}

// dryRun prints the items with their command lines and estimated times,
// and the total, without running anything.
func (r *planRun) dryRun() error {
	checks, err := checkItems(r.items)
	if err != nil {
		return err
	}
	w := r.env.Stdout
	fmt.Fprintf(w, "plan %s: %d steps, %s\n\n", r.name, len(r.items), totalTime(r.items, checks, nil))
	for i, it := range r.items {
		t := "?"
		if c := checks[i]; c.took > 0 {
			t = c.took.String()
			if !c.exact {
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

// loadPlan reads a plan: a built-in one by name, or a YAML file.
func loadPlan(arg string) (*plan.Plan, []byte, error) {
	if b, ok := plan.Builtin(arg); ok {
		p, err := plan.Parse(arg, b)
		return p, b, err
	}
	b, err := os.ReadFile(arg)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(arg, "/.") {
			return nil, nil, fmt.Errorf("no plan file or built-in plan %q (built-in: %s)", arg, strings.Join(plan.BuiltinNames(), ", "))
		}
		return nil, nil, err
	}
	p, err := plan.Parse(arg, b)
	return p, b, err
}
