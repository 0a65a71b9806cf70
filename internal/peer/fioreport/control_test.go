package fioreport

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/steady"
)

// A job that went on after errors (continue_on_error) and ended on a
// steady-state criterion: fio's errors line and steadystate line in the
// normal output, total_err, first_error and the steadystate block in
// JSON, the two error fields at the end of a terse line; the job's error
// is its first, as fio reports it then.
func TestErrorsAndSteadyStateAsFioPrintsThem(t *testing.T) {
	shared, _ := results(t)
	copied := *shared // the fixture is every test's
	res := &copied
	res.Errors = map[string]int64{"verify": 2, "EIO": 1}
	res.FirstError = "verify"
	res.SteadyState = &steady.State{
		Criterion: spec.SteadyState{Metric: "iops", Limit: 5, Percent: true, Window: spec.Duration(2 * time.Second)},
		Attained:  true, Value: 1.25, MaxDeviation: 25,
		IOPS: []uint64{1975, 2025}, BW: []uint64{1975 * 4096, 2025 * 4096},
	}
	r := randrwReport(res)
	r.Groups[0].Jobs[0].ContinueOnError = true
	reads := res.Ops["read"].Ops + 2 // the two that failed verification

	normal := render(t, r.WriteNormal)
	for _, want := range []string{
		"Rand_Read_Write_Test: (groupid=0, jobs=1): err=84 (Invalid or incomplete multibyte or wide character): ",
		"     errors    : total=3, first_error=84/<Invalid or incomplete multibyte or wide character>\n     latency   :",
		"  steadystate  : attained=yes, bw=8000KiB/s (8000kB/s), iops=2000, iops mean dev=1.250%\n",
	} {
		if !strings.Contains(normal, want) {
			t.Errorf("no %q in\n%s", want, normal)
		}
	}
	if !strings.Contains(normal, "issued rwts: total="+itoa(reads)+",") {
		t.Errorf("issued reads are not %d (the verify failures too):\n%s", reads, normal)
	}

	js := render(t, r.WriteJSON)
	for _, want := range []string{
		`"error" : 84,`, `"total_ios" : ` + itoa(reads) + ",", `"total_err" : 3,` + "\n      " + `"first_error" : 84,`,
		`"steadystate" : {
        "ss" : "iops:5.000000%",
        "duration" : 2,
        "attained" : 1,
        "criterion" : "1.250000%",
        "max_deviation" : 25.000000,
        "slope" : 0.000000,
        "data" : {
          "bw_mean" : 8192000,
          "iops_mean" : 2000,
          "iops" : [
            1975,
            2025
          ],
          "bw" : [`,
	} {
		if !strings.Contains(js, want) {
			t.Errorf("no %q in\n%s", want, js)
		}
	}

	terse := strings.TrimSuffix(render(t, r.WriteTerse), "\n")
	if !strings.HasSuffix(terse, ";3;84") || !strings.HasPrefix(terse, "3;cephbench-test;Rand_Read_Write_Test;0;84;") {
		t.Errorf("terse line %q; want error 84 and ;3;84 at its end", terse)
	}

	// Without continue_on_error, a job that ended at its error reports
	// it, and nothing of counts.
	r.Groups[0].Jobs[0].ContinueOnError = false
	res.StopReason, res.Errors, res.FirstError = result.StopError, map[string]int64{"EIO": 1}, "EIO"
	if out := render(t, r.WriteNormal); !strings.Contains(out, "err= 5 (Input/output error): ") || strings.Contains(out, "errors    :") {
		t.Errorf("a job ended by EIO:\n%s", out)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
