package frontend

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// timedFioStep is fioStep bounded by time instead of ops.
func timedFioStep(dir, name string, d time.Duration, f step.Fio) step.Step {
	st := fioStep(dir, name, 0, f)
	st.Workload.TotalOps, st.Workload.Duration = 0, spec.Duration(d)
	return st
}

// exit_what says which jobs a job's end ends: its group's (fio's
// default), those running with it, or those and every later one.
func TestFioExitWhat(t *testing.T) {
	for _, c := range []struct {
		what string
		// the long job's group (new_group: another group that runs with
		// the short job), whether it is cut short, and whether the job
		// after the stonewall runs.
		longGroup int
		longCut   bool
		laterRuns bool
	}{
		{"group", 0, true, true},
		{"group", 1, false, true},
		{"stonewall", 1, true, true},
		{"all", 1, true, false},
	} {
		dir := t.TempDir()
		// A long job to be cut short runs a minute, so that however
		// slowly the short one runs on a loaded machine, it ends first.
		length := 1500 * time.Millisecond
		if c.longCut {
			length = time.Minute
		}
		j := Job{Command: "fio", Fio: &FioOptions{OutputFormats: []string{"json"}, Results: dir}, Steps: []step.Step{
			fioStep(dir, "short", 1000, step.Fio{ExitAll: true, ExitWhat: c.what}),
			timedFioStep(dir, "long", length, step.Fio{ExitAll: true, ExitWhat: c.what, Group: c.longGroup}),
			fioStep(dir, "later", 1000, step.Fio{Stonewall: true, Group: c.longGroup + 1, ExitAll: true, ExitWhat: c.what}),
		}}
		var stdout strings.Builder
		if err := Run(context.Background(), j, IO{Stdout: &stdout}); err != nil {
			t.Fatal(err)
		}
		long, err := result.Load(j.Steps[1].Save)
		if err != nil {
			t.Fatal(err)
		}
		if cut := long.StopReason == result.StopTerminated; cut != c.longCut || cut && long.ElapsedSeconds > 30 {
			t.Errorf("exit_what=%s, long job in group %d: stopped %q after %.2f s; want cut short %v",
				c.what, c.longGroup, long.StopReason, long.ElapsedSeconds, c.longCut)
		}
		if _, err := result.Load(j.Steps[2].Save); (err == nil) != c.laterRuns {
			t.Errorf("exit_what=%s: the job after the stonewall ran: %v; want %v", c.what, err == nil, c.laterRuns)
		}
	}
}

// exitall_on_error ends the group's other jobs when a job fails, and
// only then.
func TestFioExitAllOnError(t *testing.T) {
	dir := t.TempDir()
	bad := fioStep(dir, "bad", 1000, step.Fio{ExitAllOnError: true})
	bad.Workload.Target = spec.Target{Scheme: "file", Location: dir + "/no/such/dir/file"}
	bad.Workload.FileSize = 1 << 20
	j := Job{Command: "fio", Fio: &FioOptions{OutputFormats: []string{"json"}, Results: dir}, Steps: []step.Step{
		bad,
		timedFioStep(dir, "long", time.Minute, step.Fio{}),
	}}
	if err := Run(context.Background(), j, IO{Stdout: &strings.Builder{}}); err == nil {
		t.Fatal("a job on a missing folder did not fail")
	}
	long, err := result.Load(j.Steps[1].Save)
	if err != nil {
		t.Fatal(err)
	}
	if long.StopReason != result.StopTerminated || long.ElapsedSeconds > 30 {
		t.Errorf("the other job stopped %q after %.2f s; want cut short by the failure", long.StopReason, long.ElapsedSeconds)
	}
}
