package fiojob

import (
	"slices"
	"strings"
	"testing"
)

// classesOf names the classes name is in.
func classesOf(name string) []string {
	var in []string
	for _, o := range table {
		if o.name == name || o.alias == name {
			in = append(in, "supported (table in options.go)")
		}
	}
	for _, m := range matching {
		if m.name == name {
			in = append(in, "matching (classes.go)")
		}
	}
	if _, ok := noops[name]; ok {
		in = append(in, "no-op (noops in classes.go)")
	}
	if _, ok := refused[name]; ok {
		in = append(in, "refused (refused in classes.go)")
	}
	return in
}

// Every option fio 3.33 knows is supported, accepted as a no-op or
// refused with a reason, never two of these; nothing else is classed.
func TestOptionClasses(t *testing.T) {
	for _, name := range fioOptionNames {
		switch in := classesOf(name); len(in) {
		case 0:
			t.Errorf("fio option %s is in no class: add it to table, noops, matching or refused", name)
		case 1:
		default:
			t.Errorf("fio option %s is in several classes: %s; keep one (a supported option leaves refused)", name, strings.Join(in, ", "))
		}
	}
	classed := slices.Collect(func(yield func(string) bool) {
		for n := range noops {
			yield(n)
		}
		for n := range refused {
			yield(n)
		}
		for _, m := range matching {
			yield(m.name)
		}
		for _, o := range table {
			yield(o.name)
		}
	})
	for _, n := range classed {
		if !slices.Contains(fioOptionNames, n) {
			t.Errorf("%s is classed but is not one of fio 3.33's options (fionames.go)", n)
		}
	}
	if len(noops) != len(noopList) || len(refused) != len(refusedList) {
		t.Errorf("a name is listed twice in noopList or refusedList")
	}
	for n, why := range refused {
		if strings.TrimSpace(why) == "" {
			t.Errorf("refused option %s has no reason", n)
		}
	}
}

// A refused option is one line naming it and why, whether on the command
// line or in a job file.
func TestRefusedOptionsSayWhy(t *testing.T) {
	msg := parseErr(t, []string{"--name=a", "--filename=/dev/sdx", "--trim_percentage=10"}, nil, nil)
	wantContains(t, msg, "command line", `"trim_percentage"`, "not supported by cephbench fio", "trims are not supported")
	msg = parseErr(t, []string{"z.fio"}, files{"z.fio": "[j]\nfilename=/dev/sdx\nzero_buffers\n"}, nil)
	wantContains(t, msg, "z.fio:3", `"zero_buffers"`, "its own verifiable data")
	if strings.Contains(msg, "\n") {
		t.Errorf("refusal on several lines: %q", msg)
	}
}

// The no-op options a run was given are named once, sorted, whichever
// jobs and sections gave them; they change nothing in the jobs.
func TestNoopOptionsGiveOneNote(t *testing.T) {
	jobs := "[global]\ninvalidate=1\nfilename=/dev/sdx\nsize=1m\n[a]\ngtod_reduce=1\nthread\n[b]\ngtod_reduce=1\ncpus_allowed=0-3\n"
	plain := "[global]\nfilename=/dev/sdx\nsize=1m\n[a]\n[b]\n"
	p := mustParse(t, []string{"--disable_lat", "n.fio"}, files{"n.fio": jobs}, nil)
	want := []string{"fio options that change nothing in cephbench, ignored: cpus_allowed, disable_lat, gtod_reduce, invalidate, thread"}
	if !slices.Equal(p.Notes, want) {
		t.Errorf("notes %q; want %q", p.Notes, want)
	}
	q := mustParse(t, []string{"n.fio"}, files{"n.fio": plain}, nil)
	if q.Notes != nil {
		t.Errorf("notes without no-op options: %q", q.Notes)
	}
	for i := range p.Jobs {
		if p.Jobs[i].Workload != q.Jobs[i].Workload {
			t.Errorf("job %s: no-op options changed the workload:\n%+v\n%+v", p.Jobs[i].Name, p.Jobs[i].Workload, q.Jobs[i].Workload)
		}
	}
	// A bare boolean no-op on the command line leaves the next argument
	// alone; one taking a value takes it.
	p = mustParse(t, []string{"--gtod_reduce", "--cpus_allowed", "0-3", "--filename=/dev/sdx", "--name=j"}, nil, nil)
	if len(p.Jobs) != 1 || p.Jobs[0].Workload.Target.Location != "/dev/sdx" {
		t.Errorf("jobs %+v", p.Jobs)
	}
}

// An option that matches what cephbench does is taken with that value and
// refused with another.
func TestMatchingOptions(t *testing.T) {
	for _, ok := range []string{"--sync=0", "--sync=none", "--fadvise_hint=0", "--allow_file_create=1", "--allow_file_create", "--unit_base=8", "--lockfile=none"} {
		p := mustParse(t, []string{"--filename=/dev/sdx", ok, "--name=j"}, nil, nil)
		if p.Notes != nil {
			t.Errorf("%s: notes %q; it is cephbench's own behaviour, not ignored", ok, p.Notes)
		}
	}
	wantContains(t, parseErr(t, []string{"--filename=/dev/sdx", "--sync=1", "--name=j"}, nil, nil), "sync=1", "O_SYNC", "sync=0 or none")
	wantContains(t, parseErr(t, []string{"--filename=/dev/sdx", "--fadvise_hint=1", "--name=j"}, nil, nil), "fadvise_hint=1", "no fadvise hints")
	wantContains(t, parseErr(t, []string{"--filename=/dev/sdx", "--unit_base=1", "--name=j"}, nil, nil), "unit_base=1", "bytes, not bits")
}

// verify= on a write-only job reads back what it wrote (unless
// do_verify=0); on a job that reads, it checks the reads; verify_only
// replays the writes as checked reads.
func TestVerify(t *testing.T) {
	for _, c := range []struct {
		args                 []string
		reads                int
		verify, verifyWrites bool
	}{
		{[]string{"--rw=write", "--verify=crc32c"}, 0, false, true},
		{[]string{"--rw=randwrite", "--verify=meta"}, 0, false, true},
		{[]string{"--rw=write", "--verify=md5", "--do_verify=0"}, 0, false, false},
		{[]string{"--rw=randread", "--verify=sha1"}, 100, true, false},
		{[]string{"--rw=write", "--verify=crc32c", "--verify_only"}, 100, true, false},
		{[]string{"--rw=write", "--verify=crc32c", "--verify_fatal=0"}, 0, false, true},
	} {
		w := devJob(t, c.args...).Workload
		if w.ReadPercent != c.reads || w.Verify != c.verify || w.VerifyWrites != c.verifyWrites {
			t.Errorf("%q: reads %d%%, verify %v, verify writes %v; want %d%%, %v, %v", c.args, w.ReadPercent, w.Verify, w.VerifyWrites, c.reads, c.verify, c.verifyWrites)
		}
	}
	wantContains(t, parseErr(t, append(append([]string{}, dev...), "--rw=write", "--verify=crc32c", "--verify_fatal=1", "--name=j"), nil, nil), "verify_fatal=1", "counts those that fail")
}

// verify_backlog reads back a write-only job's writes as it goes, in
// batches of verify_backlog_batch (default: the backlog); without
// verify it does nothing, as in fio; a job that reads refuses it.
func TestVerifyBacklog(t *testing.T) {
	for _, c := range []struct {
		args           []string
		backlog, batch int64
	}{
		{[]string{"--rw=write", "--verify=crc32c", "--verify_backlog=16"}, 16, 16},
		{[]string{"--rw=randwrite", "--verify=md5", "--verify_backlog=16", "--verify_backlog_batch=4"}, 16, 4},
		{[]string{"--rw=write", "--verify_backlog=16"}, 0, 0},
		{[]string{"--rw=write", "--verify=crc32c", "--do_verify=0", "--verify_backlog=16"}, 0, 0},
	} {
		w := devJob(t, c.args...).Workload
		if w.VerifyBacklog != c.backlog || w.VerifyBacklog > 0 && w.BacklogBatch() != c.batch {
			t.Errorf("%q: backlog %d, batch %d; want %d, %d", c.args, w.VerifyBacklog, w.BacklogBatch(), c.backlog, c.batch)
		}
	}
	wantContains(t, parseErr(t, append(append([]string{}, dev...), "--rw=randrw", "--verify=crc32c", "--verify_backlog=8", "--name=j"), nil, nil), "verify_backlog=8", "write-only")
}
