package fiojob

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/spec"
)

// files is an in-memory file system for job files.
type files map[string]string

func (f files) read(path string) ([]byte, error) {
	s, ok := f[path]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return []byte(s), nil
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func mustParse(t *testing.T, args []string, fsys files, vars map[string]string) *Plan {
	t.Helper()
	plan, err := Parse(args, env(vars), fsys.read)
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	return plan
}

func parseErr(t *testing.T, args []string, fsys files, vars map[string]string) string {
	t.Helper()
	plan, err := Parse(args, env(vars), fsys.read)
	if err == nil {
		t.Fatalf("Parse(%q) succeeded with %d jobs; want an error", args, len(plan.Jobs))
	}
	return err.Error()
}

func wantContains(t *testing.T, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not mention %q", msg, p)
		}
	}
}

func jobNamed(t *testing.T, plan *Plan, name string) Job {
	t.Helper()
	for _, j := range plan.Jobs {
		if j.Name == name {
			return j
		}
	}
	t.Fatalf("no job %q", name)
	return Job{}
}

// A later [global] changes the defaults of later jobs only; a job's own
// options win over both; the command line's defaults come first.
func TestGlobalInheritance(t *testing.T) {
	fsys := files{"j.fio": `
; defaults for every job
[global]
ioengine=libaio
filename=/dev/sdx
bs = 8k
rw=randread
iodepth=4
size=1g
runtime=10

[a]

[b]
bs=16k
iodepth = 2

[global]
iodepth=8

[c]
`}
	plan := mustParse(t, []string{"--direct=1", "--iodepth=64", "--numjobs=2", "j.fio"}, fsys, nil)
	cases := []struct {
		name string
		bs   spec.Size
		qd   int
	}{{"a", 8 << 10, 4}, {"b", 16 << 10, 2}, {"c", 8 << 10, 8}}
	if len(plan.Jobs) != len(cases) {
		t.Fatalf("%d jobs, want %d", len(plan.Jobs), len(cases))
	}
	for i, c := range cases {
		j := plan.Jobs[i]
		w := j.Workload
		if j.Name != c.name || w.BlockSize != c.bs || w.QueueDepth != c.qd {
			t.Errorf("job %d: %s bs %s depth %d; want %s bs %s depth %d", i, j.Name, w.BlockSize, w.QueueDepth, c.name, c.bs, c.qd)
		}
		// From the command line, under every file section.
		if !w.Direct || w.Workers != 2 || w.Pattern != spec.Random || w.ReadPercent != 100 {
			t.Errorf("job %s: direct %v workers %d %s/%d", j.Name, w.Direct, w.Workers, w.Pattern, w.ReadPercent)
		}
		// runtime without time_based: whichever comes first of 10s and
		// 1G per clone.
		if w.Duration != spec.Duration(10*time.Second) || w.TotalBytes != 2<<30 {
			t.Errorf("job %s: duration %s total %s", j.Name, w.Duration, w.TotalBytes)
		}
	}
	if jobNamed(t, plan, "a").Where != "j.fio:12" {
		t.Errorf("job a defined at %q, want j.fio:12", jobNamed(t, plan, "a").Where)
	}
	var globals []string
	for _, o := range plan.GlobalOptions {
		globals = append(globals, o.Name)
	}
	if want := []string{"direct", "iodepth", "numjobs", "ioengine", "filename", "bs", "rw", "iodepth", "size", "runtime", "iodepth"}; !equalStrings(globals, want) {
		t.Errorf("global options %q, want %q", globals, want)
	}
	// Only a job's own options are its "job options".
	if got := plan.Jobs[1].Options; len(got) != 2 || got[0] != (Option{"bs", "16k"}) || got[1] != (Option{"iodepth", "2"}) {
		t.Errorf("job b's options %v", got)
	}
}

// Command-line jobs: options before the first --name are defaults, each
// --name starts a job, --name=global goes back to the defaults.
func TestCommandLineJobs(t *testing.T) {
	args := []string{
		"--ioengine", "null", "--size=1m", "--bs", "4k",
		"--name=a", "--rw=write", "--iodepth", "16",
		"--name", "b", "--readwrite=randrw", "--rwmixwrite=30",
		"--name=global", "--bs=64k",
		"--name=c",
	}
	plan := mustParse(t, args, nil, nil)
	if len(plan.Jobs) != 3 {
		t.Fatalf("%d jobs, want 3", len(plan.Jobs))
	}
	a, b, c := plan.Jobs[0], plan.Jobs[1], plan.Jobs[2]
	if a.Name != "a" || a.Workload.ReadPercent != 0 || a.Workload.QueueDepth != 16 || a.Workload.Target.String() != "null://" {
		t.Errorf("a: %+v", a.Workload)
	}
	if b.RW != "randrw" || b.Workload.ReadPercent != 70 || b.Workload.QueueDepth != 1 || b.Workload.BlockSize != 4096 {
		t.Errorf("b: rw %s %+v", b.RW, b.Workload)
	}
	if c.RW != "read" || c.Workload.BlockSize != 64<<10 {
		t.Errorf("c: rw %s bs %s", c.RW, c.Workload.BlockSize)
	}
	if a.Where != "command line" || len(a.Options) != 3 || a.Options[0] != (Option{"name", "a"}) {
		t.Errorf("a: where %q options %v", a.Where, a.Options)
	}
	// Command-line jobs come before job files' jobs.
	plan = mustParse(t, []string{"x.fio", "--name=first", "--ioengine=null", "--size=1m"},
		files{"x.fio": "[second]\nioengine=null\nsize=1m\n"}, nil)
	if plan.Jobs[0].Name != "first" || plan.Jobs[1].Name != "second" {
		t.Errorf("order %s, %s", plan.Jobs[0].Name, plan.Jobs[1].Name)
	}
}

func TestBooleans(t *testing.T) {
	base := []string{"--ioengine=null", "--size=1m", "--runtime=5"}
	for _, c := range []struct {
		args                              []string
		timeBased, groupReporting, direct bool
	}{
		{[]string{"--time_based", "--group_reporting", "--direct"}, true, true, true},
		{[]string{"-time_based=1", "-group_reporting=1", "-direct=1"}, true, true, true},
		{[]string{"--time_based=0", "--group_reporting=0", "--direct=0"}, false, false, false},
		{[]string{"--direct", "1", "--time_based"}, true, false, true},
		{[]string{"--direct", "0"}, false, false, false},
		{[]string{"--buffered=0"}, false, false, true},
		{[]string{"--direct", "--buffered=1"}, false, false, false},
	} {
		args := append(append(append([]string{}, base...), c.args...), "--name=j")
		j := mustParse(t, args, nil, nil).Jobs[0]
		if j.GroupReporting != c.groupReporting || j.Workload.Direct != c.direct {
			t.Errorf("%q: group_reporting %v direct %v", c.args, j.GroupReporting, j.Workload.Direct)
		}
		// time_based: the duration is the only bound.
		if timeBased := j.Workload.TotalBytes == 0; timeBased != c.timeBased {
			t.Errorf("%q: time based %v, want %v (%+v)", c.args, timeBased, c.timeBased, j.Workload)
		}
	}
	// In a job file, bare and =0.
	fsys := files{"b.fio": "[j]\nioengine=null\nsize=1m\nruntime=5\ntime_based\ngroup_reporting\ndirect\nnorandommap\nrandrepeat=0\nend_fsync=1\nunlink\n"}
	j := mustParse(t, []string{"b.fio"}, fsys, nil).Jobs[0]
	if j.Workload.TotalBytes != 0 || !j.GroupReporting || !j.Workload.Direct || !j.NoRandomMap || j.RandRepeat || !j.Workload.EndFsync || !j.Unlink {
		t.Errorf("job file booleans: %+v", j)
	}
	msg := parseErr(t, []string{"--direct=yes", "--name=j"}, nil, nil)
	wantContains(t, msg, "direct=yes", "want 1 or 0")
}

func TestEnvironment(t *testing.T) {
	fsys := files{"e.fio": "[j]\nfilename=${DEV}\nsize=${SIZE}k\nioengine=libaio\n"}
	j := mustParse(t, []string{"e.fio"}, fsys, map[string]string{"DEV": "/dev/vdb", "SIZE": "64"}).Jobs[0]
	if j.Workload.Target.Location != "/dev/vdb" || j.Workload.FileSize != 64<<10 {
		t.Errorf("target %s size %s", j.Workload.Target, j.Workload.FileSize)
	}
	msg := parseErr(t, []string{"e.fio"}, fsys, map[string]string{"SIZE": "64"})
	wantContains(t, msg, "e.fio:2", "DEV", "not set")
	msg = parseErr(t, []string{"k.fio"}, files{"k.fio": "[j]\nnumjobs=$ncpus\n"}, nil)
	wantContains(t, msg, "k.fio:2", "$ncpus", "not supported")
}

func TestInclude(t *testing.T) {
	fsys := files{
		"jobs/main.fio":       "[global]\ninclude common.fio\n[j]\nrw=write\ninclude extra/more.fio\n",
		"jobs/common.fio":     "ioengine=null\n# size for all\nsize=2m\n",
		"jobs/extra/more.fio": "bs=8k\n",
	}
	j := mustParse(t, []string{"jobs/main.fio"}, fsys, nil).Jobs[0]
	if j.Workload.FileSize != 2<<20 || j.Workload.BlockSize != 8<<10 || j.Workload.ReadPercent != 0 {
		t.Errorf("included options not applied: %+v", j.Workload)
	}
	if len(j.Options) != 2 || j.Options[1] != (Option{"bs", "8k"}) {
		t.Errorf("options %v", j.Options)
	}
	// An error in an included file names that file's line.
	fsys["jobs/extra/more.fio"] = "bs=8k\nbogus_option=1\n"
	wantContains(t, parseErr(t, []string{"jobs/main.fio"}, fsys, nil), "jobs/extra/more.fio:2", "bogus_option")

	loop := files{
		"a.fio": "[j]\nioengine=null\ninclude b.fio\n",
		"b.fio": "size=1m\ninclude a.fio\n",
	}
	wantContains(t, parseErr(t, []string{"a.fio"}, loop, nil), "b.fio:2", "include loop", "a.fio -> b.fio -> a.fio")
	self := files{"d/s.fio": "[j]\ninclude s.fio\n"}
	wantContains(t, parseErr(t, []string{"d/s.fio"}, self, nil), "include loop")

	missing := files{"m.fio": "[j]\ninclude nothere.fio\n"}
	wantContains(t, parseErr(t, []string{"m.fio"}, missing, nil), "m.fio:2", "nothere.fio")
	sections := files{"s.fio": "[j]\ninclude t.fio\n", "t.fio": "[k]\n"}
	wantContains(t, parseErr(t, []string{"s.fio"}, sections, nil), "t.fio:1", "sections are not allowed")
	outside := files{"o.fio": "include t.fio\n[j]\n"}
	wantContains(t, parseErr(t, []string{"o.fio"}, outside, nil), "o.fio:1", "outside any [section]")
}

// Reporting groups as fio numbers them: stonewall and new_group open a
// new one unless the group is still empty; numjobs clones share it.
func TestGroups(t *testing.T) {
	fsys := files{"g.fio": `[global]
ioengine=null
size=1m
[a]
stonewall
[b]
numjobs=3
[c]
stonewall
[d]
[e]
new_group
[f]
wait_for_previous
new_group
`, "h.fio": "[global]\nioengine=null\nsize=1m\n[x]\n[y]\n"}
	plan := mustParse(t, []string{"g.fio", "h.fio"}, fsys, nil)
	want := []struct {
		name      string
		group     int
		stonewall bool
	}{
		{"a", 0, true}, {"b", 0, false}, {"c", 1, true}, {"d", 1, false},
		{"e", 2, false}, {"f", 3, true},
		// A second job file starts behind a stonewall, in a new group.
		{"x", 4, true}, {"y", 4, false},
	}
	if len(plan.Jobs) != len(want) {
		t.Fatalf("%d jobs, want %d", len(plan.Jobs), len(want))
	}
	for i, w := range want {
		j := plan.Jobs[i]
		if j.Name != w.name || j.Group != w.group || j.Stonewall != w.stonewall {
			t.Errorf("job %d: %s g=%d stonewall %v; want %s g=%d stonewall %v", i, j.Name, j.Group, j.Stonewall, w.name, w.group, w.stonewall)
		}
	}
}

func TestNumjobsGroupReporting(t *testing.T) {
	plan := mustParse(t, []string{"--filename=/data/f", "--size=256m", "--numjobs=4", "--loops=2", "--group_reporting", "--number_ios=1000", "--name=n"}, nil, nil)
	j := plan.Jobs[0]
	w := j.Workload
	// Clones share filename=, each doing size per loop.
	if w.Workers != 4 || w.Target.Location != "/data/f" || w.FileSize != 256<<20 || w.TotalBytes != 2*4*256<<20 || w.TotalOps != 2*4*1000 {
		t.Errorf("workload %+v", w)
	}
	if j.NumJobs != 4 || !j.GroupReporting || j.Loops != 2 {
		t.Errorf("numjobs %d group_reporting %v loops %d", j.NumJobs, j.GroupReporting, j.Loops)
	}
	// io_size is the amount, size the region.
	w = mustParse(t, []string{"--filename=/data/f", "--size=1g", "--io_size=10g", "--numjobs=2", "--name=n"}, nil, nil).Jobs[0].Workload
	if w.FileSize != 1<<30 || w.TotalBytes != 20<<30 {
		t.Errorf("io_size: region %s amount %s", w.FileSize, w.TotalBytes)
	}
	// filesize with a smaller size: the file is filesize, the I/O size.
	w = mustParse(t, []string{"--filename=/data/f", "--filesize=1g", "--size=100m", "--name=n"}, nil, nil).Jobs[0].Workload
	if w.FileSize != 1<<30 || w.TotalBytes != 100<<20 {
		t.Errorf("filesize: region %s amount %s", w.FileSize, w.TotalBytes)
	}
}

func TestUnknownOptions(t *testing.T) {
	fsys := files{"u.fio": "[global]\nsize=1m\n\n[job1]\nrw=read\nblocksiz=4k\n"}
	wantContains(t, parseErr(t, []string{"u.fio"}, fsys, nil), "u.fio:6", `unknown option "blocksiz"`, "did you mean blocksize")
	wantContains(t, parseErr(t, []string{"--name=a", "--frobnicate=3"}, nil, nil), "command line", "--frobnicate", "unknown option")
	// fio has it, cephbench does not run it.
	wantContains(t, parseErr(t, []string{"t.fio"}, files{"t.fio": "[j]\nzonemode=zbd\n"}, nil), "t.fio:2", `"zonemode"`, "not supported by cephbench")
	wantContains(t, parseErr(t, []string{"--eta=never", "--name=a"}, nil, nil), "--eta", "not supported by cephbench")
	wantContains(t, parseErr(t, []string{"x.fio"}, files{"x.fio": "bs=4k\n[j]\n"}, nil), "x.fio:1", "outside any [section]")
	wantContains(t, parseErr(t, []string{"--bs"}, nil, nil), "--bs needs a value")
	wantContains(t, parseErr(t, []string{"v.fio"}, files{"v.fio": "[j]\nbs\n"}, nil), "v.fio:2", "bs needs a value")
	wantContains(t, parseErr(t, []string{"--rw=read"}, nil, nil), "no jobs")
	wantContains(t, parseErr(t, []string{"nofile.fio"}, files{}, nil), "nofile.fio")
}

func TestBadValues(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--bs=4x", "--name=j"}, []string{"bs=4x", "unknown unit"}},
		{[]string{"--size=1.5g", "--name=j"}, []string{"size=1.5g", "fractions"}},
		{[]string{"--size=50%", "--name=j"}, []string{"size=50%", "percentage", "needs filesize="}},
		{[]string{"--size=0%", "--name=j"}, []string{"size=0%", "1% to 100%"}},
		{[]string{"--offset=100%", "--name=j"}, []string{"offset=100%", "nothing of the file"}},
		{[]string{"--size=lots", "--name=j"}, []string{"size=lots", "not a number"}},
		{[]string{"--runtime=2min", "--name=j"}, []string{"runtime=2min", "unknown time unit"}},
		{[]string{"--rw=randtrim", "--name=j"}, []string{"rw=randtrim", "trims are not supported"}},
		{[]string{"--rw=readd", "--name=j"}, []string{"rw=readd", "want read, write"}},
		{[]string{"--bssplit=4k/60:8k/50", "--name=j"}, []string{"bssplit=4k/60:8k/50", "more than 100%"}},
		{[]string{"--bssplit=4k/x:8k", "--name=j"}, []string{"bssplit=4k/x:8k", `share "x"`, "whole percentage"}},
		{[]string{"--bssplit=4q/50:8k", "--name=j"}, []string{"bssplit=4q/50:8k", "unknown unit"}},
		{[]string{"--bssplit=4k,8k,16k,32k", "--name=j"}, []string{"bssplit=4k,8k,16k,32k", "more than three"}},
		{[]string{"--bsrange=8k-4k", "--name=j"}, []string{"bsrange=8k-4k", "backwards"}},
		{[]string{"--bsrange=4k", "--name=j"}, []string{"bsrange=4k", "not a range"}},
		{[]string{"--bsrange=0-4k", "--name=j"}, []string{"bsrange=0-4k", "must be positive"}},
		{[]string{"--ba=0", "--name=j"}, []string{"ba=0", "must be positive"}},
		{[]string{"--rw_sequencer=backwards", "--name=j"}, []string{"rw_sequencer=backwards", "sequential or identical"}},
		{[]string{"--rw=randread:x", "--size=1m", "--name=j"}, []string{"rw=randread:x", "count of ops"}},
		{[]string{"--rw=read:4q", "--size=1m", "--name=j"}, []string{"rw=read:4q", "unit"}},
		{[]string{"--iodepth=0", "--name=j"}, []string{"iodepth=0", "at least 1"}},
		{[]string{"--rwmixread=120", "--name=j"}, []string{"rwmixread=120", "0 to 100"}},
		{[]string{"--kb_base=512", "--name=j"}, []string{"kb_base=512", "1024 or 1000"}},
		{[]string{"--percentile_list=50:101", "--name=j"}, []string{"percentile_list", "101"}},
		{[]string{"--ioengine=mmap", "--name=j"}, []string{"ioengine=mmap", "not supported", "libaio"}},
		{[]string{"--output-format=xml", "--name=j"}, []string{"--output-format=xml", "xml"}},
		{[]string{"--status-interval=0", "--name=j"}, []string{"--status-interval=0", "at least 1ms"}},
	} {
		wantContains(t, parseErr(t, c.args, nil, nil), c.want...)
	}
}

// Options cephbench recognises but cannot run as asked: each error names
// the option, its value and what is not supported.
func TestUnsupported(t *testing.T) {
	dev := []string{"--filename=/dev/sdx", "--size=1g"}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--offset_increment=5%"}, []string{"offset_increment=5%", "percent", "not supported"}},
		{[]string{"--filesize=8k", "--offset=6k"}, []string{"offset=6k", "leaves no 4096-byte block"}},
		{[]string{"--filesize=8m", "--offset_increment=1m"}, []string{"offset_increment=1m", "filesize=8m", "not supported"}},
		{[]string{"--ioengine=rados", "--pool=p", "--offset=1m"}, []string{"offset=1m", "ioengine=rados"}},
		{[]string{"--random_distribution=zipf:1"}, []string{"random_distribution=zipf:1", "θ"}},
		{[]string{"--random_distribution=zoned:50/10:40/20"}, []string{"random_distribution=zoned:50/10:40/20", "add up to 90"}},
		{[]string{"--random_distribution=zoned:50/10,60/20"}, []string{"per direction", "not supported"}},
		{[]string{"--random_generator=mt"}, []string{"random_generator=mt", "tausworthe"}},
		{[]string{"--nrfiles=2"}, []string{"nrfiles=2", "filename=", "not supported"}},
		{[]string{"--filename=/dev/sda:/dev/sdb"}, []string{"filename=/dev/sda:/dev/sdb", "several files"}},
		{[]string{"--rw=randrw", "--bssplit=4k/50:8k/50", "--rate=1m"}, []string{"rate=1m", "vary", "not supported"}},
		{[]string{"--rw=randrw", "--ba=4k,8k"}, []string{"blockalign", "different alignments"}},
		{[]string{"--rw=randrw", "--bssplit=4k/50:8k/50", "--verify=crc32c"}, []string{"cannot be verified"}},
		{[]string{"--rw=read", "--rate_iops=100", "--rate_iops_min=200"}, []string{"rate_iops_min=200", "rate_iops=100", "above"}},
		{[]string{"--rate_process=uniform"}, []string{"rate_process", "linear or poisson"}},
		{[]string{"--rate=1m", "--rate_iops=10"}, []string{"rate=1m", "rate_iops=10", "one of them"}},
		{[]string{"--rw=read", "--rate=,1m", "--ratemin=,2m"}, []string{"rate_min=,2m", "above"}},
		{[]string{"--ratecycle=0"}, []string{"at least 1"}},
		{[]string{"--rw=write", "--verify_only"}, []string{"verify_only", "verify="}},
		{[]string{"--rw=read", "--verify=md5", "--verify_only"}, []string{"verify_only", "write-only"}},
		{[]string{"--verify=pattern"}, []string{"verify=pattern", "not supported"}},
		{[]string{"--time_based", "--rw=read"}, []string{"time_based", "needs runtime="}},
		{[]string{"--startdelay=1-10"}, []string{"startdelay=1-10", "range"}},
		{[]string{"--filesize=1m-10m"}, []string{"size=1g", "filesize=1m-10m", "range", "at most 1 files of the smallest size, 1048576"}},
		{[]string{"--filesize=1m-10m", "--offset=4k"}, []string{"offset=", "filesize=1m-10m", "one file size"}},
		{[]string{"--offset=10%"}, []string{"offset=10%", "size=", "0 for a new one"}},
		{[]string{"--filesize=10m-1m"}, []string{"filesize=10m-1m", "below"}},
		{[]string{"--filename_format=sub/$jobname.$filenum"}, []string{"filename_format=sub/$jobname.$filenum", "subdirectories"}},
		{[]string{"--file_service_type=sequential:2"}, []string{"file_service_type=sequential:2", ":N"}},
		{[]string{"--direct=1", "--bs=4KiB"}, []string{"bs=4KiB", "4000 bytes", "kb_base"}},
		{[]string{"--pool=rbd"}, []string{"pool=rbd", "ioengine=rados or rbd"}},
	} {
		args := append(append(append([]string{}, dev...), c.args...), "--name=j")
		wantContains(t, parseErr(t, args, nil, nil), c.want...)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--size=1m", "--ioengine=rbd", "--pool=rbd"}, []string{"needs pool= and rbdname="}},
		{[]string{"--ioengine=rados", "--pool=p"}, []string{"ioengine=rados needs size="}},
		{[]string{"--ioengine=rados", "--pool=p", "--size=4m", "--fsync=1"}, []string{"fsync and end_fsync are not supported with ioengine=rados"}},
		{[]string{"--ioengine=null"}, []string{"ioengine=null needs size="}},
		{[]string{"--directory=/mnt"}, []string{`directory "/mnt"`, "needs size="}},
	} {
		wantContains(t, parseErr(t, append(c.args, "--name=j"), nil, nil), c.want...)
	}
}

// Job files written on Windows, or by editors that put a byte order mark
// first, read the same.
func TestLineEndings(t *testing.T) {
	fsys := files{"w.fio": "\ufeff[global]\r\nioengine=null\r\nsize=1m ; trailing comment\r\n\r\n[w]\r\nrw=write\r\n"}
	j := mustParse(t, []string{"w.fio"}, fsys, nil).Jobs[0]
	if j.Name != "w" || j.Workload.FileSize != 1<<20 || j.Workload.ReadPercent != 0 {
		t.Errorf("job %q %+v", j.Name, j.Workload)
	}
}

// fio looks an include up as given (from the working directory) before
// looking next to the including file.
func TestIncludeLookupOrder(t *testing.T) {
	fsys := files{
		"jobs/main.fio":   "[j]\nioengine=null\ninclude common.fio\n",
		"common.fio":      "size=1m\n",
		"jobs/common.fio": "size=2m\n",
	}
	if size := mustParse(t, []string{"jobs/main.fio"}, fsys, nil).Jobs[0].Workload.FileSize; size != 1<<20 {
		t.Errorf("size %s: the file next to the job file won over the one in the working directory", size)
	}
}

// fio's own corrections of the batch options, as its output shows them.
func TestIODepthBatch(t *testing.T) {
	base := []string{"--ioengine=null", "--size=1m", "--iodepth=32"}
	j := mustParse(t, append(base, "--name=j"), nil, nil).Jobs[0]
	if j.IODepthBatchSubmit != 1 || j.IODepthBatchCompleteMin != 1 || j.IODepthBatchCompleteMax != 1 {
		t.Errorf("defaults %d/%d/%d", j.IODepthBatchSubmit, j.IODepthBatchCompleteMin, j.IODepthBatchCompleteMax)
	}
	j = mustParse(t, append(base, "--iodepth_batch=0", "--iodepth_batch_complete_min=8", "--name=j"), nil, nil).Jobs[0]
	if j.IODepthBatchSubmit != 32 || j.IODepthBatchCompleteMax != 8 {
		t.Errorf("iodepth_batch=0: %d, complete max %d", j.IODepthBatchSubmit, j.IODepthBatchCompleteMax)
	}
	if j.Workload.SubmitBatch != 0 {
		t.Errorf("null engine: submit batch %d; want none, it has no kernel queue", j.Workload.SubmitBatch)
	}
}

// A kernel queue submits as fio would: each I/O in its own call unless
// iodepth_batch_submit says more.
func TestIODepthBatchSubmitsAsFio(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	for _, c := range []struct {
		extra []string
		want  int
	}{
		{nil, 1},
		{[]string{"--iodepth_batch_submit=16"}, 16},
		{[]string{"--iodepth_batch=0"}, 64},
		{[]string{"--iodepth_batch=100"}, 64},
	} {
		for _, engine := range []string{"libaio", "io_uring"} {
			args := append([]string{"--ioengine=" + engine, "--filename=" + file, "--size=1m", "--iodepth=64", "--name=j"}, c.extra...)
			w := mustParse(t, args, nil, nil).Jobs[0].Workload
			if w.SubmitBatch != c.want || w.QueueDepth != 64 {
				t.Errorf("%s %v: submit batch %d at depth %d; want %d at 64", engine, c.extra, w.SubmitBatch, w.QueueDepth, c.want)
			}
		}
	}
}
