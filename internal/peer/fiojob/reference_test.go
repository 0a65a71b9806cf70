package fiojob

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/spec"
)

// The command lines and job files of the field reports in
// /work/shared/reference, copied into testdata, must all parse and run
// what fio ran.

// fioArgs reads a fio command line from a testdata file, without "sudo"
// and "fio".
func fioArgs(t *testing.T, line string) []string {
	t.Helper()
	f := strings.Fields(line)
	for len(f) > 0 && (f[0] == "sudo" || f[0] == "fio") {
		f = f[1:]
	}
	return f
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func noEnv(string) string { return "" }

// header is fio's job line as fio 3.33 prints it before starting.
func header(j Job) string {
	return fmt.Sprintf("%s: (g=%d): rw=%s, bs=(R) %s, (W) %s, (T) %s, ioengine=%s, iodepth=%d",
		j.Name, j.Group, j.RW, j.BSDirs[0], j.BSDirs[1], j.BSDirs[2], j.IOEngine, j.IODepth)
}

// Report 000: the same 20-clone job on CephFS, a mapped RBD and a local
// disk: files of 10M in the working directory, 10M of I/O per clone.
func TestReport000(t *testing.T) {
	plan, err := Parse(fioArgs(t, readTestdata(t, "000-cmdline.txt")), noEnv, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(plan.Jobs))
	}
	j := plan.Jobs[0]
	want := spec.Workload{
		Name: "test-rw", Target: spec.Target{Scheme: "file", Location: "."}, FilePrefix: "test-rw",
		Pattern: spec.Sequential, ReadPercent: 50, BlockSize: 1 << 20, FileSize: 10 << 20,
		Workers: 20, QueueDepth: 1, TotalBytes: 200 << 20, BoundsPerWorker: true, IOEngine: "psync",
		StopOnError: "all", // fio's continue_on_error=none
	}
	if j.Workload != want {
		t.Errorf("workload\n got %+v\nwant %+v", j.Workload, want)
	}
	if !j.GroupReporting || j.NumJobs != 20 || j.Group != 0 || j.WholeTarget {
		t.Errorf("group_reporting %v, numjobs %d, group %d, whole target %v", j.GroupReporting, j.NumJobs, j.Group, j.WholeTarget)
	}
	if got, want := header(j), strings.TrimSpace(readTestdata(t, "header-normal-group.txt")); got != want {
		t.Errorf("header\n got %s\nwant %s", got, want)
	}
	if !equalStrings(plan.OutputFormats, []string{"normal"}) || plan.Output != "" {
		t.Errorf("output %q to %q, want normal to stdout", plan.OutputFormats, plan.Output)
	}
}

// Report 004: six single-dash command lines against /dev/sdb, every option
// before -name, so they are defaults the job inherits.
func TestReport004(t *testing.T) {
	type want struct {
		name    string
		pattern spec.Pattern
		reads   int
		bs      spec.Size
		bsText  string
		bsGiven string
	}
	wants := []want{
		{"Rand_Write_Test", spec.Random, 0, 4096, "4096B-4096B", "4k"},
		{"Rand_Read_Test", spec.Random, 100, 4096, "4096B-4096B", "4k"},
		{"Rand_Read_Write_Test", spec.Random, 50, 4096, "4096B-4096B", "4k"},
		{"Write_Test", spec.Sequential, 0, 4 << 20, "4096KiB-4096KiB", "4M"},
		{"Read_Test", spec.Sequential, 100, 4 << 20, "4096KiB-4096KiB", "4M"},
		{"Read_Write_Test", spec.Sequential, 50, 4 << 20, "4096KiB-4096KiB", "4M"},
	}
	lines := strings.Split(strings.TrimSpace(readTestdata(t, "004-cmdlines.txt")), "\n")
	if len(lines) != len(wants) {
		t.Fatalf("%d command lines in testdata, want %d", len(lines), len(wants))
	}
	for i, line := range lines {
		w := wants[i]
		t.Run(w.name, func(t *testing.T) {
			plan, err := Parse(fioArgs(t, line), noEnv, os.ReadFile)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Jobs) != 1 {
				t.Fatalf("%d jobs, want 1", len(plan.Jobs))
			}
			j := plan.Jobs[0]
			wl := spec.Workload{
				Name: w.name, Target: spec.Target{Scheme: "file", Location: "/dev/sdb"},
				Pattern: w.pattern, ReadPercent: w.reads, BlockSize: w.bs, FileSize: 1 << 30,
				Workers: 1, QueueDepth: 128, Duration: spec.Duration(600 * time.Second),
				IOEngine: "libaio", SubmitBatch: 1, Direct: true, StopOnError: "all", RandomMap: w.pattern == spec.Random,
			}
			if j.Workload != wl {
				t.Errorf("workload\n got %+v\nwant %+v", j.Workload, wl)
			}
			if j.BS != w.bsText || j.IOEngine != "libaio" || j.IODepth != 128 || !j.GroupReporting {
				t.Errorf("bs %q engine %q depth %d group_reporting %v", j.BS, j.IOEngine, j.IODepth, j.GroupReporting)
			}
			// fio's JSON "job options" of these runs hold only the name;
			// the rest are "global options", as fio-randrw.json shows.
			if len(j.Options) != 1 || j.Options[0] != (Option{"name", w.name}) {
				t.Errorf("job options %v, want only the name", j.Options)
			}
			var globals []string
			for _, o := range plan.GlobalOptions {
				globals = append(globals, o.Name+"="+o.Value)
			}
			wantGlobals := []string{"direct=1", "iodepth=128", "rw=" + j.RW, "ioengine=libaio", "bs=" + w.bsGiven,
				"numjobs=1", "size=1G", "time_based=1", "runtime=600", "group_reporting=", "filename=/dev/sdb"}
			if !equalStrings(globals, wantGlobals) {
				t.Errorf("global options\n got %q\nwant %q", globals, wantGlobals)
			}
		})
	}
}

// fio 3.33's header for a report-004 randrw job at iodepth 32, as captured.
func TestReport004HeaderMatchesFio(t *testing.T) {
	args := fioArgs(t, "fio -direct=1 -iodepth=32 -rw=randrw -ioengine=libaio -bs=4k -numjobs=1 -size=1G -time_based=1 -runtime=3 -group_reporting -filename=/tmp/f -name=Rand_Read_Write_Test")
	plan, err := Parse(args, noEnv, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := header(plan.Jobs[0]), strings.TrimSpace(readTestdata(t, "header-randrw.txt")); got != want {
		t.Errorf("header\n got %s\nwant %s", got, want)
	}
}

// Report 003: write.fio with the rbd engine, rw changed between runs. It
// gives runtime but neither time_based nor size, so fio stops after one
// pass over the 1G image (its output shows io=1024.0MB) unless 120s come
// first.
func TestReport003(t *testing.T) {
	for _, c := range []struct {
		rw      string
		pattern spec.Pattern
		reads   int
	}{
		{"write", spec.Sequential, 0},
		{"read", spec.Sequential, 100},
		{"randread", spec.Random, 100},
		{"randwrite", spec.Random, 0},
	} {
		t.Run(c.rw, func(t *testing.T) {
			file := filepath.Join("testdata", "003-"+c.rw+".fio")
			plan, err := Parse([]string{file}, noEnv, os.ReadFile)
			if err != nil {
				t.Fatal(err)
			}
			j := plan.Jobs[0]
			want := spec.Workload{
				Name: "write-4M", Target: spec.Target{Scheme: "rbd", Location: "rbd/block-device1?id=admin"},
				Pattern: c.pattern, ReadPercent: c.reads, BlockSize: 4 << 20,
				Workers: 1, QueueDepth: 32, Duration: spec.Duration(120 * time.Second),
				StopOnError: "all", RandomMap: c.pattern == spec.Random,
			}
			if j.Workload != want {
				t.Errorf("workload\n got %+v\nwant %+v", j.Workload, want)
			}
			if j.Workload.Target.String() != "rbd://rbd/block-device1?id=admin" {
				t.Errorf("target %s", j.Workload.Target)
			}
			if j.Description != "write test with block size of 4M" {
				t.Errorf("description %q", j.Description)
			}
			if j.Where != file+":1" || j.RW != c.rw || j.IOEngine != "rbd" || j.IODepth != 32 || j.BS != "4096KiB-4096KiB" {
				t.Errorf("where %q rw %q engine %q depth %d bs %q", j.Where, j.RW, j.IOEngine, j.IODepth, j.BS)
			}
			if !j.WholeTarget {
				t.Fatal("not bound by the image's size")
			}
			if err := j.Workload.BoundToPasses(1<<30, j.Passes()); err != nil {
				t.Fatal(err)
			}
			if j.Workload.TotalBytes != 1<<30 {
				t.Errorf("one pass over 1G: total %s", j.Workload.TotalBytes)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}
