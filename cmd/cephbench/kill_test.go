package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/result"
)

// A run killed outright (SIGKILL: no handler runs) leaves every second it
// finished in its tick log, readable.
func TestKilledRunKeepsItsSeconds(t *testing.T) {
	dir, bin := build(t)
	save := filepath.Join(dir, "r.json")
	cmd := exec.Command(bin, "bench", "--target", "null://", "--rw", "randrw", "--bs", "4k", "--size", "1G",
		"--iodepth", "64", "--duration", "1m", "--quiet", "--output", save)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // a failed check must not leave it running
	log := result.TickLogPath(save)
	// The log is created just before the measurement starts: from then,
	// a second closes every second.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(log); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no tick log after 30s:\n%s%s", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	created := time.Now()
	time.Sleep(3500 * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // killed: its status says so
	alive := time.Since(created)

	if _, err := os.Stat(save); !os.IsNotExist(err) {
		t.Fatalf("the JSON result exists (%v): the run was not killed mid-way", err)
	}
	series, err := result.ReadTickLog(log)
	if err != nil {
		t.Fatal(err)
	}
	// 3.5s of measuring finished three seconds; one more may have closed
	// before the kill landed.
	if n := len(series); n < 3 || float64(n) > alive.Seconds()+0.5 {
		t.Fatalf("%d seconds in the log of a run killed %v after its log appeared", n, alive)
	}
	for i, sec := range series {
		ops := sec.Kinds["read"].Ops + sec.Kinds["write"].Ops
		if sec.T != float64(i+1) || sec.Dur != 1 || ops == 0 {
			t.Errorf("second %d: t=%g dur=%g, %d ops; want t=%d, dur 1 and some ops", i+1, sec.T, sec.Dur, ops, i+1)
		}
	}
}
