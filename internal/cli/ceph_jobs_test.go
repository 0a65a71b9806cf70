//go:build ceph

package cli

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/spec"
)

// parseInPlan parses a command line as a plan does, into its job saving
// under a folder of the plan's, without running it.
func parseInPlan(t *testing.T, args ...string) frontend.Job {
	t.Helper()
	results := t.TempDir()
	job, err := Env{}.parseJob(args, results)
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	if len(job.Steps) != 1 || job.Steps[0].Front.Command != job.Command || filepath.Dir(job.Steps[0].Save) != results {
		t.Fatalf("%s: %+v; want one step of the job's command saving in %s", strings.Join(args, " "), job, results)
	}
	return job
}

// The Ceph tools' command lines become jobs without touching a cluster (the
// pool named does not exist): a plan checks them, times them and ships
// them before anything runs.
func TestCephToolCommandLinesParseIntoJobsWithoutTheCluster(t *testing.T) {
	cases := []struct {
		args    []string
		command string
		took    time.Duration
		exact   bool
	}{
		{[]string{"rados", "bench", "-p", "no-such-pool", "60", "write", "-b", "64K"}, "rados bench", time.Minute, true},
		{[]string{"rados", "bench", "-p", "no-such-pool", "60", "seq", "-f", "json"}, "rados bench", time.Minute, false},
		{[]string{"rados", "-p", "no-such-pool", "load-gen", "--run-length", "90"}, "rados load-gen", 90 * time.Second, true},
		{[]string{"rbd", "bench", "no-such-pool/img", "--io-type", "read", "--duration", "30s"}, "rbd bench", 30 * time.Second, false},
		{[]string{"rbd", "bench-write", "no-such-pool/img"}, "rbd bench", 0, false},
	}
	for _, c := range cases {
		job := parseInPlan(t, c.args...)
		took, exact := frontend.Estimate(job)
		if job.Command != c.command || took != c.took || exact != c.exact {
			t.Errorf("%s: %q, %v (exact %v); want %q, %v (exact %v)", strings.Join(c.args, " "), job.Command, took, exact, c.command, c.took, c.exact)
		}
		b, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		var back frontend.Job
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, job) {
			t.Errorf("%s: the job does not come back from JSON (%v):\n%s", strings.Join(c.args, " "), err, b)
		}
	}
}

// A read bench's sizes are those of the last write, which only its run
// reads from the pool; the job says what it reads and how it prints.
func TestRadosBenchReadJobTakesItsSizesWhenItRuns(t *testing.T) {
	st := parseInPlan(t, "rados", "bench", "-p", "no-such-pool", "10", "rand", "-b", "64K", "-f", "json-pretty").Steps[0]
	opts := st.Front.RadosBench
	if opts == nil || opts.Mode != "rand" || opts.Format != "json-pretty" {
		t.Fatalf("rados bench options %+v; want rand, json-pretty", opts)
	}
	if w := st.Workload; w.ReadPercent != 100 || !w.Keep || w.BlockSize != 0 || w.ObjectSize != 0 || w.Pattern != spec.Random {
		t.Errorf("the read's workload before it runs: %+v; want random reads of sizes still unknown, keeping the objects", w)
	}
	if !strings.HasSuffix(st.Save, "-rados-bench-rand.json") {
		t.Errorf("saved to %q", st.Save)
	}
}

// rbd bench-write is rbd bench --io-type write, and says it is deprecated
// as rbd does.
func TestRBDBenchWriteIsBenchWithIOTypeWrite(t *testing.T) {
	old := parseInPlan(t, "rbd", "bench-write", "-p", "no-such-pool", "img", "--io-size", "8K")
	now := parseInPlan(t, "rbd", "bench", "-p", "no-such-pool", "img", "--io-type", "write", "--io-size", "8K")
	if !slices.Equal(old.Notes, []string{"rbd: bench-write is deprecated, use rbd bench --io-type write ..."}) || now.Notes != nil {
		t.Errorf("notes %q and %q; want bench-write's deprecation alone", old.Notes, now.Notes)
	}
	old.Notes = nil
	old.Steps[0].Save, now.Steps[0].Save = "", ""
	if !reflect.DeepEqual(old, now) {
		t.Errorf("bench-write's job %+v\nis not bench --io-type write's %+v", old, now)
	}
	if opts := now.Steps[0].Front.RBDBench; opts == nil || opts.IOType != "write" || now.Steps[0].Name != "rbd-bench-write" {
		t.Errorf("step %q, rbd bench options %+v; want rbd-bench-write, io type write", now.Steps[0].Name, opts)
	}
}

// The files a Ceph tool's command line names (--conf, --keyring,
// --results) are taken from the command's working directory.
func TestCephToolsTakeTheirFilesFromTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"rados", "-p", "pool", "-c", "my.conf", "-k", "my.keyring", "bench", "10", "write", "--results", "res"},
		{"rados", "-p", "pool", "-c", "my.conf", "-k", "my.keyring", "load-gen", "--results", "res"},
		{"rbd", "-c", "my.conf", "-k", "my.keyring", "bench", "pool/img", "--io-type", "read", "--results", "res"},
	} {
		var job frontend.Job
		if code := Main(context.Background(), Env{Dir: dir, parsed: &job}, args); code != ExitOK {
			t.Fatalf("%s: exit %d", strings.Join(args, " "), code)
		}
		st := job.Steps[0]
		_, query, _ := strings.Cut(st.Workload.Target.Location, "?")
		q, err := url.ParseQuery(query)
		if conf, keyring := filepath.Join(dir, "my.conf"), filepath.Join(dir, "my.keyring"); err != nil || q.Get("conf") != conf || q.Get("keyring") != keyring {
			t.Errorf("%s: target %q (%v); want conf %s, keyring %s", strings.Join(args, " "), st.Workload.Target.Location, err, conf, keyring)
		}
		if filepath.Dir(st.Save) != filepath.Join(dir, "res") {
			t.Errorf("%s: saves to %s; want under %s", strings.Join(args, " "), st.Save, filepath.Join(dir, "res"))
		}
	}
}

// Report 002 types "rados -p rbd bench 30 seq -no-cleanup", with one dash,
// which Ceph's rados runs (it ignores the word): cephbench takes it, and
// rados bench's other long flags, with one dash as with two.
func TestRadosBenchTakesLongFlagsWithOneDash(t *testing.T) {
	seq := parseInPlan(t, "rados", "-p", "no-such-pool", "bench", "30", "seq", "-no-cleanup").Steps[0]
	if opts := seq.Front.RadosBench; opts == nil || opts.Mode != "seq" || seq.Workload.Duration != spec.Duration(30*time.Second) ||
		!strings.HasPrefix(seq.Workload.Target.Location, "no-such-pool") || seq.Workload.ReadPercent != 100 {
		t.Errorf("seq -no-cleanup: %+v, %+v; want a 30 s sequential read of pool no-such-pool", opts, seq.Workload)
	}
	// Read as shorthands, -no-cleanup was -n o-cleanup: the client name
	// librados refused (ret=-22).
	if _, query, _ := strings.Cut(seq.Workload.Target.Location, "?"); strings.Contains(query, "o-cleanup") {
		t.Errorf("seq -no-cleanup: target %s names client o-cleanup", seq.Workload.Target.Location)
	}
	w := parseInPlan(t, "rados", "-p", "no-such-pool", "bench", "10", "write", "-no-cleanup", "-run-name", "r1", "-concurrent-ios=4").Steps[0].Workload
	if !w.Keep || w.QueueDepth != 4 || !strings.Contains(w.Target.Location, "run-name=r1") {
		t.Errorf("write -no-cleanup -run-name r1 -concurrent-ios=4: keep %v, depth %d, target %s", w.Keep, w.QueueDepth, w.Target.Location)
	}
	var job frontend.Job
	if code := Main(context.Background(), Env{parsed: &job}, []string{"rados", "-p", "no-such-pool", "bench", "30", "seq", "-no-cleanup"}); code != ExitOK {
		t.Errorf("cephbench rados -p no-such-pool bench 30 seq -no-cleanup: exit %d", code)
	}
}
