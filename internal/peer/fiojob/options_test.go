package fiojob

import (
	"slices"
	"testing"
	"time"

	"github.com/cephbench/cephbench/spec"
)

// dev is a job on a device, with size, so that the option under test is
// the only thing that varies.
var dev = []string{"--filename=/dev/sdx", "--size=1g"}

func devJob(t *testing.T, args ...string) Job {
	t.Helper()
	a := append(append(append([]string{}, dev...), args...), "--name=j")
	return mustParse(t, a, nil, nil).Jobs[0]
}

// Each alias sets the same thing as the option's own name.
func TestAliases(t *testing.T) {
	for _, c := range []struct{ alias, name, value string }{
		{"readwrite", "rw", "randwrite"},
		{"blocksize", "bs", "64k"},
		{"timeout", "runtime", "30"},
		{"io_limit", "io_size", "5g"},
		{"fileoffset", "offset", "0"},
		{"nr_files", "nrfiles", "1"},
		{"wait_for_previous", "stonewall", "1"},
		{"iodepth_batch_submit", "iodepth_batch", "8"},
		{"iodepth_batch_complete", "iodepth_batch_complete_min", "4"},
	} {
		viaAlias := devJob(t, "--"+c.alias+"="+c.value)
		viaName := devJob(t, "--"+c.name+"="+c.value)
		viaAlias.Options, viaName.Options = nil, nil
		if !equalJobs(viaAlias, viaName) {
			t.Errorf("%s=%s gives\n%+v\n%s=%s gives\n%+v", c.alias, c.value, viaAlias, c.name, c.value, viaName)
		}
		// fio's JSON names the option, not the alias.
		fileJob := mustParse(t, []string{"a.fio"}, files{"a.fio": "[j]\nfilename=/dev/sdx\nsize=1g\n" + c.alias + "=" + c.value + "\n"}, nil).Jobs[0]
		if got := fileJob.Options[2]; got != (Option{c.name, c.value}) {
			t.Errorf("%s=%s recorded as %v", c.alias, c.value, got)
		}
	}
	if j := devJob(t, "--rw=randrw", "--rwmixwrite=30"); j.Workload.ReadPercent != 70 {
		t.Errorf("rwmixwrite=30: %d%% reads, want 70", j.Workload.ReadPercent)
	}
	if j := devJob(t, "--rw=rw", "--rwmixread=80"); j.Workload.ReadPercent != 80 || j.Workload.Pattern != spec.Sequential {
		t.Errorf("rwmixread=80: %s %d%%", j.Workload.Pattern, j.Workload.ReadPercent)
	}
	if j := devJob(t, "--readwrite=readwrite"); j.RW != "rw" || j.Workload.ReadPercent != 50 {
		t.Errorf("readwrite=readwrite: rw %q %d%%", j.RW, j.Workload.ReadPercent)
	}
	if j := devJob(t); j.RW != "read" || j.Workload.ReadPercent != 100 || j.Workload.BlockSize != 4096 || j.IOEngine != "psync" {
		t.Errorf("fio's defaults: rw %q %d%% bs %s engine %q", j.RW, j.Workload.ReadPercent, j.Workload.BlockSize, j.IOEngine)
	}
}

func equalJobs(a, b Job) bool {
	return a.Workload == b.Workload && a.RW == b.RW && a.BS == b.BS && a.Stonewall == b.Stonewall &&
		a.IODepthBatchSubmit == b.IODepthBatchSubmit && a.IODepthBatchCompleteMin == b.IODepthBatchCompleteMin &&
		a.WholeTarget == b.WholeTarget
}

func TestEngines(t *testing.T) {
	for _, c := range []struct {
		args     []string
		target   string
		ioengine string // the Workload's
		depth    int
	}{
		{[]string{"--ioengine=sync", "--iodepth=32"}, "file:///dev/sdx", "psync", 1},
		{[]string{"--ioengine=psync", "--iodepth=32"}, "file:///dev/sdx", "psync", 1},
		{[]string{"--ioengine=vsync"}, "file:///dev/sdx", "psync", 1},
		{[]string{"--ioengine=pvsync"}, "file:///dev/sdx", "psync", 1},
		{[]string{"--ioengine=pvsync2"}, "file:///dev/sdx", "psync", 1},
		{[]string{"--ioengine=libaio", "--iodepth=32"}, "file:///dev/sdx", "libaio", 32},
		{[]string{"--ioengine=io_uring", "--iodepth=64"}, "file:///dev/sdx", "io_uring", 64},
		{[]string{"--ioengine=null", "--iodepth=8"}, "null://", "", 8},
		{[]string{"--ioengine=rbd", "--pool=fast", "--rbdname=img", "--iodepth=16"}, "rbd://fast/img?id=admin", "", 16},
		{[]string{"--ioengine=rbd", "--pool=fast", "--rbdname=img", "--clientname=bench"}, "rbd://fast/img?id=bench", "", 1},
		{[]string{"--ioengine=rbd", "--pool=fast", "--rbdname=img", "--clientname=client.bench", "--clustername=east"}, "rbd://fast/img?cluster=east&name=client.bench", "", 1},
		{[]string{"--ioengine=rados", "--pool=data", "--clientname=bench"}, "rados://data?id=bench", "", 1},
		{[]string{"--ioengine=rados", "--pool=data", "--conf=/etc/ceph/x.conf"}, "rados://data?conf=%2Fetc%2Fceph%2Fx.conf&id=admin", "", 1},
	} {
		j := devJob(t, c.args...)
		w := j.Workload
		if w.Target.String() != c.target || w.IOEngine != c.ioengine || w.QueueDepth != c.depth {
			t.Errorf("%q: target %s engine %q depth %d; want %s %q %d", c.args, w.Target, w.IOEngine, w.QueueDepth, c.target, c.ioengine, c.depth)
		}
		if j.IOEngine != c.args[0][len("--ioengine="):] {
			t.Errorf("%q: job engine %q", c.args, j.IOEngine)
		}
	}
	// rados: one object of size per clone, rewritten as loops or time go on.
	w := devJob(t, "--ioengine=rados", "--pool=data", "--bs=4m", "--size=64m", "--numjobs=4", "--rw=write").Workload
	if w.ObjectSize != 64<<20 || w.Objects != 4 || !w.Cycle || w.TotalBytes != 4*64<<20 || w.FileSize != 0 {
		t.Errorf("rados: %+v", w)
	}
	// Without filename, a directory (default the working one) of per-clone
	// files; with both, the file is in the directory.
	if w := mustParse(t, []string{"--size=1m", "--directory=/mnt/cephfs", "--numjobs=3", "--name=j"}, nil, nil).Jobs[0].Workload; w.Target.Location != "/mnt/cephfs" || w.Workers != 3 || w.TotalBytes != 3<<20 {
		t.Errorf("directory: %+v", w)
	}
	if w := mustParse(t, []string{"--size=1m", "--directory=/mnt", "--filename=f.dat", "--name=j"}, nil, nil).Jobs[0].Workload; w.Target.Location != "/mnt/f.dat" {
		t.Errorf("directory and filename: %s", w.Target)
	}
	if w := mustParse(t, []string{"--size=1m", `--filename=/data/a\:b`, "--name=j"}, nil, nil).Jobs[0].Workload; w.Target.Location != "/data/a:b" {
		t.Errorf(`filename with \: %s`, w.Target)
	}
}

// A job without size on a file, device or image does one pass over it;
// the caller gives the size it finds.
func TestWholeTarget(t *testing.T) {
	j := mustParse(t, []string{"--filename=/dev/sdx", "--bs=1m", "--numjobs=2", "--loops=3", "--name=j"}, nil, nil).Jobs[0]
	if !j.WholeTarget || j.Workload.TotalBytes != 0 || j.Workload.FileSize != 0 {
		t.Fatalf("whole target %v total %s size %s", j.WholeTarget, j.Workload.TotalBytes, j.Workload.FileSize)
	}
	if err := j.Workload.Validate(); err == nil {
		t.Error("a job without any bound validates before it is bound to its passes")
	}
	if err := j.Workload.BoundToPasses(10<<20+5, j.Passes()); err != nil {
		t.Fatal(err)
	}
	// 10 whole blocks, 3 loops, 2 clones.
	if j.Workload.TotalBytes != 60<<20 {
		t.Errorf("total %s", j.Workload.TotalBytes)
	}
	k := mustParse(t, []string{"--filename=/dev/sdx", "--bs=1m", "--name=k"}, nil, nil).Jobs[0]
	if err := k.Workload.BoundToPasses(4096, k.Passes()); err == nil {
		t.Error("a target smaller than a block is accepted")
	}
	// time_based: the duration alone bounds it.
	if j := mustParse(t, []string{"--filename=/dev/sdx", "--time_based", "--runtime=1m", "--name=j"}, nil, nil).Jobs[0]; j.WholeTarget || j.Workload.Duration != spec.Duration(time.Minute) {
		t.Errorf("time_based: whole target %v duration %s", j.WholeTarget, j.Workload.Duration)
	}
}

// fio paces and checks each direction of each clone on its own; a
// workload's rates are totals over its workers, per direction.
func TestRates(t *testing.T) {
	type rates struct{ read, write spec.DirRate }
	for _, c := range []struct {
		args []string
		want rates
	}{
		{[]string{"--rw=read", "--bs=4k", "--rate=1m"}, rates{read: spec.DirRate{Bytes: 1 << 20}}},
		{[]string{"--rw=read", "--bs=4k", "--rate=1m", "--numjobs=4"}, rates{read: spec.DirRate{Bytes: 4 << 20}}},
		{[]string{"--rw=write", "--bs=4k", "--rate_iops=500", "--numjobs=2"}, rates{write: spec.DirRate{IOPS: 1000}}},
		{[]string{"--rw=write", "--bs=4k", "--rate=,1m"}, rates{write: spec.DirRate{Bytes: 1 << 20}}},
		{[]string{"--rw=read", "--bs=4k", "--rate=,1m"}, rates{}}, // caps writes only
		{[]string{"--rw=randrw", "--bs=4k", "--rate_iops=100"}, rates{spec.DirRate{IOPS: 100}, spec.DirRate{IOPS: 100}}},
		{[]string{"--rw=randrw", "--rate_iops=200,50", "--rwmixread=70"}, rates{spec.DirRate{IOPS: 200}, spec.DirRate{IOPS: 50}}},
		{[]string{"--rw=randrw", "--rate_iops=200,"}, rates{read: spec.DirRate{IOPS: 200}}},
		{[]string{"--rw=randrw", "--rate=,2m"}, rates{write: spec.DirRate{Bytes: 2 << 20}}},
		{[]string{"--rw=randrw", "--bs=4k", "--rate=1m,", "--rate_iops=,10"}, rates{spec.DirRate{Bytes: 1 << 20}, spec.DirRate{IOPS: 10}}},
		{[]string{"--rw=randrw", "--rate_iops_min=10,20", "--numjobs=2"}, rates{spec.DirRate{MinIOPS: 20}, spec.DirRate{MinIOPS: 40}}},
		{[]string{"--rw=read", "--ratemin=1m", "--rate=2m"}, rates{read: spec.DirRate{Bytes: 2 << 20, MinBytes: 1 << 20}}},
	} {
		w := devJob(t, c.args...).Workload
		if got := (rates{w.ReadRate, w.WriteRate}); got != c.want {
			t.Errorf("%q: %+v, want %+v", c.args, got, c.want)
		}
		if w.RateIOPS != 0 || w.RateBytes != 0 {
			t.Errorf("%q: a total rate as well", c.args)
		}
	}
	w := devJob(t, "--rw=randread", "--rate_iops_min=5", "--ratecycle=250", "--rate_process=poisson", "--rate_ignore_thinktime=1").Workload
	if w.RateCycle != spec.Duration(250*time.Millisecond) || w.RateProcess != "poisson" {
		t.Errorf("rate cycle %s, process %q", w.RateCycle, w.RateProcess)
	}
	if w := devJob(t, "--rw=randread", "--rate_iops=5").Workload; w.RateCycle != 0 || w.RateProcess != "" {
		t.Errorf("without floors or process: rate cycle %s, process %q", w.RateCycle, w.RateProcess)
	}
}

// Everything else a job carries for the output and the caller.
func TestCarried(t *testing.T) {
	j := devJob(t, "--rw=randrw", "--ramp_time=5s", "--startdelay=2", "--fsync=32", "--end_fsync=1",
		"--unlink=1", "--verify=md5", "--percentile_list=50:99:99.9", "--lat_percentiles=1",
		"--clat_percentiles=0", "--norandommap", "--randrepeat=0", "--iodepth=16",
		"--iodepth_batch=4", "--iodepth_batch_complete_min=2", "--iodepth_batch_complete_max=8",
		"--ioengine=libaio", "--description=a \"quoted\" run", "--kb_base=1000")
	w := j.Workload
	if w.Ramp != spec.Duration(5*time.Second) || !w.Verify || j.VerifyAlg != "md5" {
		t.Errorf("ramp %s verify %v %q", w.Ramp, w.Verify, j.VerifyAlg)
	}
	if j.StartDelay != 2*time.Second || j.Workload.FsyncEvery != 32 || !j.Workload.EndFsync || !j.Unlink {
		t.Errorf("startdelay %s fsync %d end_fsync %v unlink %v", j.StartDelay, j.Workload.FsyncEvery, j.Workload.EndFsync, j.Unlink)
	}
	if !slices.Equal(j.PercentileList, []float64{50, 99, 99.9}) || !j.LatPercentiles || j.ClatPercentiles {
		t.Errorf("percentiles %v lat %v clat %v", j.PercentileList, j.LatPercentiles, j.ClatPercentiles)
	}
	if !j.NoRandomMap || j.RandRepeat || j.IODepthBatchSubmit != 4 || j.IODepthBatchCompleteMin != 2 || j.IODepthBatchCompleteMax != 8 {
		t.Errorf("norandommap %v randrepeat %v batch %d/%d/%d", j.NoRandomMap, j.RandRepeat, j.IODepthBatchSubmit, j.IODepthBatchCompleteMin, j.IODepthBatchCompleteMax)
	}
	if j.Description != `a "quoted" run` || j.KBBase != 1000 {
		t.Errorf("description %q kb_base %d", j.Description, j.KBBase)
	}
	if d := devJob(t); !slices.Equal(d.PercentileList, defaultPercentiles) || !d.ClatPercentiles || d.LatPercentiles || !d.RandRepeat || d.Loops != 1 {
		t.Errorf("defaults: %v clat %v lat %v randrepeat %v loops %d", d.PercentileList, d.ClatPercentiles, d.LatPercentiles, d.RandRepeat, d.Loops)
	}
	// Quotes around a job file value go; the JSON keeps the value as written.
	fj := mustParse(t, []string{"q.fio"}, files{"q.fio": "[q]\nfilename=/dev/sdx\ndescription = \"write test; 4M\"\n"}, nil).Jobs[0]
	if fj.Description != `"write test` {
		// ';' starts a comment anywhere in fio's job files.
		t.Errorf("description %q", fj.Description)
	}
	fj = mustParse(t, []string{"q.fio"}, files{"q.fio": "[q]\nfilename=/dev/sdx\ndescription = \"write test of 4M\"\n"}, nil).Jobs[0]
	if fj.Description != "write test of 4M" || fj.Options[1] != (Option{"description", `"write test of 4M"`}) {
		t.Errorf("description %q options %v", fj.Description, fj.Options)
	}
}

// kb_base applies to sizes before it on the command line only after it;
// in a job file section it applies first, as fio sorts it first.
func TestKBBaseOrder(t *testing.T) {
	if bs := devJob(t, "--bs=4k", "--kb_base=1000").Workload.BlockSize; bs != 4096 {
		t.Errorf("command line bs=4k then kb_base=1000: %d", bs)
	}
	if bs := devJob(t, "--kb_base=1000", "--bs=4k").Workload.BlockSize; bs != 4000 {
		t.Errorf("command line kb_base=1000 then bs=4k: %d", bs)
	}
	j := mustParse(t, []string{"k.fio"}, files{"k.fio": "[k]\nfilename=/dev/sdx\nbs=4k\nkb_base=1000\n"}, nil).Jobs[0]
	if j.Workload.BlockSize != 4000 || j.BS != "4000B-4000B" {
		t.Errorf("job file bs=4k, kb_base=1000: %d %q", j.Workload.BlockSize, j.BS)
	}
}

func TestFioOptions(t *testing.T) {
	job := []string{"--ioengine=null", "--size=1m", "--name=j"}
	for _, c := range []struct {
		args    []string
		formats []string
	}{
		{nil, []string{"normal"}},
		{[]string{"--output-format=json"}, []string{"json"}},
		{[]string{"--output-format", "json,normal"}, []string{"json", "normal"}},
		{[]string{"--output-format=json,json+"}, []string{"json+"}},
		{[]string{"--output-format=terse,minimal,csv"}, []string{"terse"}},
		{[]string{"--output-format=json", "--minimal"}, []string{"terse"}},
	} {
		plan := mustParse(t, append(c.args, job...), nil, nil)
		if !slices.Equal(plan.OutputFormats, c.formats) {
			t.Errorf("%q: formats %q, want %q", c.args, plan.OutputFormats, c.formats)
		}
	}
	plan := mustParse(t, append([]string{"--output=out.txt", "--status-interval", "10", "--force", "--keep", "--results", "res"}, job...), nil, nil)
	if plan.Output != "out.txt" || plan.StatusInterval != 10*time.Second || !plan.Force || !plan.Keep || plan.ResultsDir != "res" {
		t.Errorf("plan %+v", plan)
	}
	if w := plan.Jobs[0].Workload; !w.Force || !w.Keep {
		t.Errorf("--force/--keep not in the workload: %+v", w)
	}
	plan = mustParse(t, append([]string{"-output", "o.json", "-status-interval=500ms", "--keep=false"}, job...), nil, nil)
	if plan.Output != "o.json" || plan.StatusInterval != 500*time.Millisecond || plan.Keep {
		t.Errorf("plan %+v", plan)
	}
	for _, args := range [][]string{{"--help"}, {"--version"}, {"-h", "--bogus"}, {"job.fio", "--version"}} {
		plan, err := Parse(args, noEnv, files{}.read)
		if err != nil || !(plan.Help || plan.Version) || len(plan.Jobs) != 0 {
			t.Errorf("%q: %+v, %v", args, plan, err)
		}
	}
	// After "--", everything is a job file, even if it looks like an option.
	plan = mustParse(t, []string{"--", "-odd.fio"}, files{"-odd.fio": "[o]\nioengine=null\nsize=1m\n"}, nil)
	if plan.Jobs[0].Name != "o" {
		t.Errorf("jobs %v", plan.Jobs)
	}
}

// Jobs in one directory get files named after them, as in fio; two of one
// name that run together would share theirs.
func TestSharedDirectory(t *testing.T) {
	shared := "[global]\nsize=1m\n[a]\nrw=read\n[a]\nrw=write\n"
	wantContains(t, parseErr(t, []string{"s.fio"}, files{"s.fio": shared}, nil), `"a" (s.fio:3)`, `"a" (s.fio:5)`, "same time", "stonewall")
	plan := mustParse(t, []string{"s.fio"}, files{"s.fio": "[global]\nsize=1m\n[a]\nrw=read\n[b]\nrw=write\n"}, nil)
	if a, b := plan.Jobs[0].Workload, plan.Jobs[1].Workload; a.FilePrefix != "a" || b.FilePrefix != "b" {
		t.Errorf("file prefixes %q and %q; want the jobs' names", a.FilePrefix, b.FilePrefix)
	}
	for _, ok := range []string{
		"[global]\nsize=1m\n[a]\nrw=read\n[a]\nstonewall\nrw=write\n",
		"[global]\nsize=1m\n[a]\ndirectory=/x\n[b]\ndirectory=/y\n",
		"[global]\nsize=1m\n[a]\nfilename=/x/f\n[b]\nfilename=/x/f\n",
	} {
		mustParse(t, []string{"s.fio"}, files{"s.fio": ok}, nil)
	}
}
