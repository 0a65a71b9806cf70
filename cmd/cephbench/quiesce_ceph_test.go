//go:build ceph

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/cephtest"
)

// monJSON asks the sandbox's monitors, as `ceph` does, and decodes the
// answer into v.
func monJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out, err := exec.Command("ceph", append(args, "-f", "json")...).Output()
	if err != nil {
		t.Fatalf("ceph %s: %v", strings.Join(args, " "), err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("ceph %s: %v", strings.Join(args, " "), err)
	}
}

// scrubState is the OSD map's flags and the records of quiesced runs.
func scrubState(t *testing.T) (flags string, records []string) {
	var dump struct {
		Flags string `json:"flags"`
	}
	monJSON(t, &dump, "osd", "dump")
	var keys []string
	monJSON(t, &keys, "config-key", "ls")
	for _, k := range keys {
		if strings.HasPrefix(k, "cephbench/quiesce/") {
			records = append(records, k)
		}
	}
	return dump.Flags, records
}

// A quiesced run killed with kill -9 leaves the scrub flags set and its
// record; cleanup of its pool clears them and removes the record. The
// flags stay set cluster-wide meanwhile, which would confuse another
// test's quiesced run: it runs with the disruptive tests.
func TestDisruptiveCleanupRestoresAKilledQuiescedRunsFlags(t *testing.T) {
	if os.Getenv("CEPHBENCH_DISRUPTIVE") != "1" {
		t.Skip("CEPHBENCH_DISRUPTIVE is not 1: scripts/test.sh runs the disruptive tests after the others")
	}
	conn := cephtest.Cluster(t)
	pool := cephtest.Pool(t, conn, "cbquiesce")
	dir, bin := buildWithCeph(t)
	before, recs := scrubState(t)
	if strings.Contains(before, "noscrub") || len(recs) > 0 {
		t.Skipf("the sandbox is quiesced already: flags %s, records %v", before, recs)
	}
	run := exec.Command(bin, "rados", "bench", "-p", pool, "30", "write", "-b", "4K", "-t", "4", "--quiesce")
	run.Dir = dir
	var output strings.Builder
	run.Stdout, run.Stderr = &output, &output
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = run.Process.Kill() }() // for a test that fails before the kill
	var flags string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if flags, recs = scrubState(t); strings.Contains(flags, "nodeep-scrub") && len(recs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			_ = run.Process.Kill()
			_ = run.Wait() // its output is whole once it returns
			t.Fatalf("the run never quiesced the cluster: flags %s, records %v\n%s", flags, recs, &output)
		}
	}
	if err := run.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = run.Wait() // killed: its error says so
	if flags, recs = scrubState(t); !strings.Contains(flags, "noscrub") || len(recs) != 1 {
		t.Fatalf("after kill -9: flags %s, records %v; want the run's flags and record left", flags, recs)
	}
	cleanup := exec.Command(bin, "cleanup", "rados://"+pool)
	cleanup.Dir = dir
	if out, err := cleanup.CombinedOutput(); err != nil {
		t.Fatalf("cleanup: %v\n%s", err, out)
	}
	if flags, recs = scrubState(t); flags != before || len(recs) != 0 {
		t.Errorf("after cleanup: flags %s, records %v; want flags %s and no record", flags, recs, before)
	}
}
