package frontend

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	_ "github.com/cephbench/cephbench/engine/null"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// fioStep is a fio job of ops reads on the null engine, saved in dir.
func fioStep(dir, name string, ops int64, f step.Fio) step.Step {
	f.NumJobs, f.RW, f.IOEngine, f.IODepth = 1, "randread", "null", 1
	return step.Step{
		Name: name, Save: filepath.Join(dir, name+".json"),
		Workload: spec.Workload{
			Name: name, Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 100,
			BlockSize: 4096, Workers: 1, QueueDepth: 1, TotalOps: ops,
		},
		Front: step.Front{Command: "fio", Fio: &f},
	}
}

// A job with a start delay starts that much after the jobs it runs
// with; a stonewall waits for every job before it; each group gets its
// "Run status group" paragraph and every job its saved result.
func TestFioStartDelayAndStonewallOrderTheJobs(t *testing.T) {
	dir := t.TempDir()
	const delay = 300 * time.Millisecond
	j := Job{Command: "fio", Fio: &FioOptions{OutputFormats: []string{"normal"}, Results: dir}, Steps: []step.Step{
		fioStep(dir, "first", 1000, step.Fio{}),
		fioStep(dir, "delayed", 1000, step.Fio{StartDelay: spec.Duration(delay)}),
		fioStep(dir, "after", 1000, step.Fio{Stonewall: true, Group: 1}),
	}}
	var stdout, stderr strings.Builder
	began := time.Now()
	if err := Run(context.Background(), j, IO{Stdout: &stdout, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	rs := map[string]*result.Result{}
	for _, st := range j.Steps {
		r, err := result.Load(st.Save)
		if err != nil {
			t.Fatal(err)
		}
		rs[st.Name] = r
	}
	if d := rs["delayed"].Start.Sub(began); d < delay || !rs["first"].Start.Before(rs["delayed"].Start) {
		t.Errorf("the delayed job started %v in, the first %v; want the first, then the delayed one %v in or later",
			d, rs["first"].Start.Sub(began), delay)
	}
	if rs["after"].Start.Before(rs["delayed"].End) {
		t.Errorf("the stonewalled job started at %v, before the delayed one ended at %v", rs["after"].Start, rs["delayed"].End)
	}
	for _, want := range []string{"Run status group 0 (all jobs):", "Run status group 1 (all jobs):", "after: (groupid=1, jobs=1): err= 0:"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("fio's output lacks %q:\n%s", want, stdout.String())
		}
	}
	if want := fmt.Sprintf("cephbench: 3 results saved in %s\n", dir); stderr.String() != want {
		t.Errorf("stderr %q; want %q", stderr.String(), want)
	}
}

// An --output file that cannot be created is bad input: nothing runs.
func TestFioOutputThatCannotBeCreatedIsAUsageError(t *testing.T) {
	dir := t.TempDir()
	j := Job{Command: "fio", Steps: []step.Step{fioStep(dir, "j", 1000, step.Fio{})}, Fio: &FioOptions{
		OutputFormats: []string{"normal"}, Output: filepath.Join(dir, "no", "such", "out.txt"), Results: dir,
	}}
	var stdout strings.Builder
	err := Run(context.Background(), j, IO{Stdout: &stdout})
	if !engine.IsUsage(err) || !strings.HasPrefix(err.Error(), "--output: ") {
		t.Errorf("%v; want a usage error naming --output", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 || stdout.Len() != 0 {
		t.Errorf("a refused job left %v and printed %q", entries, stdout.String())
	}
}

// A fio job takes as long as its stretches between stonewalls, each as
// long as its longest job, ramp and start delay included.
func TestFioEstimateAddsTheStretchesBetweenStonewalls(t *testing.T) {
	timed := func(d, ramp, delay time.Duration, stonewall bool) step.Step {
		return step.Step{
			Workload: spec.Workload{Duration: spec.Duration(d), Ramp: spec.Duration(ramp)},
			Front:    step.Front{Command: "fio", Fio: &step.Fio{StartDelay: spec.Duration(delay), Stonewall: stonewall}},
		}
	}
	j := Job{Command: "fio", Fio: &FioOptions{}, Steps: []step.Step{
		timed(10*time.Second, 0, 0, false),
		timed(5*time.Second, 2*time.Second, 5*time.Second, false), // 12 s: the stretch's longest
		timed(3*time.Second, 0, 0, true),
		timed(time.Second, time.Second, 0, false),
	}}
	if d, exact := Estimate(j); d != 15*time.Second || !exact {
		t.Errorf("estimate %v (exact %v); want 12 s + 3 s, exactly", d, exact)
	}
}

// A fio job handed over without its fio options (a hand-written or
// truncated JSON job) is refused before it runs, not half run.
func TestFioJobWithoutItsOptionsIsAUsageError(t *testing.T) {
	dir := t.TempDir()
	withOptions := fioStep(dir, "j", 1000, step.Fio{})
	without := withOptions
	without.Front.Fio = nil
	for name, j := range map[string]Job{
		"the job's": {Command: "fio", Steps: []step.Step{withOptions}},
		"a step's":  {Command: "fio", Steps: []step.Step{withOptions, without}, Fio: &FioOptions{Results: dir}},
	} {
		if err := Run(context.Background(), j, IO{}); !engine.IsUsage(err) {
			t.Errorf("without %s fio options: %v; want a usage error", name, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused job left %v", entries)
	}
}
