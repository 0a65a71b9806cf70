package fiojob

import (
	"strings"
	"testing"

	"github.com/cephbench/cephbench/internal/peer/fiolog"
)

// Log options in [global] apply to every job; a log given without a name
// takes the job's, as fio names its files; per_job_logs is on unless
// turned off.
func TestLogOptions(t *testing.T) {
	plan := mustParse(t, []string{"jobs.fio"}, files{"jobs.fio": `[global]
ioengine=null
size=1m
write_bw_log
log_avg_msec=500
[a]
write_lat_log=lat
write_hist_log=h
log_hist_msec=100
log_hist_coarseness=3
log_offset=1
[b]
per_job_logs=0
log_max_value=1
log_prio=1
`}, nil)
	a, b := plan.Jobs[0].Logs, plan.Jobs[1].Logs
	wantA := fiolog.Options{BW: "a", Lat: "lat", Hist: "h", AvgMsec: 500, HistMsec: 100, HistCoarseness: 3, PerJob: true, Offset: true}
	wantB := fiolog.Options{BW: "b", AvgMsec: 500, MaxValue: true, Prio: true}
	if a == nil || *a != wantA || b == nil || *b != wantB {
		t.Errorf("logs %+v and %+v; want %+v and %+v", a, b, wantA, wantB)
	}
	if plain := mustParse(t, strings.Fields("--name=c --ioengine=null --size=1m --log_avg_msec=10"), nil, nil); plain.Jobs[0].Logs != nil {
		t.Errorf("a job writing no log has logs %+v", plain.Jobs[0].Logs)
	}
}

func TestLogOptionsOutOfRange(t *testing.T) {
	for _, arg := range []string{"--log_hist_coarseness=7", "--log_avg_msec=-1", "--log_hist_msec=1x"} {
		msg := parseErr(t, []string{"--name=c", "--ioengine=null", "--size=1m", "--write_hist_log=h", arg}, nil, nil)
		if name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "="); !strings.Contains(msg, name) {
			t.Errorf("%s: %q does not name the option", arg, msg)
		}
	}
}
