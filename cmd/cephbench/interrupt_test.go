package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/cli"
	"github.com/cephbench/cephbench/result"
)

// wantCleanInterrupt checks a write to data interrupted once: exit 130,
// its JSON result on stdout, marked interrupted, and nothing left in data.
func wantCleanInterrupt(t *testing.T, code int, stdout, stderr, data string) {
	t.Helper()
	var res result.Result
	if code != cli.ExitInterrupted {
		t.Errorf("exit %d; want %d\n%s", code, cli.ExitInterrupted, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || !res.Interrupted {
		t.Errorf("stdout is no interrupted result (%v, interrupted %v): %q\n%s", err, res.Interrupted, stdout, stderr)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Errorf("left in the target: %v\n%s", entries, stderr)
	}
}

// interruptedWrite starts a 30 s write to a fresh folder with its JSON
// result on stdout, under the command wrap puts before it.
// Its result is saved in save too.
func interruptedWrite(t *testing.T, bin string, wrap ...string) (cmd *exec.Cmd, data, save string, stdout, stderr *strings.Builder) {
	data, save = t.TempDir(), filepath.Join(t.TempDir(), "r.json")
	args := append(wrap, bin, "bench", "--target", data, "--rw", "write", "--size", "4M",
		"--duration", "30s", "--format", "json", "--output", save)
	cmd = exec.Command(args[0], args[1:]...)
	stdout, stderr = new(strings.Builder), new(strings.Builder)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // a failed check must not leave it running
	return cmd, data, save, stdout, stderr
}

// GNU timeout's SIGINT reaches the command twice (the command, then its
// process group): it is one interrupt, which saves the result and removes
// the data, every time. Before, one run in four or so took the second
// copy for the user's second Ctrl-C and exited without either.
func TestTimeoutsInterruptIsOneInterrupt(t *testing.T) {
	timeout, err := exec.LookPath("timeout")
	if err != nil {
		t.Skip("no GNU timeout")
	}
	_, bin := build(t)
	for i := 0; i < 5; i++ {
		cmd, data, _, stdout, stderr := interruptedWrite(t, bin, timeout, "--preserve-status", "-s", "INT", "4")
		code := exitCode(t, cmd.Wait())
		wantCleanInterrupt(t, code, stdout.String(), stderr.String(), data)
	}
}

// The same with the two copies apart: a second signal 10 ms after the
// first, long after Go's runtime took the first (timeout's two often
// reach it as one), is still the same interrupt.
func TestTwoSignalsAtOnceAreOneInterrupt(t *testing.T) {
	_, bin := build(t)
	for i := 0; i < 5; i++ {
		cmd, data, save, stdout, stderr := interruptedWrite(t, bin)
		// Its tick log is created as the measurement starts: from then an
		// interrupt has a result to save and data to remove.
		deadline := time.Now().Add(30 * time.Second)
		for _, err := os.Stat(result.TickLogPath(save)); err != nil; _, err = os.Stat(result.TickLogPath(save)) {
			if time.Now().After(deadline) {
				t.Fatalf("not measuring after 30 s:\n%s", stderr)
			}
			time.Sleep(10 * time.Millisecond)
		}
		for range 2 {
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		code := exitCode(t, cmd.Wait())
		wantCleanInterrupt(t, code, stdout.String(), stderr.String(), data)
		if n := strings.Count(stderr.String(), "interrupted, stopping and cleaning up; interrupt again to exit at once"); n != 1 {
			t.Errorf("told %d times that it cleans up; want once:\n%s", n, stderr)
		}
	}
}
