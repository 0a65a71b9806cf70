package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// build builds the binary into a temporary folder, and skips the test in
// -short mode.
func build(t testing.TB) (dir, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir = t.TempDir()
	return dir, goBuild(t, dir, "")
}

// goBuild builds cephbench into dir with the build tags tags (comma
// separated; "" for none) and returns its path.
func goBuild(t testing.TB, dir, tags string) string {
	t.Helper()
	bin := filepath.Join(dir, "cephbench")
	if out, err := exec.Command("go", "build", "-tags", tags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build -tags %q: %v\n%s", tags, err, out)
	}
	return bin
}

// The real binary, interrupted by SIGINT as a user's Ctrl-C would: it must
// exit 130, keep the result of what it measured and remove its data.
func TestCtrlCKeepsResultsAndCleansUp(t *testing.T) {
	dir, bin := build(t)
	cmd := exec.Command(bin, "run", "--duration", "1h", "--quiet")
	cmd.Dir = dir
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v; want status 130\n%s", err, stdout.String())
	}
	results, _ := filepath.Glob(filepath.Join(dir, "cephbench-results", "*", "*.json"))
	if len(results) == 0 {
		t.Errorf("no result saved after Ctrl-C:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "cephbench-data")); !os.IsNotExist(err) {
		t.Errorf("cephbench-data left behind after Ctrl-C (%v)", err)
	}
	if !strings.Contains(stdout.String(), "INTERRUPTED") {
		t.Errorf("the output does not say the step was interrupted:\n%s", stdout.String())
	}
}

// Stdout piped into a reader that goes (head) stops the run as Ctrl-C
// does: exit 130, its data removed. A write to another pipe nobody reads
// (a lost host's ssh) does not: TestAKilledAgentOverSSH.
func TestAClosedStdoutStopsTheRun(t *testing.T) {
	_, bin := build(t)
	data := t.TempDir()
	cmd := exec.Command(bin, "bench", "--target", data, "--rw", "randwrite", "--size", "4M", "--duration", "1m")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // a failed check must not leave it running
	w.Close()
	if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
		t.Fatalf("no first line: %v", err)
	}
	r.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
			t.Fatalf("exit: %v; want status 130", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("still running 15 s after its stdout went")
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
}

// buildFailpoints builds cephbench with its fail points (internal/failpoint),
// with tags more build tags, once per test binary.
func buildFailpoints(t *testing.T, tags ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	key := strings.Join(append([]string{"failpoint"}, tags...), ",")
	failpointBins.Lock()
	defer failpointBins.Unlock()
	if bin, ok := failpointBins.built[key]; ok {
		return bin
	}
	dir, err := os.MkdirTemp("", "cephbench-failpoint-")
	if err != nil {
		t.Fatal(err)
	}
	bin := goBuild(t, dir, key)
	failpointBins.built[key] = bin
	return bin
}

// failpointBins are the binaries buildFailpoints built, by their tags;
// TestMain removes them.
var failpointBins = struct {
	sync.Mutex
	built map[string]string
}{built: map[string]string{}}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, bin := range failpointBins.built {
		_ = os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}
