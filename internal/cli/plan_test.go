package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/result"
)

// writePlan writes a plan file into a new directory and returns its path.
func writePlan(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// twoTargets is a small plan: one workload on null:// and on a local
// directory, two block sizes, three repeats, op-bounded so it is quick.
const twoTargets = `
name: two-targets
repeats: 3
vars:
  dir: ""
targets:
  - name: mem
    target: null://
  - name: local
    target: ${dir}
steps:
  - name: randread
    workload: {rw: randread, size: 8M, iodepth: 4, ops: 20000}
    sweep: {bs: [4k, 16k]}
`

func TestPlanWithTwoTargetsAndRepeats(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := cephbench(t, context.Background(), "run", writePlan(t, twoTargets), "--set", "dir="+dir, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := result.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != result.StepDone || len(m.Steps) != 12 || m.Vars["dir"] != dir {
		t.Fatalf("manifest: status %s, %d steps, vars %v; want done, 12 (2 sizes x 2 targets x 3 repeats)", m.Status, len(m.Steps), m.Vars)
	}
	if !strings.Contains(stdout, "[12/12] randread bs=16k @local #3") {
		t.Errorf("no line for the last step:\n%s", stdout)
	}
	for _, st := range m.Steps {
		if st.Status != result.StepDone || len(st.Results) != 1 {
			t.Fatalf("step %s: %s with %d results", st.ID, st.Status, len(st.Results))
		}
		r, err := result.Load(filepath.Join(out, st.Results[0]))
		if err != nil {
			t.Fatal(err)
		}
		if r.Plan == nil || r.Plan.Step != st.Step || r.Plan.Target != st.Target || r.Plan.Repeat != st.Repeat || r.Plan.Of != 3 {
			t.Errorf("%s: the result is placed at %+v", st.ID, r.Plan)
		}
		if r.Ops["read"].Ops != 20000 {
			t.Errorf("%s: %d reads, want 20000", st.ID, r.Ops["read"].Ops)
		}
		if _, err := os.Stat(filepath.Join(out, st.Log)); err != nil {
			t.Errorf("%s: no log: %v", st.ID, err)
		}
	}
	// The folder's measurements aggregate the repeats' own figures.
	set, err := aggregate.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	groups := set.Groups()
	if len(groups) != 4 {
		t.Fatalf("%d measurements; want 4", len(groups))
	}
	for _, g := range groups {
		var sum float64
		var values []float64
		for _, st := range m.Steps {
			if st.Step != g.Step || st.Target != g.Target {
				continue
			}
			r, _ := result.Load(filepath.Join(out, st.Results[0]))
			sum += r.Ops["read"].IOPS.Mean
			values = append(values, r.Ops["read"].IOPS.Mean)
		}
		if len(values) != 3 || math.Abs(g.IOPS.Mean-sum/3) > 1e-6*sum {
			t.Errorf("%s @%s: IOPS mean %.1f over %d repeats; the repeats' files give %v", g.Step, g.Target, g.IOPS.Mean, g.IOPS.N(), values)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the plan left %v in the target directory", entries)
	}
}

func TestPlanDryRunPrintsStepsAndTimeAndRunsNothing(t *testing.T) {
	plan := writePlan(t, `
name: timed
pause: 5s
targets: [{name: n, target: null://}]
steps:
  - name: a
    workload: {duration: 30s}
    sweep: {iodepth: [1, 32]}
  - name: b
    run: bench --target null:// --ops 1000
`)
	out := filepath.Join(t.TempDir(), "never")
	code, stdout, stderr := cephbench(t, context.Background(), "run", plan, "--dry-run", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// 2 x 30s of workload, 2 pauses of 5s between the 3 steps, and a step
	// bounded by ops whose time is unknown.
	for _, want := range []string{"3 steps, at least 1m10s", "a iodepth=32 @n #1", "30s  cephbench bench --target null:// --name a iodepth=1 --duration 30s --iodepth 1", "pause 5s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a dry run made its results folder")
	}
}

func TestPlanBadInputIsRefusedBeforeAnyIO(t *testing.T) {
	good := writePlan(t, "name: ok\nsteps:\n  - name: a\n    run: bench --target null:// --ops 10\n")
	done := t.TempDir()
	if code, _, stderr := cephbench(t, context.Background(), "run", good, "--out", done); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"run", "/nonexistent/plan.yaml"}, "no such file"},
		{"unknown built-in", []string{"run", "nosuchplan"}, "built-in: baseline"},
		{"unknown key", []string{"run", writePlan(t, "name: x\nsteps:\n  - name: a\n    rn: bench\n")}, "line 4"},
		{"unknown flag in a step", []string{"run", writePlan(t, "name: x\nsteps:\n  - name: a\n    run: bench --target null:// --bogus\n")}, "unknown flag: --bogus"},
		{"bad size in a step", []string{"run", writePlan(t, "name: x\nsteps:\n  - name: a\n    run: bench --target null:// --bs 4q\n")}, "4q"},
		{"unknown command", []string{"run", writePlan(t, "name: x\nsteps:\n  - name: a\n    run: frobnicate now\n")}, "frobnicate"},
		{"bad fio option", []string{"run", writePlan(t, "name: x\nsteps:\n  - name: a\n    run: fio --name=j --filename=/tmp/x --size=1M --rw=randread --bogus=1\n")}, "bogus"},
		{"nested run", []string{"run", writePlan(t, "name: x\nsteps:\n  - name: a\n    run: run quick\n")}, "cannot run in a plan"},
		{"missing variable", []string{"run", "ssd-qualification"}, "--set device="},
		{"unknown variable", []string{"run", "ssd-qualification", "--set", "device=/tmp/x", "--set", "devcie=/tmp/y"}, `no variable "devcie"`},
		{"bad --set", []string{"run", good, "--set", "novalue"}, "NAME=VALUE"},
		{"target with a plan", []string{"run", good, "--target", "/tmp"}, "--set"},
		{"results folder in use", []string{"run", good, "--out", done}, "--resume"},
		{"resume of no results", []string{"run", "--resume", t.TempDir()}, "--resume"},
		{"resume with a plan", []string{"run", good, "--resume", done}, "--resume"},
	} {
		code, stdout, stderr := cephbench(t, context.Background(), c.args...)
		wantUsageError(t, c.name, code, stdout, stderr)
		if !strings.Contains(stderr, c.want) {
			t.Errorf("%s: %q does not mention %q", c.name, stderr, c.want)
		}
	}
}

// slowPlan has four steps of a second each, with a target directory to
// check the cleanup of, and a read that requires a write.
const slowPlan = `
name: slow
vars:
  dir: ""
targets: [{name: local, target: "${dir}"}]
steps:
  - name: write
    workload: {rw: write, bs: 64k, size: 4M, duration: 1s, keep: true}
  - name: other
    run: bench --target null:// --duration 1s
  - name: read
    workload: {rw: randread, bs: 4k, size: 4M, duration: 1s, keep: true}
    requires: [write]
  - name: last
    run: bench --target null:// --duration 1s
cleanup:
  - cleanup ${target}
`

func TestPlanResumesAfterAKilledRun(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cephbench")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/cephbench").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir, out := t.TempDir(), filepath.Join(t.TempDir(), "results")
	plan := writePlan(t, slowPlan)
	cmd := exec.Command(bin, "run", plan, "--set", "dir="+dir, "--out", out)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it (no cleanup, no last word) once two steps are done.
	deadline := time.Now().Add(60 * time.Second)
	for {
		m, err := result.LoadManifest(out)
		if err == nil && m.Steps[1].Status == result.StepDone {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("two steps did not finish:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed, err := result.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if killed.Status != "running" || killed.Steps[0].Status != result.StepDone || killed.Steps[3].Status != result.StepPending {
		t.Fatalf("after the kill: status %s, steps %s, %s; want running, done ... pending", killed.Status, killed.Steps[0].Status, killed.Steps[3].Status)
	}
	other := filepath.Join(out, killed.Steps[1].Results[0])
	before, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := cephbench(t, context.Background(), "run", "--resume", out)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := result.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != result.StepDone || !m.Started.Equal(killed.Started) {
		t.Errorf("after the resume: status %s, started %v (first run %v)", m.Status, m.Started, killed.Started)
	}
	for _, st := range m.Steps {
		if st.Status != result.StepDone || len(st.Results) != 1 {
			t.Errorf("%s: %s, %d results", st.ID, st.Status, len(st.Results))
		}
	}
	// The finished step is not redone; the write the read needs is, since
	// the killed run's data may be gone; the step after them runs.
	if after, _ := os.ReadFile(other); !bytes.Equal(before, after) {
		t.Errorf("the resume redid a finished step")
	}
	for _, want := range []string{"4 steps (3 to run)", "[1/4] write @local #1", "[3/4] read @local #1", "[4/4] last #1"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the resumed run's output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "[2/4]") {
		t.Errorf("the resumed run ran the finished step again:\n%s", stdout)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the plan's data is still in the target after the resumed run: %v", entries)
	}
}

func TestPlanInterruptedKeepsWhatItFinishedAndCleansUp(t *testing.T) {
	dir, out := t.TempDir(), filepath.Join(t.TempDir(), "results")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C half way through the second step, however long the first took.
	watched := watchFor("[1/4] write")
	go func() {
		select {
		case <-watched.seen:
			time.Sleep(500 * time.Millisecond)
		case <-ctx.Done():
		}
		cancel()
	}()
	code := Main(ctx, Env{Stdout: watched, Stderr: io.Discard}, []string{"run", writePlan(t, slowPlan), "--set", "dir=" + dir, "--out", out, "-q"})
	stdout := watched.String()
	if code != ExitInterrupted {
		t.Fatalf("exit %d; want %d\n%s", code, ExitInterrupted, stdout)
	}
	m, err := result.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != result.StepInterrupted || m.Steps[0].Status != result.StepDone || m.Steps[1].Status != result.StepInterrupted || m.Steps[2].Status != result.StepPending {
		t.Errorf("manifest: %s; steps %s %s %s", m.Status, m.Steps[0].Status, m.Steps[1].Status, m.Steps[2].Status)
	}
	r, err := result.Load(filepath.Join(out, m.Steps[1].Results[0]))
	if err != nil || !r.Interrupted || r.Ops["read"].Ops == 0 {
		t.Errorf("the interrupted step's result: %v, %+v", err, r)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Ctrl-C left the plan's data in the target: %v", entries)
	}
	if !strings.Contains(stdout, "(interrupted)") {
		t.Errorf("the output does not say the plan was interrupted:\n%s", stdout)
	}
}

func TestPlanLiveLineOnlyOnATerminal(t *testing.T) {
	plan := writePlan(t, "name: live\nsteps:\n  - name: a\n    run: bench --target null:// --duration 2s\n")
	for _, c := range []struct {
		terminal, quiet, want bool
	}{{true, false, true}, {true, true, false}, {false, false, false}} {
		var stdout, stderr bytes.Buffer
		args := []string{"run", plan, "--out", filepath.Join(t.TempDir(), "r")}
		if c.quiet {
			args = append(args, "--quiet")
		}
		code := Main(context.Background(), Env{Stdout: &stdout, Stderr: &stderr, StderrTerminal: c.terminal}, args)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		got := strings.Contains(stderr.String(), "\r\x1b[K[1/1] a #1  1s of 2s, 1s left  now ")
		if got != c.want {
			t.Errorf("terminal %v quiet %v: live line %v; stderr %q", c.terminal, c.quiet, got, stderr.String())
		}
		if strings.Contains(stdout.String(), "\r") {
			t.Errorf("the live line went to stdout: %q", stdout.String())
		}
	}
}

func TestBuiltInSSDQualificationPlan(t *testing.T) {
	t.Parallel() // with the other long plans, after the package's other tests
	device := filepath.Join(t.TempDir(), "ssd.dat")
	out := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := cephbench(t, context.Background(), "run", "ssd-qualification",
		"--set", "device="+device, "--set", "size=16M", "--set", "runtime=1", "--set", "pause=0s", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	set, err := aggregate.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, g := range set.Groups() {
		rows = append(rows, fmt.Sprintf("%s/%s n=%d", g.Name(), g.Kind, g.IOPS.N()))
	}
	want := "randwrite-4K / Rand_Write_Test/write n=3 randread-4K / Rand_Read_Test/read n=3 " +
		"randrw-4K / Rand_Read_Write_Test/read n=3 randrw-4K / Rand_Read_Write_Test/write n=3 " +
		"write-4M / Write_Test/write n=3 read-4M / Read_Test/read n=3 rw-4M / Read_Write_Test/read n=3 rw-4M / Read_Write_Test/write n=3"
	if got := strings.Join(rows, " "); got != want {
		t.Errorf("measurements:\n%s\nwant\n%s", got, want)
	}
	if _, err := os.Stat(device); !os.IsNotExist(err) {
		t.Errorf("the plan left the file it created: %v", err)
	}
}

func TestPlanRunsAJobFileBesideIt(t *testing.T) {
	plan := writePlan(t, "name: jobs\nsteps:\n  - name: fio\n    run: fio ${plan_dir}/job.fio\n")
	data := t.TempDir()
	job := "[seq-write]\nrw=write\nbs=64k\nsize=2M\ndirectory=" + data + "\n"
	if err := os.WriteFile(filepath.Join(filepath.Dir(plan), "job.fio"), []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "results")
	// From another directory: the job file is found beside the plan.
	code, stdout, stderr := cephbench(t, context.Background(), "run", plan, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := result.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	r, err := result.Load(filepath.Join(out, m.Steps[0].Results[0]))
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "seq-write" || r.Ops["write"].Bytes != 2<<20 {
		t.Errorf("the job's result: %s with %d bytes written; want seq-write with 2 MiB", r.Name, r.Ops["write"].Bytes)
	}
	log, _ := os.ReadFile(filepath.Join(out, m.Steps[0].Log))
	if !strings.Contains(string(log), "Run status group 0") {
		t.Errorf("the step's log lacks fio's output:\n%s", log)
	}
}

func TestPlanJSONIsTheResultsAloneAndStepsMayReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results")
	page := filepath.Join(t.TempDir(), "first.md")
	plan := writePlan(t, `
name: json
steps:
  - name: a
    run: bench --target null:// --ops 5000
  - name: b
    run: bench --target null:// --ops 7000
  - name: report-so-far
    run: report `+out+` --format markdown -o `+page+`
`)
	code, stdout, stderr := cephbench(t, context.Background(), "run", plan, "--out", out, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var results []result.Result
	if err := json.Unmarshal([]byte(stdout), &results); err != nil {
		t.Fatalf("stdout is not the JSON results alone: %v\n%s", err, stdout)
	}
	if len(results) != 2 || results[0].Ops["read"].Ops+results[0].Ops["write"].Ops != 5000 || results[1].Plan.Step != "b" {
		t.Errorf("results %+v", results)
	}
	if !strings.Contains(stderr, "[3/3] report-so-far #1") {
		t.Errorf("the steps' lines are not on stderr:\n%s", stderr)
	}
	if md, err := os.ReadFile(page); err != nil || !strings.Contains(string(md), "| b | null:// | read |") {
		t.Errorf("the report step's page: %v\n%s", err, md)
	}
}

func TestPlansListsAndPrintsRunnablePlans(t *testing.T) {
	code, list, _ := cephbench(t, context.Background(), "plans")
	for _, want := range []string{"quick", "rados-rbd              8  --set pool=…", "ssd-qualification     18  --set device=…", "baseline"} {
		if code != 0 || !strings.Contains(strings.Join(strings.Fields(list), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("plans: exit %d, lacks %q:\n%s", code, want, list)
		}
	}
	code, stdout, stderr := cephbench(t, context.Background(), "plans", "nosuch")
	wantUsageError(t, "unknown plan", code, stdout, stderr)

	// The quick plan as printed is a plan file that runs the same steps
	// and leaves nothing of its own behind.
	dir := t.TempDir()
	code, yaml, _ := cephbenchIn(t, context.Background(), dir, nil, "plans", "quick")
	if code != 0 || !strings.Contains(yaml, "name: objects-write-4M") {
		t.Fatalf("plans quick: exit %d\n%s", code, yaml)
	}
	data := filepath.Join(dir, "cephbench-data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	plan := writePlan(t, strings.ReplaceAll(yaml, "--duration 10s", "--duration 1s"))
	code, stdout, stderr = cephbenchIn(t, context.Background(), dir, nil, "run", plan, "-q", "--out", "results")
	if code != 0 {
		t.Fatalf("the printed quick plan: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := result.LoadManifest(filepath.Join(dir, "results"))
	if err != nil || len(m.Steps) != 5 || m.Steps[4].ID != "file-randread-4K #1" || m.Status != result.StepDone {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Errorf("the plan left %v", entries)
	}
}

func TestQuickPlanResumes(t *testing.T) {
	data, out := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "results")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	if code, stdout, _ := cephbench(t, ctx, "run", "--target", data, "--duration", "1s", "--out", out, "-q"); code != ExitInterrupted {
		t.Fatalf("exit %d; want %d\n%s", code, ExitInterrupted, stdout)
	}
	code, stdout, stderr := cephbench(t, context.Background(), "run", "--resume", out, "-q")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := result.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Plan != "quick" || m.Status != result.StepDone || len(m.Steps) != 5 || m.Steps[4].Status != result.StepDone {
		t.Errorf("after the resume: plan %s, %s, %d steps", m.Plan, m.Status, len(m.Steps))
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the resumed quick plan left its directory: %v", err)
	}
}
