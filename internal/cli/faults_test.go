//go:build ceph

package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/internal/vethtest"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/sandbox"
)

// The tests below break the test run's sandbox under a run (a monitor,
// radosgw, every OSD) and check that the run ends on time, counts what
// failed and saves a result that says what happened. Each restarts what
// it broke and waits for the sandbox to be healthy again when it ends,
// failed or not, so scripts/test.sh runs them with the other disruptive
// tests, after the rest.

// Margins for a 2-core machine shared with other work: a run's last ops
// and its end can be late by seconds, and a bound any tighter would fail
// on load rather than on a hang.
const (
	runMargin     = 5 * time.Second
	commandMargin = 30 * time.Second
	// snapshotTimeout is what reading the cluster's state can take when
	// the monitor does not answer: librados' rados_mon_op_timeout, as the
	// Ceph engines set it.
	snapshotTimeout = 15 * time.Second
)

// disruptiveSandbox loads the test run's sandbox, or skips the test
// unless the disruptive tests were asked for. heal, when the test ends,
// restarts what the test stopped and waits for the sandbox to be healthy.
func disruptiveSandbox(t *testing.T, heal func(*sandbox.Cluster, context.Context) error) *sandbox.Cluster {
	t.Helper()
	dir := os.Getenv("CEPHBENCH_SANDBOX")
	if dir == "" || os.Getenv("CEPHBENCH_DISRUPTIVE") != "1" {
		t.Skip("needs CEPHBENCH_SANDBOX and CEPHBENCH_DISRUPTIVE=1: scripts/test.sh runs the disruptive tests after the others")
	}
	c, err := sandbox.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := heal(c, ctx); err != nil {
			t.Errorf("restarting what the test stopped: %v", err)
		}
		if err := c.WaitHealthy(ctx); err != nil {
			t.Errorf("the sandbox did not recover: %v", err)
		}
	})
	return c
}

// runBroken runs a cephbench command that saves one result, with fault
// happening delay after the run starts (when its tick log appears), and
// checks the run ended by its planned end (its start plus duration) plus
// lateBy and runMargin, and the command within a snapshot's timeout and
// commandMargin more. It returns what the run left.
func runBroken(t *testing.T, delay time.Duration, fault func(context.Context) error, duration, lateBy time.Duration,
	args ...string) brokenRun {
	t.Helper()
	results := t.TempDir()
	faulted := make(chan error, 1)
	go func() { faulted <- faultOnceRunning(results, delay, fault) }()
	begin := time.Now()
	code, out, errOut := cephbench(t, context.Background(), append(args, "--results", results)...)
	took := time.Since(begin)
	ferr := <-faulted
	files, _ := filepath.Glob(filepath.Join(results, "*.json"))
	more, _ := filepath.Glob(filepath.Join(results, "*", "*.json"))
	if files = append(files, more...); len(files) != 1 {
		t.Fatalf("exit %d after %v, %d results saved; fault: %v\n%s\n%s", code, took, len(files), ferr, out, errOut)
	}
	r, err := result.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	planned := r.Start.Add(duration)
	notes := strings.Join(r.Notes, " | ")
	t.Logf("planned end %s, run ended %s (%+.1fs), command took %.1fs, exit %d; %d ops, failed %v, errors %v; notes: %s",
		planned.Format("15:04:05.0"), r.End.Format("15:04:05.0"), r.End.Sub(planned).Seconds(), took.Seconds(), code,
		opsOf(r), errorsOf(r), r.Errors, notes)
	if r.End.After(planned.Add(lateBy + runMargin)) {
		t.Errorf("the run ended %v after its planned end; want within %v", r.End.Sub(planned), lateBy+runMargin)
	}
	if limit := duration + lateBy + snapshotTimeout + commandMargin; took > limit {
		t.Errorf("the command took %v; want within %v", took, limit)
	}
	return brokenRun{r, notes, code, out, errOut, ferr}
}

// brokenRun is what a run under a fault left: its result, the result's
// notes on one line, the command's exit code and stderr, and the fault's
// error.
type brokenRun struct {
	*result.Result
	notes          string
	code           int
	stdout, stderr string
	fault          error
}

// faultOnceRunning calls fault delay after a tick log appears under
// results, where a run makes it as it starts; it gives up after a minute
// without one.
func faultOnceRunning(results string, delay time.Duration, fault func(context.Context) error) error {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		logs, _ := filepath.Glob(filepath.Join(results, "*.hlog*"))
		more, _ := filepath.Glob(filepath.Join(results, "*", "*.hlog*"))
		if len(logs)+len(more) > 0 {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("no run started within a minute")
		}
	}
	time.Sleep(delay)
	return fault(context.Background())
}

func opsOf(r *result.Result) (n int64) {
	for _, s := range r.Ops {
		n += s.Ops
	}
	return n
}

// errorsOf is the result's failed ops by op kind.
func errorsOf(r *result.Result) map[string]int64 {
	out := map[string]int64{}
	for kind, s := range r.Ops {
		if s.Errors > 0 {
			out[kind] = s.Errors
		}
	}
	return out
}

// A monitor stopped mid-run and started again: the OSDs serve a client
// that holds the cluster's maps without it, so the run goes on with no
// error and no second without writes, and ends on time. The result says
// the monitors held an election.
func TestDisruptiveRadosBenchGoesOnWhileTheMonitorRestarts(t *testing.T) {
	pool := cephPool(t) // removed last, once the monitor is back
	c := disruptiveSandbox(t, (*sandbox.Cluster).StartMon)
	restart := func(ctx context.Context) error {
		if err := c.StopMon(ctx); err != nil {
			return err
		}
		time.Sleep(time.Second)
		return c.StartMon(ctx)
	}
	const duration = 6 * time.Second
	r := runBroken(t, time.Second, restart, duration, 0,
		"rados", "bench", "-p", pool, "6", "write", "-b", "4K", "-t", "16", "--op-timeout", "5s")
	if err := r.fault; err != nil {
		t.Fatalf("restarting the monitor: %v", err)
	}
	if len(r.Errors) != 0 || r.Ops["write"].Ops == 0 {
		t.Errorf("%d writes, errors %v: want every write done", r.Ops["write"].Ops, r.Errors)
	}
	for i, s := range r.Series[:len(r.Series)-1] {
		if s.Kinds["write"].Ops == 0 {
			t.Errorf("no write in second %d: the run stalled without the monitor", i+1)
		}
	}
	if !strings.Contains(r.notes, "the cluster changed during the run: the monitors held an election") || strings.Contains(r.notes, "could not be read") {
		t.Errorf("notes %q: want the election said, and the state read", r.notes)
	}
}

// Every OSD stopped mid-run: the writes they can no longer take fail after
// the op timeout and are counted, the run ends within the op timeout of
// its planned end, and its cleanup gives up at the first remove that
// times out instead of waiting that long for each object.
func TestDisruptiveRadosBenchTimesOutOpsWhenEveryOSDStops(t *testing.T) {
	pool := cephPool(t)
	stop, ids := stopEveryOSD(t)
	r := timedOutWrites(t, pool, stop, "the cluster changed during the run: OSDs up 3, in 3 before", "more not tried, as a remove timed out")
	// The watch saw each OSD go down after the fault, 1.5 s in, and
	// before the run's end (5 s, and the 3 s op timeout).
	if r.Cluster == nil || r.Cluster.During == nil {
		t.Fatalf("the run was not watched: %+v", r.Cluster)
	}
	d := r.Cluster.During
	t.Logf("during: %d samples, events %v, problems %q", d.Samples, d.Events, d.Problems)
	for _, id := range ids {
		var at []float64
		for _, e := range d.Events {
			if e.What == fmt.Sprintf("osd.%d down", id) {
				at = append(at, e.At)
			}
		}
		if len(at) != 1 || at[0] < 1 || at[0] > 8+runMargin.Seconds() {
			t.Errorf("osd.%d down at %v s; want once, between 1 s and the run's end", id, at)
		}
	}
	if !strings.Contains(r.stdout, "\nCluster at rest:        NO, ") || !strings.Contains(r.stdout, "osd.0 down at ") {
		t.Errorf("the summary does not say the cluster was not at rest:\n%s", r.stdout)
	}
}

// timedOutWrites runs a 5 s rados bench write to pool (4 KiB, 16 in
// flight, a 3 s op timeout) with fault 1.5 s in, which must leave no op
// able to complete. It checks that writes were done until then and that
// every failure after is an ETIMEDOUT, that the run ended within the op
// timeout of its planned end, and that its notes say so, the cleanup
// that failed, and what else is wanted.
func timedOutWrites(t *testing.T, pool string, fault func(context.Context) error, wanted ...string) brokenRun {
	t.Helper()
	const duration, opTimeout = 5 * time.Second, 3 * time.Second
	r := runBroken(t, 1500*time.Millisecond, fault, duration, opTimeout,
		"rados", "bench", "-p", pool, "5", "write", "-b", "4K", "-t", "16", "--op-timeout", "3s")
	if r.fault != nil {
		t.Fatalf("the fault: %v", r.fault)
	}
	timedOut := r.Errors["ETIMEDOUT"]
	if r.Ops["write"].Ops == 0 || timedOut == 0 || r.Ops["write"].Errors != timedOut {
		t.Errorf("%d writes, %d failed, errors %v: want writes, then every failure an ETIMEDOUT", r.Ops["write"].Ops, r.Ops["write"].Errors, r.Errors)
	}
	for _, want := range append([]string{"ops failed (write ", "by error: ETIMEDOUT ", "an op timed out after 3s", "cleanup failed: "}, wanted...) {
		if !strings.Contains(r.notes, want) {
			t.Errorf("notes %q lack %q", r.notes, want)
		}
	}
	return r
}

// radosgw killed mid-run: the puts that follow fail at once and are
// counted, and the run ends on time.
func TestDisruptiveS3BenchCountsFailuresWhenRadosgwIsKilled(t *testing.T) {
	mc := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, mc, "cbfault") // removed once radosgw is back
	c := disruptiveSandbox(t, (*sandbox.Cluster).StartRGW)
	const duration = 5 * time.Second
	r := runBroken(t, 1500*time.Millisecond, c.KillRGW, duration, 0,
		"s3", "bench", "--put", "--obj-size", "16K", "--concurrent", "4", "--duration", "5s", "s3://"+bucket)
	if err := r.fault; err != nil {
		t.Fatalf("killing radosgw: %v", err)
	}
	if r.Ops["put"].Ops == 0 || r.Ops["put"].Errors == 0 {
		t.Errorf("%d puts, %d failed: want puts until radosgw died, then failures", r.Ops["put"].Ops, r.Ops["put"].Errors)
	}
	for _, want := range []string{"ops failed (put ", "by error: ECONNREFUSED "} {
		if !strings.Contains(r.notes, want) {
			t.Errorf("notes %q lack %q", r.notes, want)
		}
	}
	// s3 bench cleans up once every phase is done and saved: the cleanup
	// that cannot reach radosgw fails the command, in one line.
	if r.code != ExitFailure || !strings.Contains(r.stderr, "cleaning up ") || !strings.Contains(r.stderr, bucket) {
		t.Errorf("exit %d, stderr %q: want the failed cleanup said, exit %d", r.code, r.stderr, ExitFailure)
	}
}

// The network to the cluster cut mid-run: a cluster of its own (one
// memstore OSD) runs in a network namespace that the test makes, and the
// run, in the test's namespace, reaches it through a veth link whose end
// on the test's side goes down. The writes time out and are counted, the
// run ends within the op timeout of its planned end, the snapshot after
// the run gives up after librados' monitor timeout and is a note, and so
// is the cleanup that cannot reach the OSD.
func TestDisruptiveRadosBenchEndsOnTimeWhenTheNetworkIsCut(t *testing.T) {
	if os.Getenv("CEPHBENCH_DISRUPTIVE") != "1" {
		t.Skip("CEPHBENCH_DISRUPTIVE is not 1: scripts/test.sh runs the disruptive tests after the others")
	}
	if err := sandbox.CheckPackages(false, false); err != nil {
		t.Skip(err)
	}
	vethtest.Available(t)
	link := vethtest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := sandbox.Up(ctx, sandbox.Options{Dir: filepath.Join(t.TempDir(), "cut"), OSDs: 1, Store: "memstore",
		OSDSize: 1 << 30, Addr: link.Addr, Netns: link.Netns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := errors.Join(c.Down(ctx), c.Purge()); err != nil {
			t.Errorf("stopping the namespace's cluster: %v", err)
		}
	})
	t.Setenv("CEPH_CONF", c.Conf())
	t.Setenv("CEPH_KEYRING", c.Keyring())
	t.Cleanup(func() {
		if err := link.Restore(); err != nil {
			t.Errorf("restoring the link: %v", err)
		}
	})
	r := timedOutWrites(t, sandbox.Pool, func(context.Context) error { return link.CutHost() },
		"the cluster's state could not be read after the run: ")
	if r.Cluster == nil || r.Cluster.Before == nil || r.Cluster.After != nil {
		t.Errorf("cluster %+v: want its state before the run and none after", r.Cluster)
	}
}

// stopEveryOSD loads the test run's sandbox for a disruptive test and
// returns the fault that stops every OSD it has, and their ids; the
// test's end starts them again and waits for the sandbox to be healthy.
func stopEveryOSD(t *testing.T) (func(context.Context) error, []int) {
	t.Helper()
	var ids []int
	c := disruptiveSandbox(t, func(c *sandbox.Cluster, ctx context.Context) error {
		for _, id := range ids {
			if err := c.StartOSD(ctx, id); err != nil {
				return err
			}
		}
		return nil
	})
	for id := range c.OSDs() {
		ids = append(ids, id)
	}
	return func(ctx context.Context) error { return c.StopOSD(ctx, ids...) }, ids
}

// checkTimedOut checks that a run's writes were timed out after its 3 s
// op timeout once every OSD stopped, that they are counted as timed out
// and said in the result's notes with the cleanup that failed, and that
// the command exited 0: it ran, and its result says what failed.
func checkTimedOut(t *testing.T, r brokenRun) {
	t.Helper()
	if r.fault != nil {
		t.Fatalf("stopping the OSDs: %v", r.fault)
	}
	// ETIMEDOUT from librados' op timeout, or timeout when the runner's
	// own deadline for the op, the same 3 s, came first.
	timedOut := r.Errors["ETIMEDOUT"] + r.Errors["timeout"]
	if timedOut == 0 || r.Ops["write"].Errors != timedOut {
		t.Errorf("%d writes, %d failed, errors %v: want the writes the OSDs never took counted as timed out", r.Ops["write"].Ops, r.Ops["write"].Errors, r.Errors)
	}
	for _, want := range []string{"ops failed (write ", "an op timed out after 3s", "cleanup failed: "} {
		if !strings.Contains(r.notes, want) {
			t.Errorf("notes %q lack %q", r.notes, want)
		}
	}
	if r.code != 0 {
		t.Errorf("exit %d; want 0, the failures counted in the result\n%s", r.code, r.stderr)
	}
}

// Every OSD stopped under a write to an image: the writes librbd sends
// (its cache off, so that each reaches the OSDs) fail after the op
// timeout, librados' rados_osd_op_timeout, and the run ends within it of
// its planned end.
func TestDisruptiveRBDBenchTimesOutOpsWhenEveryOSDStops(t *testing.T) {
	pool := poolFor(t, "rbd") // removed last, once the OSDs are back
	stop, _ := stopEveryOSD(t)
	const duration, opTimeout = 10 * time.Second, 3 * time.Second
	r := runBroken(t, time.Second, stop, duration, opTimeout, "rbd", "bench", "-p", pool, "img", "--io-type", "write",
		"--io-pattern", "rand", "--create", "--size", "64M", "--io-total", "64G", "--duration", "10s", "--direct", "--op-timeout", "3s")
	checkTimedOut(t, r)
}

// Every OSD stopped under a write to CephFS files: the writes (O_DIRECT,
// past libcephfs' cache) fail after the op timeout, which the mount's
// client takes from librados, and the run ends within it of its planned
// end; removing the files then waits on an MDS that cannot write its
// journal, which the session gives up after the op timeout, and the
// result is saved.
func TestDisruptiveCephFSTimesOutOpsWhenEveryOSDStops(t *testing.T) {
	cephtest.MountCephFS(t)
	stop, _ := stopEveryOSD(t)
	const duration, opTimeout = 10 * time.Second, 3 * time.Second
	r := runBroken(t, time.Second, stop, duration, opTimeout, "bench", "--target", fmt.Sprintf("cephfs:///cbosds-%d", rand.Uint32()),
		"--rw", "randwrite", "--bs", "4K", "--size", "16M", "--iodepth", "8", "--duration", "10s", "--direct", "--op-timeout", "3s", "--quiet")
	checkTimedOut(t, r)
}
