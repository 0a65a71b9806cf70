package fiojob

import (
	"testing"
	"time"

	"github.com/cephbench/cephbench/spec"
)

// The run-control options become the workload's (StopOnError,
// SteadyState, think time) and the job's (exitall), as fio means them.
func TestRunControlOptions(t *testing.T) {
	plan := mustParse(t, []string{"c.fio"}, files{"c.fio": `[global]
ioengine=null
size=1m
[plain]
[goes-on]
continue_on_error=read
exitall_on_error
exit_what=stonewall
ss=bw_slope:2m
ss_dur=30
ss_ramp=5s
[thinks]
kb_base=1000
continue_on_error=1
ss_dur=10
thinktime=50
thinktime_blocks=8
thinktime_spin=20
[last]
exitall
`}, nil)
	plain, goes, thinks := jobNamed(t, plan, "plain"), jobNamed(t, plan, "goes-on"), jobNamed(t, plan, "thinks")
	if w := plain.Workload; w.StopOnError != "all" || w.SteadyState != nil || w.ThinkTime != 0 || plain.ContinueOnError != "none" {
		t.Errorf("fio's defaults: stop on %q, steady state %v, think %v, continue_on_error %q; want all, none, none, none",
			w.StopOnError, w.SteadyState, w.ThinkTime, plain.ContinueOnError)
	}
	if w := goes.Workload; w.StopOnError != "write,verify" || goes.ContinueOnError != "read" || !goes.ExitAllOnError || goes.ExitWhat != "stonewall" {
		t.Errorf("continue_on_error=read: stop on %q (%q), exitall_on_error %v, exit_what %q", w.StopOnError, goes.ContinueOnError, goes.ExitAllOnError, goes.ExitWhat)
	}
	want := spec.SteadyState{Metric: "bw", Slope: true, Limit: 2 << 20, Window: spec.Duration(30 * time.Second), Ramp: spec.Duration(5 * time.Second)}
	if ss := goes.Workload.SteadyState; ss == nil || *ss != want {
		t.Errorf("steady state %+v; want %+v", ss, want)
	}
	// ss_dur alone judges by fio's default criterion, iops_slope:0.01%;
	// thinktime is in microseconds.
	want = spec.SteadyState{Metric: "iops", Slope: true, Limit: 0.01, Percent: true, Window: spec.Duration(10 * time.Second)}
	if w := thinks.Workload; w.SteadyState == nil || *w.SteadyState != want || w.StopOnError != "" || thinks.ContinueOnError != "all" ||
		w.ThinkTime != spec.Duration(50*time.Microsecond) || w.ThinkSpin != spec.Duration(20*time.Microsecond) || w.ThinkEvery != 8 {
		t.Errorf("workload %+v (steady state %+v); want fio's default criterion over 10 s, going on after every error, 50us of thought every 8 ops, 20us of it spinning", w, w.SteadyState)
	}
	// exitall is one switch for every job, as in fio.
	for _, j := range plan.Jobs {
		if !j.ExitAll || (j.Name != "goes-on") != (j.ExitWhat == "group") {
			t.Errorf("%s: exitall %v, exit_what %q; want on, group unless set", j.Name, j.ExitAll, j.ExitWhat)
		}
	}
}

func TestRunControlBadInput(t *testing.T) {
	base := []string{"--name=j", "--ioengine=null", "--size=1m"}
	for opt, want := range map[string]string{
		"--continue_on_error=sometimes": "want none, read, write, io, verify or all",
		"--exit_what=everyone":          "want group, stonewall or all",
		"--ss=lat:5%":                   "want iops, iops_slope, bw or bw_slope",
		"--ss=iops":                     "no limit",
		"--ss_dur=1500ms":               "whole number of seconds",
		"--thinktime_spin=2ms":          "thinktime_spin=2ms is longer than thinktime=1ms",
	} {
		args := append(append([]string{}, base...), opt)
		if opt == "--ss_dur=1500ms" || opt == "--thinktime_spin=2ms" {
			args = append(args, "--thinktime=1ms")
		}
		wantContains(t, parseErr(t, args, nil, nil), want)
	}
}
