package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// realFio runs fio 3.33 with args in dir and returns its standard
// output, skipping the test without fio.
func realFio(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, stderr, code := runFio(t, dir, args...)
	if code != 0 {
		t.Fatalf("fio %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
	}
	return out
}

// runFio runs fio in dir and returns what it printed and its exit code.
// The test is skipped where fio is not installed. A run that has not
// ended after a minute is killed with the job processes it forked, and
// tried once more: fio 3.33 has been seen to hang under load.
func runFio(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	path, err := exec.LookPath("fio")
	if err != nil {
		t.Skip("fio is not installed (scripts/install-deps.sh installs it): nothing to compare with")
	}
	// fio 3.33 itself now and then never ends a short job (three times in
	// a row for one test, its one process asleep in hrtimer_nanosleep and
	// the job it forked gone): what its processes were doing is logged,
	// and the job is run again, three times at most.
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error {
			t.Logf("fio hung: %s", processGroupState(cmd.Process.Pid))
			return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		cmd.WaitDelay = 5 * time.Second
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		out, err := cmd.Output()
		hung := ctx.Err() != nil
		cancel()
		if hung && try < 3 {
			t.Logf("fio %s: still running after a minute; killed, and run again", strings.Join(args, " "))
			continue
		}
		if hung {
			// The peer's own fault (its one process asleep, the job it
			// forked gone), not cephbench's: there is nothing to compare.
			t.Skipf("fio %s hung three times: nothing to compare with", strings.Join(args, " "))
		}
		if ee, ok := err.(*exec.ExitError); ok && !hung {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("fio %s: %v", strings.Join(args, " "), err)
		}
		return string(out), errOut.String(), code
	}
}

// processGroupState says, for each process of group pgid, its pid, state
// and the kernel function it waits in.
func processGroupState(pgid int) string {
	var procs []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		i := bytes.LastIndexByte(stat, ')')
		if err != nil || i < 0 {
			continue
		}
		// Fields from the state on: state ppid pgrp ...
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		wchan, _ := os.ReadFile(filepath.Join(d, "wchan"))
		procs = append(procs, fmt.Sprintf("%s %s in %s", filepath.Base(d), f[0], wchan))
	}
	return strings.Join(procs, "; ")
}

// fioJobs are the "jobs" of fio's JSON output: each one's name and ops by
// direction.
type fioJobs struct {
	Jobs []struct {
		Name        string `json:"jobname"`
		Read, Write struct {
			TotalIOs int64 `json:"total_ios"`
		}
	}
}

func parseJobs(t *testing.T, out string) fioJobs {
	t.Helper()
	var jobs fioJobs
	if err := json.Unmarshal([]byte(out), &jobs); err != nil {
		t.Fatalf("%v in\n%s", err, out)
	}
	return jobs
}

// Without group_reporting each of numjobs's clones is a job of its own
// in fio's JSON, as fio prints it; with it the clones are one.
func TestFioClonesAreJobsOfTheirOwn(t *testing.T) {
	for _, grouped := range []bool{false, true} {
		fioDir, cbDir := t.TempDir(), t.TempDir()
		args := func(dir string) []string {
			a := []string{"--name=j", "--filename=" + filepath.Join(dir, "data"), "--size=256k", "--bs=4k", "--rw=randrw",
				"--ioengine=psync", "--numjobs=3", "--output-format=json+"}
			if grouped {
				a = append(a, "--group_reporting")
			}
			return a
		}
		fioOut := realFio(t, fioDir, args(fioDir)...)
		out, _ := fioIn(t, cbDir, nil, args(cbDir)...)
		want, got := parseJobs(t, fioOut), parseJobs(t, out)
		if len(got.Jobs) != len(want.Jobs) {
			t.Fatalf("group_reporting=%v: %d jobs in cephbench's JSON, %d in fio's", grouped, len(got.Jobs), len(want.Jobs))
		}
		for i, j := range got.Jobs {
			ops, fioOps := j.Read.TotalIOs+j.Write.TotalIOs, want.Jobs[i].Read.TotalIOs+want.Jobs[i].Write.TotalIOs
			if j.Name != want.Jobs[i].Name || ops != fioOps {
				t.Errorf("group_reporting=%v: job %d is %q of %d ops; fio's %q of %d (each clone does its 256k in 4k ops)",
					grouped, i, j.Name, ops, want.Jobs[i].Name, fioOps)
			}
		}
		if _, err := exec.LookPath("fio_jsonplus_clat2csv"); err != nil {
			continue
		}
		// fio_jsonplus_clat2csv writes a file per job: per clone here.
		for dir, json := range map[string]string{fioDir: fioOut, cbDir: out} {
			if err := os.WriteFile(filepath.Join(dir, "out.json"), []byte(json), 0o644); err != nil {
				t.Fatal(err)
			}
			fioTool(t, dir, "fio_jsonplus_clat2csv", "out.json", "out.csv")
		}
		csvs := func(dir string) []string {
			paths, _ := filepath.Glob(filepath.Join(dir, "out_job*.csv"))
			for i, p := range paths {
				paths[i] = filepath.Base(p)
			}
			return paths
		}
		if got, want := csvs(cbDir), csvs(fioDir); len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("group_reporting=%v: fio_jsonplus_clat2csv wrote %v of cephbench's JSON+, %v of fio's", grouped, got, want)
		}
	}
}

// logLines reads a log file's lines, each split into its columns.
func logLines(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]string
	for l := range strings.Lines(string(b)) {
		lines = append(lines, strings.Split(strings.TrimSuffix(l, "\n"), ", "))
	}
	return lines
}

// logNames are the names of the log files in dir.
func logNames(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		paths[i] = filepath.Base(p)
	}
	return paths
}

// A size-bounded job logging every op (log_avg_msec=0) writes fio's files
// per clone, a line per op in each, as many as fio's: the same file names,
// the same columns, and per direction as many lines as the run's JSON
// counts ops.
func TestFioLogsOfEveryOpAreFios(t *testing.T) {
	fioDir, cbDir := t.TempDir(), t.TempDir()
	args := func(dir string) []string {
		return []string{"--name=j", "--filename=" + filepath.Join(dir, "data"), "--size=1m", "--bs=4k", "--rw=randrw",
			"--ioengine=psync", "--numjobs=2", "--write_bw_log=x", "--write_lat_log=x", "--write_iops_log=x",
			"--log_offset=1", "--output-format=json"}
	}
	realFio(t, fioDir, args(fioDir)...)
	out, _ := fioIn(t, cbDir, nil, args(cbDir)...)
	report := parseJobs(t, out)

	names := logNames(t, fioDir)
	if got := logNames(t, cbDir); !slices.Equal(got, names) {
		t.Fatalf("cephbench wrote the logs %v; fio %v", got, names)
	}
	var runOps [2]int64
	for _, j := range report.Jobs {
		runOps[0] += j.Read.TotalIOs
		runOps[1] += j.Write.TotalIOs
	}
	for _, kind := range []string{"bw", "iops", "lat", "clat", "slat"} {
		var fioLines, cbLines int
		var cbDirs [2]int64
		for clone := 1; clone <= 2; clone++ {
			name := "x_" + kind + "." + strconv.Itoa(clone) + ".log"
			want, got := logLines(t, filepath.Join(fioDir, name)), logLines(t, filepath.Join(cbDir, name))
			if len(got) != len(want) {
				t.Errorf("%s: %d lines; fio's has %d", name, len(got), len(want))
			}
			fioLines += len(want)
			for _, l := range got {
				if len(l) != 6 || (l[2] != "0" && l[2] != "1") || l[3] != "4096" || l[5] != "0" {
					t.Fatalf("%s: line %q is not fio's time, value, direction, 4096, offset, 0", name, l)
				}
				offset, err := strconv.ParseInt(l[4], 10, 64)
				if err != nil || offset%4096 != 0 || offset >= 1<<20 {
					t.Fatalf("%s: line %q: the offset is not a block of the 1 MiB file", name, l)
				}
				cbDirs[l[2][0]-'0']++
				cbLines++
			}
		}
		if kind == "slat" {
			// Neither measures a submission latency on a synchronous
			// engine: both leave the file empty.
			if fioLines != 0 || cbLines != 0 {
				t.Errorf("slat logs: fio %d lines, cephbench %d; want both empty", fioLines, cbLines)
			}
			continue
		}
		if fioLines != 256*2 || cbLines != fioLines {
			t.Errorf("%s logs: fio %d lines, cephbench %d; want one per 4k op of two clones' 1 MiB, 512", kind, fioLines, cbLines)
		}
		if cbDirs != runOps {
			t.Errorf("%s logs: %v lines by direction; the run's JSON counts %v ops", kind, cbDirs, runOps)
		}
	}
}

// python3WithPandas is a python3 that has pandas and numpy, which
// fiologparser_hist.py needs, or "".
func python3WithPandas() string {
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import pandas, numpy").Run() == nil {
			return path
		}
	}
	return ""
}

// fioTool runs one of fio's tools in dir and returns its standard output,
// failing the test if it fails.
func fioTool(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s%s", name, strings.Join(args, " "), dir, err, out, stderr.String())
	}
	return string(out)
}

// firstLine is s's first line.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// fio's own tools read cephbench's averaged logs (log_avg_msec=100 over a
// 1 s job, one shared file per log with per_job_logs=0), its histogram
// log and its JSON+ output as they read fio's of the same job, and make
// the same columns of them.
func TestFioToolsReadCephbenchsLogs(t *testing.T) {
	fioDir, cbDir := t.TempDir(), t.TempDir()
	args := func(dir string) []string {
		return []string{"--name=j", "--filename=" + filepath.Join(dir, "data"), "--size=1m", "--bs=4k", "--rw=randrw",
			"--ioengine=psync", "--time_based", "--runtime=1", "--per_job_logs=0", "--log_avg_msec=100",
			"--write_bw_log=x", "--write_lat_log=x", "--write_iops_log=x", "--write_hist_log=x", "--log_hist_msec=100",
			"--output-format=json+", "--output=out.json"}
	}
	realFio(t, fioDir, args(fioDir)...)
	fioIn(t, cbDir, nil, args(cbDir)...)

	names := logNames(t, fioDir)
	if got := logNames(t, cbDir); !slices.Equal(got, names) {
		t.Fatalf("cephbench wrote the logs %v; fio %v", got, names)
	}
	for _, kind := range []string{"bw", "iops", "lat", "clat"} {
		var perDir [2]int
		for _, l := range logLines(t, filepath.Join(cbDir, "x_"+kind+".log")) {
			if len(l) != 5 || (l[2] != "0" && l[2] != "1") || l[3] != "0" || l[4] != "0" {
				t.Fatalf("x_%s.log: line %q is not fio's averaged time, value, direction, 0, 0", kind, l)
			}
			perDir[l[2][0]-'0']++
		}
		// A line per 100 ms window and direction: 10 over 1 s, fio's
		// own 9 or 10 (its bandwidth windows start some ms in). A window
		// in which no op completed has no line, as in fio: on a loaded
		// machine a starved process can miss a few.
		for d, n := range perDir {
			if n < 5 || n > 11 {
				t.Errorf("x_%s.log: %d lines of direction %d; want about 10, one per 100 ms of the 1 s run", kind, n, d)
			}
		}
	}
	hist := logLines(t, filepath.Join(cbDir, "x_clat_hist.log"))
	fioHist := logLines(t, filepath.Join(fioDir, "x_clat_hist.log"))
	if len(hist) < 16 || len(hist[0]) != len(fioHist[0]) || len(hist[0]) != 3+1856 {
		t.Errorf("histogram log: %d lines of %d columns; fio's has %d of %d, time, direction, size and 1856 bins",
			len(hist), len(hist[0]), len(fioHist), len(fioHist[0]))
	}

	t.Run("fiologparser_hist.py", func(t *testing.T) {
		python := python3WithPandas()
		if python == "" {
			t.Skip("no python3 with pandas and numpy (scripts/install-deps.sh installs python3-pandas)")
		}
		gz, err := os.ReadFile("/usr/share/doc/fio/fiologparser_hist.py.gz")
		if err != nil {
			t.Skip("fiologparser_hist.py is not installed (Debian's fio package has it)")
		}
		script := filepath.Join(t.TempDir(), "fiologparser_hist.py")
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		unzipped, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(script, unzipped, 0o644); err != nil {
			t.Fatal(err)
		}
		want := fioTool(t, fioDir, python, script, "x_clat_hist.log")
		got := fioTool(t, cbDir, python, script, "x_clat_hist.log")
		if firstLine(got) != firstLine(want) || strings.Count(got, "\n") < 2 {
			t.Errorf("fiologparser_hist.py of cephbench's log:\n%s\nof fio's:\n%s", got, want)
		}
	})
	t.Run("fio2gnuplot", func(t *testing.T) {
		if _, err := exec.LookPath("fio2gnuplot"); err != nil {
			t.Skip("fio2gnuplot is not installed (Debian's fio package has it)")
		}
		for _, dir := range []string{fioDir, cbDir} {
			fioTool(t, dir, "fio2gnuplot", "-b", "-t", "T")
		}
		want, got := readText(t, filepath.Join(fioDir, "result.global")), readText(t, filepath.Join(cbDir, "result.global"))
		if settingNames(got) != settingNames(want) || !strings.Contains(got, "disks_count=1") {
			t.Errorf("fio2gnuplot's result.global of cephbench's bw log:\n%s\nof fio's:\n%s", got, want)
		}
	})
	t.Run("fio_generate_plots", func(t *testing.T) {
		for _, name := range []string{"fio_generate_plots", "gnuplot"} {
			if _, err := exec.LookPath(name); err != nil {
				t.Skipf("%s is not installed", name)
			}
		}
		for _, dir := range []string{fioDir, cbDir} {
			fioTool(t, dir, "fio_generate_plots", "T")
		}
		svgs := func(dir string) []string {
			paths, _ := filepath.Glob(filepath.Join(dir, "T-*.svg"))
			for i, p := range paths {
				paths[i] = filepath.Base(p)
			}
			return paths
		}
		if got, want := svgs(cbDir), svgs(fioDir); len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("fio_generate_plots drew %v of cephbench's logs, %v of fio's", got, want)
		}
		for _, kind := range []string{"bw", "iops", "lat", "clat"} { // slat is empty in both
			svg := "T-" + kind + ".svg"
			if s := readText(t, filepath.Join(cbDir, svg)); !strings.Contains(s, "<path") {
				t.Errorf("%s has no line drawn", svg)
			}
		}
	})
	t.Run("fio_jsonplus_clat2csv", func(t *testing.T) {
		if _, err := exec.LookPath("fio_jsonplus_clat2csv"); err != nil {
			t.Skip("fio_jsonplus_clat2csv is not installed (Debian's fio package has it)")
		}
		for _, dir := range []string{fioDir, cbDir} {
			fioTool(t, dir, "fio_jsonplus_clat2csv", "out.json", "out.csv")
		}
		want, got := readText(t, filepath.Join(fioDir, "out_job0.csv")), readText(t, filepath.Join(cbDir, "out_job0.csv"))
		if firstLine(got) != firstLine(want) || strings.Count(got, "\n") < 10 {
			t.Errorf("fio_jsonplus_clat2csv of cephbench's JSON+ begins\n%.500s\nof fio's\n%.500s", got, want)
		}
	})
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// settingNames are the names of a key=value file's lines, in order.
func settingNames(s string) string {
	var names []string
	for l := range strings.Lines(s) {
		name, _, _ := strings.Cut(l, "=")
		names = append(names, name)
	}
	return strings.Join(names, " ")
}
