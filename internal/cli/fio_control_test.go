package cli

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/workload"
)

// controlJob is what these tests read of a job in fio's JSON.
type controlJob struct {
	Name        string         `json:"jobname"`
	Group       int            `json:"groupid"`
	Error       int            `json:"error"`
	Runtime     int64          `json:"job_runtime"`
	TotalErr    *int64         `json:"total_err"`
	FirstError  *int           `json:"first_error"`
	Read        dirCounts      `json:"read"`
	Write       dirCounts      `json:"write"`
	SteadyState map[string]any `json:"steadystate"`
}

// dirCounts is what these tests read of one direction of a job.
type dirCounts struct {
	IOs   int64 `json:"total_ios"`
	Bytes int64 `json:"io_bytes"`
}

// fioJSON decodes fio's JSON output, after the lines fio prints before it
// when a job fails.
func fioJSON(t *testing.T, who, out string) []controlJob {
	t.Helper()
	at := strings.Index(out, "{\n")
	if at < 0 {
		t.Fatalf("%s printed no JSON:\n%s", who, out)
	}
	var doc struct {
		Jobs []controlJob `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out[at:]), &doc); err != nil {
		t.Fatalf("%s's JSON: %v\n%s", who, err, out)
	}
	return doc.Jobs
}

// fioControlJobs runs fio 3.33 in dir with args and --output-format=json, and
// returns its jobs and exit code; the test is skipped without fio.
func fioControlJobs(t *testing.T, dir string, args ...string) ([]controlJob, int) {
	t.Helper()
	out, _, code := runFio(t, dir, append(args, "--output-format=json")...)
	return fioJSON(t, "fio", out), code
}

// ourFio runs cephbench fio in dir like fioControlJobs.
func ourFio(t *testing.T, dir string, args ...string) ([]controlJob, int) {
	t.Helper()
	code, stdout, stderr := cephbenchIn(t, context.Background(), dir, nil,
		append(append([]string{"fio"}, args...), "--output-format=json", "--results", t.TempDir())...)
	if code == ExitUsage {
		t.Fatalf("cephbench fio %s: %s", strings.Join(args, " "), stderr)
	}
	return fioJSON(t, "cephbench fio", stdout), code
}

func writeJobFile(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "job.fio"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// With exitall, the short job's end ends the long one: in fio and in
// cephbench, the long job's run time is about the short one's, far from
// its own 30 s (so that a loaded machine's slow exit cannot pass for it).
func TestFioExitAllEndsTheOtherJobs(t *testing.T) {
	dir := t.TempDir()
	writeJobFile(t, dir, `[global]
ioengine=null
rw=read
size=64m
time_based
exitall
[short]
runtime=500ms
[long]
runtime=30s
`)
	// cephbench first: a hung fio skips the rest of the test.
	for _, run := range []func(*testing.T, string, ...string) ([]controlJob, int){ourFio, fioControlJobs} {
		jobs, code := run(t, dir, "job.fio")
		if code != 0 || len(jobs) != 2 {
			t.Fatalf("exit %d, %d jobs; want 0 and 2", code, len(jobs))
		}
		short, long := jobs[0], jobs[1]
		if long.Runtime >= 20000 || short.Runtime < 400 {
			t.Errorf("short ran %d ms, long %d ms; want the long one ended with the short one, not after its 30 s", short.Runtime, long.Runtime)
		}
	}
}

// Stonewalls and new_group number the groups as fio does, with numjobs
// clones in a group; cephbench runs each stonewall's jobs after those
// before it have ended, and new_group's with the jobs before it.
func TestFioStonewallGroups(t *testing.T) {
	dir := t.TempDir()
	writeJobFile(t, dir, `[global]
ioengine=null
rw=randread
size=4m
time_based
runtime=300ms
[a]
numjobs=2
[b]
stonewall
[c]
new_group
[d]
stonewall
numjobs=3
[e]
wait_for_previous
[f]
`)
	groups := func(jobs []controlJob) map[string]int {
		m := map[string]int{}
		for _, j := range jobs {
			m[j.Name] = j.Group
		}
		return m
	}
	theirs, _ := fioControlJobs(t, dir, "job.fio")
	want := groups(theirs)
	stdout, rs := fioIn(t, dir, nil, "job.fio", "--output-format=json")
	got := groups(fioJSON(t, "cephbench fio", stdout))
	if len(want) != 6 || !maps.Equal(got, want) {
		t.Errorf("groups %v; fio's %v", got, want)
	}
	byName := map[string]int{}
	for i, r := range rs {
		byName[r.Name] = i
	}
	before := func(x, y string) bool { return !rs[byName[y]].Start.Before(rs[byName[x]].End) }
	for _, p := range [][2]string{{"a", "b"}, {"a", "c"}, {"c", "d"}, {"b", "d"}, {"d", "e"}, {"d", "f"}} {
		if !before(p[0], p[1]) {
			t.Errorf("%s started before %s ended", p[1], p[0])
		}
	}
	for _, p := range [][2]string{{"b", "c"}, {"e", "f"}} {
		if rs[byName[p[1]]].Start.After(rs[byName[p[0]]].End) {
			t.Errorf("%s (without stonewall) waited for %s", p[1], p[0])
		}
	}
}

// corrupt zeroes blocks of 4 KiB of the file at path.
func corrupt(t *testing.T, path string, blocks ...int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, b := range blocks {
		if _, err := f.WriteAt(make([]byte, 4096), b*4096); err != nil {
			t.Fatal(err)
		}
	}
}

// Two bad blocks in a file read with verify: with continue_on_error the
// job counts both (total_err, first_error EILSEQ) and reads the whole
// file; without, it ends at the first with error 84 and exit status 1.
// Each reads a file of its own data: fio's written by fio, cephbench's
// with cephbench's headers.
func TestFioContinueOnErrorCountsVerifyFailures(t *testing.T) {
	dir := t.TempDir()
	theirs, ours := filepath.Join(dir, "fio.dat"), filepath.Join(dir, "cb.dat")
	if _, code := fioControlJobs(t, dir, "--name=fill", "--filename="+theirs, "--size=1m", "--bs=4k", "--rw=write", "--verify=crc32c"); code != 0 {
		t.Fatalf("fio's fill: exit %d", code)
	}
	buf := make([]byte, 1<<20)
	for off := int64(0); off < int64(len(buf)); off += 4096 {
		b := buf[off : off+4096]
		workload.Fill(b)
		workload.StampBlock(b, 0, off)
	}
	if err := os.WriteFile(ours, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	corrupt(t, theirs, 10, 20)
	corrupt(t, ours, 10, 20)

	read := func(file string, extra ...string) []string {
		return append([]string{"--name=check", "--filename=" + file, "--size=1m", "--bs=4k", "--rw=read", "--verify=crc32c"}, extra...)
	}
	for _, c := range []struct {
		run  func(*testing.T, string, ...string) ([]controlJob, int)
		file string
		fio  bool
	}{{fioControlJobs, theirs, true}, {ourFio, ours, false}} {
		jobs, code := c.run(t, dir, read(c.file, "--continue_on_error=verify")...)
		j := jobs[0]
		if code != 0 || j.TotalErr == nil || *j.TotalErr != 2 || *j.FirstError != 84 || j.Error != 84 || j.Read.IOs != 256 || j.Read.Bytes != 1<<20 {
			t.Errorf("%s with continue_on_error=verify: exit %d, %+v; want exit 0, total_err 2, first_error 84, error 84, 256 reads of 1 MiB", c.file, code, j)
		}
		// The normal output's errors line, as fio prints it.
		line := "     errors    : total=2, first_error=84/<Invalid or incomplete multibyte or wide character>\n"
		if out := normalOutput(t, c.fio, dir, read(c.file, "--continue_on_error=verify")...); !strings.Contains(out, line) {
			t.Errorf("%s: no %q in\n%s", c.file, line, out)
		}
		jobs, code = c.run(t, dir, read(c.file)...)
		j = jobs[0]
		if code != 1 || j.TotalErr != nil || j.Error != 84 || j.Read.IOs != 11 {
			t.Errorf("%s without continue_on_error: exit %d, %+v; want exit 1, error 84, 11 reads (the bad one too), no total_err", c.file, code, j)
		}
	}
}

// normalOutput is fio's (if fio) or cephbench fio's normal output of a
// run of args in dir.
func normalOutput(t *testing.T, fio bool, dir string, args ...string) string {
	t.Helper()
	args = append(args, "--output-format=normal")
	if fio {
		cmd := exec.Command("fio", args...)
		cmd.Dir = dir
		out, _ := cmd.Output()
		return string(out)
	}
	_, stdout, _ := cephbenchIn(t, context.Background(), dir, nil, append(append([]string{"fio"}, args...), "--results", t.TempDir())...)
	return stdout
}

// keysOf lists the keys of a JSON object and of the objects in it, as
// paths.
func keysOf(prefix string, m map[string]any) []string {
	var keys []string
	for k, v := range m {
		keys = append(keys, prefix+k)
		if sub, ok := v.(map[string]any); ok {
			keys = append(keys, keysOf(prefix+k+".", sub)...)
		}
	}
	sort.Strings(keys)
	return keys
}

// A steady-state criterion a null target's rate meets ends the job before
// its runtime (two samples are always within 100% of their mean, unless
// one is zero), and the JSON's "steadystate" block has fio's keys,
// criterion and window, and says it was attained. The runtime is far
// beyond the 2 s window, so that a loaded machine's slow first second,
// which can put off the judgement by a second or two, still ends the job
// well before it.
func TestFioSteadyStateEndsTheJob(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--name=ss", "--ioengine=null", "--rw=read", "--size=1g", "--bs=4k", "--time_based", "--runtime=30s",
		"--ss=iops:100%", "--ss_dur=2"}
	theirs, _ := fioControlJobs(t, dir, args...)
	ours, code := ourFio(t, dir, args...)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	f, c := theirs[0].SteadyState, ours[0].SteadyState
	if f == nil || c == nil {
		t.Fatalf("steadystate blocks: fio's %v, cephbench's %v", f, c)
	}
	if k, want := keysOf("", c), keysOf("", f); !slices.Equal(k, want) {
		t.Errorf("steadystate keys %v; fio's %v", k, want)
	}
	for _, key := range []string{"ss", "duration", "attained"} {
		if c[key] != f[key] {
			t.Errorf("%s: %v; fio's %v", key, c[key], f[key])
		}
	}
	if c["attained"] != 1.0 || ours[0].Runtime > 29000 || theirs[0].Runtime > 29000 {
		t.Errorf("attained %v after %d ms (fio %d ms); want attained, ended before the 30 s runtime", c["attained"], ours[0].Runtime, theirs[0].Runtime)
	}
}

// bench takes a steady-state criterion too: the run ends when it holds,
// and the result says so and keeps the window's samples.
func TestBenchSteadyState(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	code, _, stderr := cephbenchIn(t, context.Background(), dir, nil, "bench", "--target", "null://", "--duration", "5s", "-q",
		"--steady-state", "iops:100%", "--steady-window", "2s", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if ss := r.SteadyState; r.StopReason != result.StopSteady || ss == nil || !ss.Attained || len(ss.IOPS) != 2 || r.ElapsedSeconds > 4.5 {
		t.Errorf("stop %q after %.1f s, steady state %+v; want attained over 2 samples, before the 5 s", r.StopReason, r.ElapsedSeconds, ss)
	}
	code, _, stderr = cephbenchIn(t, context.Background(), dir, nil, "bench", "--target", "null://", "--steady-state", "iops:5%", "--steady-window", "1500ms")
	wantUsageError(t, "a window of 1.5 s", code, "", stderr)
}

// thinktime pauses after every thinktime_blocks ops: the same ops as
// fio, in at least the pauses' time (32 of 2 ms). (On fio's null engine
// thinktime_spin takes fio seconds per op: a file it is.)
func TestFioThinkTime(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--name=think", "--filename=" + filepath.Join(dir, "f"), "--rw=randread", "--size=1m", "--bs=4k",
		"--thinktime=2ms", "--thinktime_blocks=8", "--thinktime_spin=500"}
	// cephbench first: a hung fio skips the rest of the test.
	for _, run := range []func(*testing.T, string, ...string) ([]controlJob, int){ourFio, fioControlJobs} {
		jobs, code := run(t, dir, args...)
		if j := jobs[0]; code != 0 || j.Read.IOs != 256 || j.Runtime < 60 {
			t.Errorf("exit %d, %d reads in %d ms; want 256 in 64 ms or more", code, j.Read.IOs, j.Runtime)
		}
	}
}
