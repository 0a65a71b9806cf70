//go:build ceph

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/sandbox"
)

// cephPool makes a pool for RADOS on the test run's cluster
// (scripts/test.sh starts a sandbox and sets CEPH_CONF), removed when the
// test ends.
func cephPool(t *testing.T) string { return poolFor(t, "rados") }

// poolFor makes a pool for app: "rados", or "rbd" (initialised as rbd pool
// init does).
func poolFor(t *testing.T, app string) string {
	t.Helper()
	if os.Getenv("CEPH_CONF") == "" {
		t.Skip("no cluster: CEPH_CONF is unset (scripts/test.sh starts a sandbox cluster and sets it)")
	}
	pool := fmt.Sprintf("cbcli%s-%d", app, rand.Uint32())
	ceph(t, "osd", "pool", "create", pool, "8")
	if app == "rbd" {
		tool(t, "rbd", "pool", "init", pool)
	} else {
		ceph(t, "osd", "pool", "application", "enable", pool, app)
	}
	t.Cleanup(func() {
		out, err := exec.Command("ceph", "osd", "pool", "rm", pool, pool, "--yes-i-really-really-mean-it").CombinedOutput()
		if err != nil {
			t.Errorf("removing pool %s: %v\n%s", pool, err, out)
		}
	})
	return pool
}

func ceph(t *testing.T, args ...string) string {
	t.Helper()
	return tool(t, "ceph", args...)
}

func tool(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func poolObjects(t *testing.T, pool string) []string {
	t.Helper()
	return strings.Fields(tool(t, "rados", "-p", pool, "ls"))
}

func TestRadosBenchInteroperatesWithCephsRadosBench(t *testing.T) {
	pool := cephPool(t)
	results := t.TempDir()
	tool(t, "rados", "-p", pool, "put", "precious", "/etc/hostname")

	// cephbench writes; Ceph's rados bench reads and verifies; rados
	// cleanup removes.
	code, out, errOut := cephbench(t, context.Background(), "rados", "bench", "-p", pool, "2", "write", "-b", "64K", "-t", "8", "--no-cleanup", "--results", results)
	if code != 0 {
		t.Fatalf("write: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"Maintaining 8 concurrent writes of 65536 bytes to objects of size 65536", "Object prefix: benchmark_data_",
		"sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)", "Total writes made:", "Bandwidth (MB/sec):",
		"Stddev Bandwidth:", "Average IOPS:", "Average Latency(s):", "Min latency(s):", "Latency percentiles(s): p50", "Result saved to:"} {
		if !strings.Contains(out, want) {
			t.Errorf("rados bench write output lacks %q:\n%s", want, out)
		}
	}
	written := len(poolObjects(t, pool)) - 2 // the foreign object and the metadata object
	if written <= 0 {
		t.Fatalf("the pool holds %v after a kept write", poolObjects(t, pool))
	}
	seq := tool(t, "rados", "bench", "-p", pool, "10", "seq", "-t", "8")
	if strings.Contains(seq, "is not correct") || !strings.Contains(seq, fmt.Sprintf("Total reads made:     %d", written)) {
		t.Errorf("Ceph's rados bench seq did not read cephbench's %d objects cleanly:\n%s", written, seq)
	}
	tool(t, "rados", "-p", pool, "cleanup")
	if left := poolObjects(t, pool); len(left) != 1 || left[0] != "precious" {
		t.Fatalf("after rados cleanup the pool holds %v; want only the foreign object", left)
	}

	// Ceph writes; cephbench reads and verifies (seq and rand); cephbench
	// cleanup removes.
	tool(t, "rados", "bench", "-p", pool, "2", "write", "-b", "64K", "-t", "8", "--no-cleanup")
	cephWritten := len(poolObjects(t, pool)) - 2
	code, out, errOut = cephbench(t, context.Background(), "rados", "bench", "-p", pool, "10", "seq", "-t", "8", "--results", results)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("Total reads made:     %d", cephWritten)) {
		t.Errorf("seq over Ceph's %d objects: exit %d\n%s\n%s", cephWritten, code, out, errOut)
	}
	code, out, errOut = cephbench(t, context.Background(), "rados", "bench", "-p", pool, "1", "rand", "-t", "8", "--format", "json", "--results", results)
	var doc map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc["total_reads_made"] == nil || doc["datas"] == nil {
		t.Errorf("rand --format json: exit %d, not rados bench's JSON:\n%s\n%s", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(results, "*-rados-bench-rand.json"))
	if len(files) != 1 {
		t.Fatalf("rand saved %d results", len(files))
	}
	r, err := result.Load(files[0])
	if err != nil || r.Ops["read"].Errors != 0 || r.Cluster == nil || r.Cluster.Before == nil || r.Cluster.After.OSDs.Up == 0 {
		t.Errorf("rand result: verify errors or no cluster state: %+v, %v", r, err)
	}
	code, out, _ = cephbench(t, context.Background(), "rados", "-p", pool, "cleanup")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("Removed %d objects", cephWritten)) {
		t.Errorf("cephbench rados cleanup: exit %d: %s", code, out)
	}
	if left := poolObjects(t, pool); len(left) != 1 || left[0] != "precious" {
		t.Errorf("after cephbench cleanup the pool holds %v; want only the foreign object", left)
	}
}

func TestRadosBenchWriteCleansUpByDefault(t *testing.T) {
	pool := cephPool(t)
	code, out, errOut := cephbench(t, context.Background(), "rados", "bench", "-p", pool, "1", "write", "-b", "4K", "-t", "16", "--results", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if left := poolObjects(t, pool); len(left) != 0 {
		t.Errorf("a write without --no-cleanup left %d objects", len(left))
	}
}

func TestRadosBenchBadInput(t *testing.T) {
	pool := cephPool(t)
	cases := map[string][]string{
		"missing pool":     {"rados", "bench", "-p", "no-such-pool", "1", "write"},
		"nothing to read":  {"rados", "bench", "-p", pool, "1", "seq"},
		"bad mode":         {"rados", "bench", "-p", pool, "1", "scribble"},
		"bad size":         {"rados", "bench", "-p", pool, "1", "write", "-b", "4Q"},
		"no pool":          {"rados", "bench", "1", "write"},
		"foreign prefix":   {"rados", "-p", pool, "cleanup", "--prefix", "rbd_data"},
		"nothing recorded": {"rados", "-p", pool, "cleanup"},
	}
	for name, args := range cases {
		code, out, errOut := cephbench(t, context.Background(), append(args, "--results", t.TempDir())...)
		if name == "foreign prefix" || name == "nothing recorded" {
			code, out, errOut = cephbench(t, context.Background(), args...)
		}
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code == 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "cephbench: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a one-line error", name, code, out, errOut)
		}
		if name != "nothing recorded" && code != ExitUsage {
			t.Errorf("%s: exit %d; want %d", name, code, ExitUsage)
		}
	}
	if left := poolObjects(t, pool); len(left) != 0 {
		t.Errorf("bad input left objects: %v", left)
	}
}

// stopAnOSD stops osd.0 of the test run's sandbox after delay, and
// restarts it (waiting for the cluster to heal) when the test ends. It
// returns the stop's outcome. Stopping an OSD disturbs every other test on
// the shared sandbox, so scripts/test.sh runs the TestDisruptive tests on
// their own, after the others.
func stopAnOSD(t *testing.T, delay time.Duration) <-chan error {
	t.Helper()
	c := disruptiveSandbox(t, func(c *sandbox.Cluster, ctx context.Context) error { return c.StartOSD(ctx, 0) })
	stopped := make(chan error, 1)
	time.AfterFunc(delay, func() { stopped <- c.StopOSD(context.Background(), 0) })
	return stopped
}

// checkStall runs a cephbench command during which an OSD stops: it must
// end on time, and its result must show the stall instead of hiding it.
func checkStall(t *testing.T, stopped <-chan error, kind string, args ...string) {
	t.Helper()
	r, _ := benchWithin(t, 90*time.Second, args...)
	if err := <-stopped; err != nil {
		t.Fatalf("stopping osd.0: %v", err)
	}
	var slowest int64
	for _, s := range r.Series {
		slowest = max(slowest, s.Kinds[kind].MaxNs)
	}
	if r.Ops[kind].Ops == 0 || slowest < int64(500*time.Millisecond) {
		t.Errorf("%d %ss, slowest second's max latency %v: a stopped OSD must show as a stall", r.Ops[kind].Ops, kind, time.Duration(slowest))
	}
}

// An OSD stopped in the middle of a write.
func TestDisruptiveRadosBenchSurvivesAStoppedOSD(t *testing.T) {
	pool := cephPool(t)
	stopped := stopAnOSD(t, 2*time.Second)
	checkStall(t, stopped, "write", "rados", "bench", "-p", pool, "8", "write", "-b", "4K", "-t", "16")
}

// A full pool makes librados wait for space: a write bench must say so at
// once instead of hanging. The cluster warns of the full pool while the
// test runs, so it runs with the disruptive tests.
func TestDisruptiveRadosBenchRefusesAFullPool(t *testing.T) {
	if os.Getenv("CEPHBENCH_DISRUPTIVE") != "1" {
		t.Skip("CEPHBENCH_DISRUPTIVE is not 1: scripts/test.sh runs the disruptive tests after the others")
	}
	pool := cephPool(t)
	ceph(t, "osd", "pool", "set-quota", pool, "max_objects", "1")
	tool(t, "rados", "-p", pool, "put", "filler", "/etc/hostname")
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(ceph(t, "health", "detail"), "'"+pool+"'") {
		if time.Now().After(deadline) {
			t.Fatalf("the cluster never reported pool %s full:\n%s", pool, ceph(t, "health", "detail"))
		}
		time.Sleep(2 * time.Second)
	}
	code, out, errOut := cephbench(t, context.Background(), "rados", "bench", "-p", pool, "5", "write", "--results", t.TempDir())
	if code != ExitUsage || !strings.Contains(errOut, "cannot take writes") {
		t.Errorf("write to a full pool: exit %d\n%s\n%s", code, out, errOut)
	}
}

// benchWithin runs a cephbench command that must end within limit and save
// one result, and returns that result and the command's stderr.
func benchWithin(t *testing.T, limit time.Duration, args ...string) (*result.Result, string) {
	t.Helper()
	results := t.TempDir()
	begin := time.Now()
	code, out, errOut := cephbench(t, context.Background(), append(args, "--results", results)...)
	if took := time.Since(begin); took > limit {
		t.Fatalf("exit %d after %v; want the run over within %v\n%s\n%s", code, took, limit, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(results, "*.json"))
	if len(files) != 1 {
		t.Fatalf("exit %d, %d results saved\n%s\n%s", code, len(files), out, errOut)
	}
	r, err := result.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return r, errOut
}

// Ops that can never complete (a full pool, PGs with no OSD) fail with
// ETIMEDOUT after --op-timeout and are counted, and the run ends, where
// rados bench waits forever. The pool's PGs map to an empty CRUSH root, so
// the cluster warns of inactive PGs while the test runs.
func TestDisruptiveRadosBenchTimesOutOpsThatCannotComplete(t *testing.T) {
	if os.Getenv("CEPHBENCH_DISRUPTIVE") != "1" {
		t.Skip("CEPHBENCH_DISRUPTIVE is not 1: scripts/test.sh runs the disruptive tests after the others")
	}
	if os.Getenv("CEPH_CONF") == "" {
		t.Skip("no cluster: CEPH_CONF is unset")
	}
	name := fmt.Sprintf("cbnowhere-%d", rand.Uint32())
	ceph(t, "osd", "crush", "add-bucket", name, "root")
	ceph(t, "osd", "crush", "rule", "create-replicated", name, name, "host")
	ceph(t, "osd", "pool", "create", name, "8", "8", "replicated", name)
	t.Cleanup(func() {
		for _, args := range [][]string{
			{"osd", "pool", "rm", name, name, "--yes-i-really-really-mean-it"},
			{"osd", "crush", "rule", "rm", name},
			{"osd", "crush", "remove", name},
		} {
			if out, err := exec.Command("ceph", args...).CombinedOutput(); err != nil {
				t.Errorf("ceph %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
	})
	r, _ := benchWithin(t, 30*time.Second, "rados", "bench", "-p", name, "2", "write", "-b", "4K", "-t", "4", "--op-timeout", "3s")
	if r.Errors["ETIMEDOUT"] == 0 || r.Ops["write"].Ops != 0 {
		t.Errorf("errors %v, %d writes: want the stuck writes counted as ETIMEDOUT and none written", r.Errors, r.Ops["write"].Ops)
	}
}

// A pool that fills up during a write: the writes that can no longer
// complete time out and are counted, the run ends, and its cleanup still
// removes every object it wrote, although the pool is full.
func TestDisruptiveRadosBenchOnAPoolThatFillsUp(t *testing.T) {
	if os.Getenv("CEPHBENCH_DISRUPTIVE") != "1" {
		t.Skip("CEPHBENCH_DISRUPTIVE is not 1: scripts/test.sh runs the disruptive tests after the others")
	}
	pool := cephPool(t)
	time.AfterFunc(3*time.Second, func() {
		_ = exec.Command("ceph", "osd", "pool", "set-quota", pool, "max_objects", "10").Run()
	})
	r, errOut := benchWithin(t, 60*time.Second, "rados", "bench", "-p", pool, "15", "write", "-b", "4K", "-t", "16", "--op-timeout", "3s")
	if r.Ops["write"].Ops == 0 || r.Errors["ETIMEDOUT"] == 0 {
		t.Errorf("%d writes, errors %v: want writes until the pool filled, then ETIMEDOUT", r.Ops["write"].Ops, r.Errors)
	}
	if left := poolObjects(t, pool); len(left) != 0 {
		t.Errorf("the full pool keeps %d of the objects the run wrote\n%s", len(left), errOut)
	}
}

// Report 002's commands as typed, one-dash flags and all, against a real
// pool: a write that keeps its objects, then `bench 30 seq -no-cleanup`
// reading them back (ended early by running out of objects, as Ceph's
// rados ends it) and leaving them in place.
func TestReport002SeqNoCleanupRunsAsTyped(t *testing.T) {
	pool := cephPool(t)
	code, out, errOut := cephbench(t, context.Background(), "rados", "-p", pool, "bench", "3", "write", "-t", "4", "-b", "64K", "-no-cleanup",
		"--results", t.TempDir())
	if code != 0 {
		t.Fatalf("write -no-cleanup: exit %d\n%s\n%s", code, out, errOut)
	}
	written := len(poolObjects(t, pool))
	code, out, errOut = cephbench(t, context.Background(), "rados", "-p", pool, "bench", "30", "seq", "-no-cleanup", "--results", t.TempDir())
	if code != 0 {
		t.Fatalf("rados -p %s bench 30 seq -no-cleanup: exit %d\n%s\n%s", pool, code, out, errOut)
	}
	if !strings.Contains(out, "Bandwidth (MB/sec):") || !strings.Contains(out, "Total reads made:") {
		t.Errorf("seq printed no read summary:\n%s", out)
	}
	if left := len(poolObjects(t, pool)); written < 2 || left != written {
		t.Errorf("%d objects after the write, %d after seq -no-cleanup; want them all kept", written, left)
	}
}
