package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/result"
)

// fioDirStats is one direction of a job in fio's JSON: what these tests
// compare.
type fioDirStats struct {
	IOs       int64   `json:"total_ios"`
	Bytes     int64   `json:"io_bytes"`
	RuntimeMs float64 `json:"runtime"`
}

// fioJSONJob is a job of fio's JSON output, as these tests read it.
type fioJSONJob struct {
	Name  string      `json:"jobname"`
	Error int         `json:"error"`
	Read  fioDirStats `json:"read"`
	Write fioDirStats `json:"write"`
}

// fioPair runs the job file job in fio 3.33 and in cephbench, each in a
// directory of its own (the job names its files relative to it), with
// --output-format=json, and returns each one's exit code, first job and
// stderr. It skips the test when fio is not installed.
func fioPair(t *testing.T, job string) (fio, cb fioRunOf) {
	t.Helper()
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio is not installed (scripts/install-deps.sh installs it): no reference to compare with")
	}
	run := func(dir string, cmd func(file string) (int, string, string)) fioRunOf {
		file := filepath.Join(dir, "job.fio")
		if err := os.WriteFile(file, []byte(strings.ReplaceAll(job, "DIR", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := cmd(file)
		var out struct{ Jobs []fioJSONJob }
		// fio prints a job's failure on stdout before its JSON.
		if i := strings.Index(stdout, "{"); i >= 0 {
			stdout = stdout[i:]
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Jobs) == 0 {
			t.Fatalf("exit %d, no JSON job (%v):\n%s\n%s", code, err, stdout, stderr)
		}
		return fioRunOf{code: code, job: out.Jobs[0], stderr: stderr}
	}
	fio = run(t.TempDir(), func(file string) (int, string, string) {
		cmd := exec.Command("fio", "--output-format=json", file)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(stdout), stderr.String()
	})
	cb = run(t.TempDir(), func(file string) (int, string, string) {
		return cephbench(t, context.Background(), "fio", "--output-format=json", file, "--results", filepath.Join(filepath.Dir(file), "results"))
	})
	return fio, cb
}

type fioRunOf struct {
	code   int
	job    fioJSONJob
	stderr string
}

// A mixed job paced per direction keeps each direction at its own rate,
// as fio does, whatever rwmixread says; the job is bounded by its size,
// so both do the same ops in all. How far a run lags its schedule is
// the machine's load, so the checks are on counts the schedules set:
// the split of ops (cephbench's; fio, another process, is starved on a
// loaded machine: its split is logged) and never ahead of the rate.
func TestFioRatesPerDirection(t *testing.T) {
	for _, c := range []struct {
		name, rates string
		read, write float64 // ops per second
	}{
		{"iops", "rate_iops=200,50", 200, 50},
		{"bytes", "rate=800k,200k", 200, 50},
		{"libaio", "rate_iops=200,50\nioengine=libaio\niodepth=8", 200, 50},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fio, cb := fioPair(t, "[mix]\nfilename=DIR/f\nsize=2m\nbs=4k\nrw=randrw\nrwmixread=70\nioengine=psync\n"+c.rates+"\n")
			for who, r := range map[string]fioRunOf{"fio": fio, "cephbench": cb} {
				j := r.job
				if r.code != 0 || j.Error != 0 {
					t.Fatalf("%s: exit %d, error %d: %s", who, r.code, j.Error, r.stderr)
				}
				if j.Read.IOs+j.Write.IOs != 512 || j.Read.Bytes+j.Write.Bytes != 2<<20 {
					t.Errorf("%s: %d+%d ops, %d+%d bytes; want 512 ops of 4k in all", who, j.Read.IOs, j.Write.IOs, j.Read.Bytes, j.Write.Bytes)
				}
				ratio := float64(j.Read.IOs) / float64(max(j.Write.IOs, 1))
				if who == "cephbench" && (ratio < 2.5 || ratio > 6) {
					t.Errorf("%s: %d reads to %d writes; want about 4 to 1, the rates' ratio", who, j.Read.IOs, j.Write.IOs)
				}
				for _, d := range []struct {
					name string
					s    fioDirStats
					rate float64
				}{{"reads", j.Read, c.read}, {"writes", j.Write, c.write}} {
					secs := d.s.RuntimeMs / 1000
					got := float64(d.s.IOs)
					if got > d.rate*secs+2 {
						t.Errorf("%s: %.0f %s in %.2fs at %g/s", who, got, d.name, secs, d.rate)
					}
				}
			}
			t.Logf("fio %d reads, %d writes in %.0fms; cephbench %d, %d in %.0fms",
				fio.job.Read.IOs, fio.job.Write.IOs, fio.job.Read.RuntimeMs, cb.job.Read.IOs, cb.job.Write.IOs, cb.job.Read.RuntimeMs)
		})
	}
}

// With one side's rate empty, that side is unpaced: fio and cephbench
// then issue the paced direction at its rate and the other in between,
// so a 50/50 mix ends up mostly writes; the reads never run ahead of
// their rate. How far behind it they fall, and how many writes fit
// between them, are the machine's: cephbench's writes are only held to
// outnumber its reads twice (paced like the reads, a 50/50 mix would
// split evenly).
func TestFioRateOneSideEmpty(t *testing.T) {
	fio, cb := fioPair(t, "[mix]\nfilename=DIR/f\nsize=1m\nbs=4k\nrw=randrw\nioengine=psync\nrate_iops=20,\ntime_based\nruntime=1\n")
	for who, r := range map[string]fioRunOf{"fio": fio, "cephbench": cb} {
		j := r.job
		secs := max(j.Read.RuntimeMs, j.Write.RuntimeMs) / 1000
		reads := float64(j.Read.IOs)
		paced := who == "fio" || j.Read.IOs > 0 && j.Write.IOs > 2*j.Read.IOs
		if r.code != 0 || reads > 20*secs+2 || !paced {
			t.Errorf("%s: exit %d, %d reads and %d writes in %.2fs; want reads at most 20/s, writes unpaced", who, r.code, j.Read.IOs, j.Write.IOs, secs)
		}
		t.Logf("%s: %d reads, %d writes in %.2fs", who, j.Read.IOs, j.Write.IOs, secs)
	}
}

// rate_process=poisson keeps the rate on average: a size-bounded job
// takes about as long as fio's. rate_ignore_thinktime and a floor the
// job meets change nothing.
func TestFioRatePoisson(t *testing.T) {
	fio, cb := fioPair(t, "[p]\nfilename=DIR/f\nsize=1m\nbs=4k\nrw=randread\nioengine=psync\nrate_iops=400\nrate_process=poisson\n"+
		"rate_ignore_thinktime=1\nrate_iops_min=1\nrate_cycle=200\n")
	for who, r := range map[string]fioRunOf{"fio": fio, "cephbench": cb} {
		// 256 ops at 400/s: 0.64s on average, 40ms of spread.
		if j := r.job; r.code != 0 || j.Read.IOs != 256 || j.Read.RuntimeMs < 450 {
			t.Errorf("%s: exit %d, %d reads in %.0fms; want 256 in about 640ms", who, r.code, j.Read.IOs, j.Read.RuntimeMs)
		}
	}
}

// A job that cannot meet its minimum rate fails as fio's does: the
// same line on stderr, error 5 in its JSON, exit code 1; and the
// cephbench result records why.
func TestFioRateMinFails(t *testing.T) {
	for _, c := range []struct{ name, option, line string }{
		{"iops", "rate_iops_min=100000000", `(?m)^slow: rate_iops_min=100000000 not met, got \d+ IOPS$`},
		{"bytes", "ratemin=1000g", `(?m)^slow: rate_min=1073741824000B/s not met, got \d+B/s$`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// fio allows two seconds to settle, then checks each 100ms.
			// The run is long so that a failure at its end, not at a
			// check, shows on a loaded machine too; a passing run ends
			// at the first check.
			fio, cb := fioPair(t, "[slow]\nfilename=DIR/f\nsize=1m\nbs=4k\nrw=randread\nioengine=psync\ntime_based\nruntime=60\nratecycle=100\n"+c.option+"\n")
			line := regexp.MustCompile(c.line)
			for who, r := range map[string]fioRunOf{"fio": fio, "cephbench": cb} {
				if r.code != 1 || r.job.Error != 5 || !line.MatchString(r.stderr) {
					t.Errorf("%s: exit %d, error %d, stderr:\n%s\nwant exit 1, error 5 and a line matching %s", who, r.code, r.job.Error, r.stderr, c.line)
				}
				if ms := r.job.Read.RuntimeMs; ms < 2000 || ms > 50000 {
					t.Errorf("%s: failed after %.0fms; want 2s to settle, then a failure at a check well before the 60 s run's end", who, ms)
				}
			}
			if !strings.Contains(cb.stderr, "cephbench: slow: reads fell below their minimum rate") {
				t.Errorf("cephbench's own error is missing:\n%s", cb.stderr)
			}
		})
	}
}

// The result a failed job saves says which direction fell short.
func TestRateMinRecordedInResult(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := cephbench(t, context.Background(), "bench", "--target", "null://", "--rw", "write", "--rate-min", ",1e15",
		"--rate-cycle", "100ms", "--duration", "3s", "-q", "-o", filepath.Join(dir, "r.json"))
	if code != ExitFailure || !strings.Contains(stderr, "writes fell below their minimum rate") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	r, err := result.Load(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s := r.BelowMinRate; r.StopReason != result.StopMinRate || s == nil || s.Kind != "write" || s.Min != 1e15 || s.CycleSeconds != 0.1 {
		t.Errorf("stop %q, shortfall %+v", r.StopReason, s)
	}
}

// bench takes rates per direction too: --rate 200,50 on a mix splits a
// bounded run's ops about 4 to 1, whatever --rwmixread says.
func TestBenchRatePerDirection(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := cephbench(t, context.Background(), "bench", "--target", "null://", "--rw", "randrw", "--rwmixread", "30",
		"--rate", "200,50", "--ops", "250", "-q", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	reads, writes := r.Ops["read"].Ops, r.Ops["write"].Ops
	if ratio := float64(reads) / float64(max(writes, 1)); reads+writes != 250 || ratio < 2.5 || ratio > 6 {
		t.Errorf("%d reads, %d writes; want 250 ops about 4 to 1", reads, writes)
	}
	if r.Spec.ReadRate.IOPS != 200 || r.Spec.WriteRate.IOPS != 50 || r.Spec.RateIOPS != 0 {
		t.Errorf("spec's rates: %+v %+v total %g", r.Spec.ReadRate, r.Spec.WriteRate, r.Spec.RateIOPS)
	}
}

// A plan's workload takes bench's flags, so rates per direction too.
func TestPlanRatePerDirection(t *testing.T) {
	plan := writePlan(t, `
name: rates
targets:
  - {name: mem, target: "null://"}
steps:
  - name: paced
    workload: {rw: randrw, rate: "200,50", ops: 250}
`)
	out := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := cephbench(t, context.Background(), "run", plan, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := result.LoadManifest(out)
	if err != nil || len(m.Steps) != 1 || len(m.Steps[0].Results) != 1 {
		t.Fatalf("manifest: %v, %+v", err, m)
	}
	r, err := result.Load(filepath.Join(out, m.Steps[0].Results[0]))
	if err != nil {
		t.Fatal(err)
	}
	reads, writes := r.Ops["read"].Ops, r.Ops["write"].Ops
	if ratio := float64(reads) / float64(max(writes, 1)); r.Spec.ReadRate.IOPS != 200 || r.Spec.WriteRate.IOPS != 50 || reads+writes != 250 || ratio < 2.5 || ratio > 6 {
		t.Errorf("rates %+v %+v, %d reads, %d writes; want 250 ops about 4 to 1", r.Spec.ReadRate, r.Spec.WriteRate, reads, writes)
	}
}
