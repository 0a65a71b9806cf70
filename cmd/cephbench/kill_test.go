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

	// What it leaves is a result: the one it claimed when it started,
	// marked unfinished, its figures rebuilt from the log's seconds.
	res, err := result.Load(save)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Unfinished || !res.Interrupted {
		t.Fatalf("the result of a killed run: unfinished %v, interrupted %v", res.Unfinished, res.Interrupted)
	}
	series := res.Series
	// 3.5s of measuring finished three seconds; one more may have closed
	// before the kill landed.
	if n := len(series); n < 3 || float64(n) > alive.Seconds()+0.5 {
		t.Fatalf("%d seconds in the log of a run killed %v after its log appeared", n, alive)
	}
	var ops int64
	for i, sec := range series {
		n := sec.Kinds["read"].Ops + sec.Kinds["write"].Ops
		if sec.T != float64(i+1) || sec.Dur != 1 || n == 0 {
			t.Errorf("second %d: t=%g dur=%g, %d ops; want t=%d, dur 1 and some ops", i+1, sec.T, sec.Dur, n, i+1)
		}
		ops += n
	}
	total := res.Ops["read"].Ops + res.Ops["write"].Ops
	if total != ops || res.ElapsedSeconds != float64(len(series)) || res.Ops["read"].Latency.MaxNs == 0 {
		t.Errorf("rebuilt: %d ops over %gs, read max %dns; the log's seconds hold %d ops over %d s",
			total, res.ElapsedSeconds, res.Ops["read"].Latency.MaxNs, ops, len(series))
	}
	// The report a user would ask for next reads it and says what it is.
	out, err := exec.Command(bin, "report", save).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "killed before it saved") {
		t.Errorf("cephbench report of the killed run's result (%v):\n%s", err, out)
	}
}
