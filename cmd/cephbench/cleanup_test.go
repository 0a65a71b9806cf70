package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitFor polls until ok holds, failing the test after a minute: a bound
// for a run that never gets there, not a measure of speed.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute", what)
		}
	}
}

// cephbench cleanup while another cephbench run writes to the same
// directory leaves that run's record and objects, and names the run; the
// run, stopped, then removes them itself, and the user's files stay.
func TestCleanupLeavesALiveRun(t *testing.T) {
	_, bin := build(t)
	dir := filepath.Join(t.TempDir(), "objs")
	foreign := plant(t, dir, map[string]string{
		"benchmark_data_otherhost_7_object0": "another run's object",
		"notes.txt":                          "a user's file",
	})
	target := "dirobj://" + dir
	run := exec.Command(bin, "bench", "--target", target, "--rw", "write", "--bs", "4k", "--objects", "64", "--cycle",
		"--rate", "500", "--duration", "30s", "--quiet")
	run.Dir = t.TempDir()
	var runOut strings.Builder
	run.Stdout, run.Stderr = &runOut, &runOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Process.Kill(); run.Wait() })
	host, _ := os.Hostname()
	stem := "benchmark_data_" + host + "_" + strconv.Itoa(run.Process.Pid) + "_object"
	record := "cephbench_writing_" + stem
	waitFor(t, "record and object of the run", func() bool {
		_, err1 := os.Stat(filepath.Join(dir, record))
		_, err2 := os.Stat(filepath.Join(dir, stem+"0"))
		return err1 == nil && err2 == nil
	})
	before := listDir(t, dir, false)

	out, err := exec.Command(bin, "cleanup", target).CombinedOutput()
	if err != nil {
		t.Fatalf("cleanup: %v\n%s", err, out)
	}
	after := listDir(t, dir, false)
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Errorf("cleanup removed %s of the live run", name)
		}
	}
	want := "skipped: run " + strconv.Itoa(run.Process.Pid) + " on " + host + " is still running"
	if strings.Count(string(out), "skipped: ") != 1 || !strings.Contains(string(out), want) {
		t.Errorf("cleanup said %q; want one line with %q", out, want)
	}

	if err := run.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err != nil && run.ProcessState.ExitCode() != 130 {
		t.Fatalf("the run, interrupted: %v\n%s", err, runOut.String())
	}
	if left := listDir(t, dir, true); !maps.Equal(left, foreign) {
		t.Errorf("after the run ended the directory holds %v; want only the user's files %v\n%s", left, foreign, runOut.String())
	}
}
