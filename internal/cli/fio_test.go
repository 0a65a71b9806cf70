package cli

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/internal/io/devsafe/devsafetest"
	"github.com/cephbench/cephbench/result"
)

// fio runs "cephbench fio ARGS... --results DIR" and returns its stdout
// and the results it saved, failing the test unless it exits 0.
func fio(t *testing.T, args ...string) (string, []*result.Result) {
	t.Helper()
	return fioIn(t, "", nil, args...)
}

// fioIn is fio in the working directory dir with the environment getenv
// (nil: the process's).
func fioIn(t *testing.T, dir string, getenv func(string) string, args ...string) (string, []*result.Result) {
	t.Helper()
	results := t.TempDir()
	code, stdout, stderr := cephbenchIn(t, context.Background(), dir, getenv, append(append([]string{"fio"}, args...), "--results", results)...)
	if code != 0 {
		t.Fatalf("cephbench fio %s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	paths, _ := filepath.Glob(filepath.Join(results, "*.json"))
	var rs []*result.Result
	for _, p := range paths {
		r, err := result.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return stdout, rs
}

// The lines every fio job section has, in fio 3.33's order (see
// ../shared/reference/outputs/fio-randrw-normal.txt).
var fioSections = []*regexp.Regexp{
	regexp.MustCompile(`(?m)^\S+: \(groupid=\d+, jobs=\d+\): err= 0: pid=\d+: `),
	regexp.MustCompile(`(?m)^  read: IOPS=[\d.k]+, BW=`),
	regexp.MustCompile(`(?m)^    clat \((n|u|m)sec\): min=`),
	regexp.MustCompile(`(?m)^     lat \((n|u|m)sec\): min=`),
	regexp.MustCompile(`(?m)^    clat percentiles \((n|u|m)sec\):$`),
	regexp.MustCompile(`(?m)^  write: IOPS=[\d.k]+, BW=`),
	regexp.MustCompile(`(?m)^  lat \((n|u|m)sec\)\s+: `),
	regexp.MustCompile(`(?m)^  cpu          : usr=[\d.]+%, sys=[\d.]+%, ctx=\d+, majf=\d+, minf=\d+$`),
	regexp.MustCompile(`(?m)^  IO depths    : 1=`),
	regexp.MustCompile(`(?m)^     issued rwts: total=\d+,\d+,0,0 `),
	regexp.MustCompile(`(?m)^Run status group 0 \(all jobs\):$`),
	regexp.MustCompile(`(?m)^   READ: bw=.*, io=.*, run=\d+-\d+msec$`),
	regexp.MustCompile(`(?m)^  WRITE: bw=.*, io=.*, run=\d+-\d+msec$`),
	regexp.MustCompile(`(?m)^Disk stats \(read/write\):$`),
}

// fio prints bandwidth and IOPS statistics only over whole sampling
// intervals: in a job that ran for a second or more.
var fioSampleSections = []*regexp.Regexp{
	regexp.MustCompile(`(?m)^   bw \( *[KMGT]?i?B/s\): min=.*, samples=\d+$`),
	regexp.MustCompile(`(?m)^   iops        : min=.*, samples=\d+$`),
}

// missingSection reports the first of fio's sections out has not, or out of
// order; "" if it has them all.
func missingSection(out string, sections []*regexp.Regexp) string {
	at := 0
	for _, re := range sections {
		loc := re.FindStringIndex(out[at:])
		if loc == nil {
			return re.String()
		}
		at += loc[1]
	}
	return ""
}

// Report 000's command line, as typed there, in the current directory:
// twenty clones of a 10M file each, half reads and half writes, reported
// as one group.
func TestFioReport000CommandLine(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "cbfio") // a real disk, for Disk stats
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	out, rs := fioIn(t, dir, nil, strings.Fields("--rw=rw --bs=1m --size=10M --numjobs=20 --group_reporting --name=test-rw")...)
	if !strings.HasPrefix(out, "test-rw: (g=0): rw=rw, bs=(R) 1024KiB-1024KiB, (W) 1024KiB-1024KiB, (T) 1024KiB-1024KiB, ioengine=psync, iodepth=1\n...\n") {
		t.Errorf("not fio's job header:\n%s", out)
	}
	if !strings.Contains(out, "test-rw: (groupid=0, jobs=20): err= 0:") {
		t.Errorf("no section for the twenty clones together:\n%s", out)
	}
	if s := missingSection(out, fioSections); s != "" {
		t.Errorf("fio's output without %q:\n%s", s, out)
	}
	if len(rs) != 1 {
		t.Fatalf("%d results saved; want 1", len(rs))
	}
	read, write := rs[0].Ops["read"], rs[0].Ops["write"]
	if read.Bytes+write.Bytes != 200<<20 || read.Ops == 0 || write.Ops == 0 || rs[0].Spec.Workers != 20 {
		t.Errorf("read %d bytes and wrote %d with %d workers; want 200 MiB of both with 20", read.Bytes, write.Bytes, rs[0].Spec.Workers)
	}
	if loc := rs[0].Spec.Target.Location; loc != dir && !strings.HasPrefix(loc, dir+"/") {
		t.Errorf("the job's files were %s, not in its working directory %s", loc, dir)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the job left %d files in its directory", len(entries))
	}
}

// Report 004's six SSD qualification jobs, as typed there, on a loop
// device in place of /dev/sdb, each cut to one second.
func TestFioReport004CommandLinesOnABlockDevice(t *testing.T) {
	dev, _ := devsafetest.Loop(t, 1<<30)
	b, err := os.ReadFile("../peer/fiojob/testdata/004-cmdlines.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		args := strings.Fields(strings.ReplaceAll(line, "/dev/sdb", dev))[1:]
		name := strings.TrimPrefix(args[len(args)-1], "-name=")
		t.Run(name, func(t *testing.T) {
			out, rs := fio(t, append(args, "-runtime=1")...)
			if len(rs) != 1 {
				t.Fatalf("%d results; want 1", len(rs))
			}
			r := rs[0]
			if r.Spec.IOEngine != "libaio" || r.Spec.QueueDepth != 128 || !r.Spec.Direct || r.ElapsedSeconds < 0.9 {
				t.Errorf("ran %s at depth %d, direct %v, for %.2fs; want libaio at 128, direct, for a second",
					r.Spec.IOEngine, r.Spec.QueueDepth, r.Spec.Direct, r.ElapsedSeconds)
			}
			for _, kind := range r.Kinds() {
				if s := r.Ops[kind]; s.Ops == 0 || s.Errors != 0 {
					t.Errorf("%s: %d ops, %d errors", kind, s.Ops, s.Errors)
				}
			}
			if s := missingSection(out, fioSampleSections); s != "" || !strings.Contains(out, name+": (groupid=0, jobs=1): err= 0:") ||
				!strings.Contains(out, "Run status group 0 (all jobs):") {
				t.Errorf("not fio's output (%s):\n%s", s, out)
			}
		})
	}
}

// The keys fio-JSON consumers (fio-plot, kubestr, pbench) read, and the
// result's figures they must carry.
func TestFioJSONOutput(t *testing.T) {
	out, rs := fio(t, strings.Fields("--name=n --ioengine=null --rw=randrw --rwmixread=70 --bs=4k --iodepth=8 --number_ios=20000 --output-format=json")...)
	var doc struct {
		Version string `json:"fio version"`
		Jobs    []struct {
			Name  string `json:"jobname"`
			Read  fioDir `json:"read"`
			Write fioDir `json:"write"`
		} `json:"jobs"`
		DiskUtil []any `json:"disk_util"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not JSON alone: %v\n%s", err, out)
	}
	if !strings.HasPrefix(doc.Version, "cephbench-") || len(doc.Jobs) != 1 || doc.Jobs[0].Name != "n" || len(rs) != 1 {
		t.Fatalf("version %q, %d jobs, %d results", doc.Version, len(doc.Jobs), len(rs))
	}
	r := rs[0]
	for kind, d := range map[string]fioDir{"read": doc.Jobs[0].Read, "write": doc.Jobs[0].Write} {
		s := r.Ops[kind]
		if d.TotalIOs != s.Ops || d.IOBytes != s.Bytes {
			t.Errorf("%s: total_ios %d, io_bytes %d; the result has %d ops, %d bytes", kind, d.TotalIOs, d.IOBytes, s.Ops, s.Bytes)
		}
		if d.ClatNs.Mean != d.LatNs.Mean || d.ClatNs.Percentile["99.000000"] == 0 || d.IOPS <= 0 || d.BW <= 0 {
			t.Errorf("%s: clat mean %g, lat mean %g, p99 %d, iops %g, bw %d", kind, d.ClatNs.Mean, d.LatNs.Mean, d.ClatNs.Percentile["99.000000"], d.IOPS, d.BW)
		}
	}
	if got := doc.Jobs[0].Read.TotalIOs + doc.Jobs[0].Write.TotalIOs; got != 20000 {
		t.Errorf("%d ios in all; want number_ios=20000", got)
	}
}

type fioDir struct {
	IOBytes  int64   `json:"io_bytes"`
	BW       int64   `json:"bw"`
	IOPS     float64 `json:"iops"`
	TotalIOs int64   `json:"total_ios"`
	ClatNs   struct {
		Mean       float64          `json:"mean"`
		Percentile map[string]int64 `json:"percentile"`
	} `json:"clat_ns"`
	LatNs struct {
		Mean float64 `json:"mean"`
	} `json:"lat_ns"`
}

// A job file with what people put in one: [global], ${VAR}, an include,
// a stonewall, a bare boolean; the output goes to --output. Its paths are
// relative, taken from the working directory.
func TestFioJobFile(t *testing.T) {
	dir := t.TempDir()
	getenv := func(k string) string { return map[string]string{"CB_FIO_SIZE": "4M"}[k] }
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "common.fio"), []byte("bs=64k\nsize=${CB_FIO_SIZE}\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "job.fio"), []byte(`; two phases on one file
[global]
include common.fio
filename=data
group_reporting

[fill]
rw=write

[check]
stonewall
rw=randread
verify=crc32c
`), 0o644))
	report := filepath.Join(dir, "report.txt")
	stdout, rs := fioIn(t, dir, getenv, "job.fio", "--output=report.txt")
	if stdout != "" {
		t.Errorf("--output given, yet stdout has %q", stdout)
	}
	b, err := os.ReadFile(report)
	must(err)
	out := string(b)
	for _, want := range []string{"fill: (g=0): rw=write, bs=(R) 64.0KiB-64.0KiB", "check: (g=1): rw=randread", "Run status group 0 (all jobs):", "Run status group 1 (all jobs):"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if len(rs) != 2 {
		t.Fatalf("%d results; want 2", len(rs))
	}
	for _, r := range rs {
		kind := map[string]string{"fill": "write", "check": "read"}[r.Name]
		if s := r.Ops[kind]; s.Bytes != 4<<20 || s.Errors != 0 {
			t.Errorf("%s: %s %d bytes, %d errors; want 4 MiB and none", r.Name, kind, s.Bytes, s.Errors)
		}
	}
	if r := rs[0]; r.Name == "check" && !r.Spec.Verify || rs[1].Name == "check" && !rs[1].Spec.Verify {
		t.Errorf("verify=crc32c did not verify the reads")
	}
}

func TestFioBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]string{
		"unknown option":      {"--name=x", "--filename=" + dir + "/f", "--size=1M", "--frobnicate=1"},
		"wrong size":          {"--name=x", "--filename=" + dir + "/f", "--size=1Q"},
		"missing job file":    {dir + "/no-such.fio"},
		"unreadable job file": {dir}, // a directory: unreadable even to root
		"unknown engine":      {"--name=x", "--filename=" + dir + "/f", "--size=1M", "--ioengine=mmap"},
		"no jobs":             {"--output-format=json"},
		"bad output format":   {"--name=x", "--filename=" + dir + "/f", "--size=1M", "--output-format=xml"},
		"missing directory":   {"--name=x", "--filename=" + dir + "/no/such/f", "--size=1M", "--rw=write"},
		"time_based, no time": {"--name=x", "--filename=" + dir + "/f", "--size=1M", "--time_based"},
	}
	for name, args := range cases {
		code, stdout, stderr := cephbench(t, context.Background(), append([]string{"fio"}, args...)...)
		wantUsageError(t, name, code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad input left files behind: %v", entries)
	}
}

// --status-interval prints the output of the run so far every interval,
// then the final one.
func TestFioStatusInterval(t *testing.T) {
	out, rs := fio(t, strings.Fields("--name=s --ioengine=null --rw=randread --bs=4k --size=1G --runtime=3 --time_based --status-interval=1")...)
	reports := strings.Split(out, "Run status group 0 (all jobs):")
	if len(reports) < 3 || len(rs) != 1 {
		t.Fatalf("%d reports in a 3s run with a 1s status interval; want at least 2 and the final one:\n%s", len(reports)-1, out)
	}
	iops := regexp.MustCompile(`read: IOPS=([\d.]+k?), BW=\S+ \(\S+\)\((\S+)/(\d+)msec\)`)
	var runtimes []string
	for _, m := range iops.FindAllStringSubmatch(out, -1) {
		runtimes = append(runtimes, m[3])
	}
	if len(runtimes) != len(reports)-1 || runtimes[0] == runtimes[len(runtimes)-1] {
		t.Errorf("each report's runtime: %v; want one per report, growing", runtimes)
	}
}

// fsync=N syncs the file after every N writes, end_fsync once at the end;
// both are timed as fio's sync ops.
func TestFioFsync(t *testing.T) {
	dir := t.TempDir()
	out, rs := fio(t, "--name=f", "--filename="+dir+"/f", "--size=1M", "--bs=4k", "--rw=write", "--fsync=4", "--end_fsync=1")
	for _, want := range []string{"  fsync/fdatasync/sync_file_range:\n    sync (", "    sync percentiles (", "issued rwts: total=0,256,0,65 "} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if len(rs) != 1 || rs[0].Ops["sync"].Ops != 256/4+1 || rs[0].Ops["write"].Ops != 256 {
		t.Errorf("results %v; want 256 writes and 65 syncs", rs)
	}
	out, _ = fio(t, "--name=f", "--filename="+dir+"/g", "--size=1M", "--bs=64k", "--rw=randwrite", "--ioengine=io_uring", "--iodepth=8",
		"--fsync=2", "--output-format=json")
	var doc struct {
		Jobs []struct {
			Sync struct {
				TotalIOs int64 `json:"total_ios"`
				Lat      struct {
					N int64 `json:"N"`
				} `json:"lat_ns"`
			} `json:"sync"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Jobs) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	if s := doc.Jobs[0].Sync; s.TotalIOs == 0 || s.TotalIOs > 8 || s.Lat.N != s.TotalIOs {
		t.Errorf("sync: %d ios, latency of %d; want up to one per two of the 16 writes, each timed", s.TotalIOs, s.Lat.N)
	}
}

// Options that only tune fio are named in one note on stderr per run, not
// one per job, and the jobs run.
func TestFioNoopOptionsAreNotedOnce(t *testing.T) {
	dir := t.TempDir()
	job := "[global]\nioengine=null\nsize=1m\ninvalidate=1\ngtod_reduce=1\n[a]\n[b]\ndisable_lat=1\n"
	if err := os.WriteFile(filepath.Join(dir, "n.fio"), []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cephbenchIn(t, context.Background(), dir, nil, "fio", "n.fio", "--results", t.TempDir())
	note := "fio options that change nothing in cephbench, ignored: disable_lat, gtod_reduce, invalidate\n"
	if code != 0 || strings.Count(stderr, note) != 1 || strings.Count(stderr, "ignored") != 1 {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 0 and one note %q", code, stderr, note)
	}
}

// fioCounts runs a fio-JSON producing command and returns each job's
// read and write ios and bytes, keyed "JOB read"/"JOB write".
func fioCounts(t *testing.T, out string) map[string][2]int64 {
	t.Helper()
	var doc struct {
		Jobs []struct {
			Name  string `json:"jobname"`
			Read  fioDir `json:"read"`
			Write fioDir `json:"write"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &doc); err != nil {
		t.Fatalf("not fio's JSON: %v\n%s", err, out)
	}
	counts := map[string][2]int64{}
	for _, j := range doc.Jobs {
		counts[j.Name+" read"] = [2]int64{j.Read.TotalIOs, j.Read.IOBytes}
		counts[j.Name+" write"] = [2]int64{j.Write.TotalIOs, j.Write.IOBytes}
	}
	return counts
}

// verify= on a write-only job writes, then reads back and checks what it
// wrote, as fio 3.33 does: the same ops and bytes each way.
func TestFioVerifyOfAWriteOnlyJobAsFio(t *testing.T) {
	dir := t.TempDir()
	job := "[global]\nbs=4k\nsize=4m\nverify=crc32c\n[seq]\nrw=write\nfilename=seq.dat\n[rand]\nrw=randwrite\nioengine=libaio\niodepth=8\nfilename=rand.dat\n[none]\nrw=write\ndo_verify=0\nfilename=none.dat\n"
	if err := os.WriteFile(filepath.Join(dir, "v.fio"), []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	out, rs := fioIn(t, dir, nil, "v.fio", "--output-format=json")
	got := fioCounts(t, out)
	want := map[string][2]int64{
		"seq read": {1024, 4 << 20}, "seq write": {1024, 4 << 20},
		"rand read": {1024, 4 << 20}, "rand write": {1024, 4 << 20},
		"none read": {0, 0}, "none write": {1024, 4 << 20},
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %d ios, %d bytes; want %d, %d", k, got[k][0], got[k][1], w[0], w[1])
		}
	}
	for _, r := range rs {
		if len(r.Errors) != 0 {
			t.Errorf("%s: errors %v", r.Name, r.Errors)
		}
	}
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio is not installed (scripts/install-deps.sh installs it): not compared with fio's counts")
	}
	fioDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(fioDir, "v.fio"), []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("fio", "--output-format=json", "v.fio")
	cmd.Dir = fioDir
	fioOut, err := cmd.Output()
	if err != nil {
		t.Fatalf("fio: %v\n%s", err, fioOut)
	}
	if theirs := fioCounts(t, string(fioOut)); !maps.Equal(theirs, got) {
		t.Errorf("fio 3.33 counted %v\ncephbench %v", theirs, got)
	}
}

// A block changed between the write and a later verify_only run fails
// that run as fio fails it: err=84 on the job, exit 1.
func TestFioVerifyOnlyFindsACorruptedBlock(t *testing.T) {
	dir := t.TempDir()
	args := strings.Fields("--name=v --rw=write --bs=4k --size=1m --verify=crc32c --filename=v.dat")
	fioIn(t, dir, nil, append(args, "--keep")...)
	if code, out, stderr := cephbenchIn(t, context.Background(), dir, nil, append(append([]string{"fio"}, args...), "--verify_only", "--results", t.TempDir())...); code != 0 {
		t.Fatalf("verify_only of the data as written: exit %d\n%s\n%s", code, out, stderr)
	}
	f, err := os.OpenFile(filepath.Join(dir, "v.dat"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, 10000); err != nil { // in the third block
		t.Fatal(err)
	}
	f.Close()
	code, out, stderr := cephbenchIn(t, context.Background(), dir, nil, append(append([]string{"fio"}, args...), "--verify_only", "--results", t.TempDir())...)
	if code != ExitFailure || !strings.Contains(out, "err=84") || !strings.Contains(stderr, "v: ended at its first failed op") {
		t.Errorf("verify_only of a corrupted file: exit %d\n%s\n%s\nwant exit 1, err=84 and the count on stderr", code, out, stderr)
	}
	if !strings.Contains(out, "read: IOPS=") {
		t.Errorf("verify_only printed no reads:\n%s", out)
	}
}
