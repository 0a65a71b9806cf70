package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSandboxUpWithoutCephIsOneLineAndExit2(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no ceph programs
	dir := filepath.Join(t.TempDir(), "sb")
	code, stdout, stderr := cephbench(t, context.Background(), "sandbox", "up", "--dir", dir, "--mds", "--rgw")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != ExitUsage || stdout != "" || len(lines) != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one error line", code, stdout, stderr)
	}
	for _, want := range []string{"ceph-mon", "ceph-mds", "radosgw", "apt-get install ceph-common ceph-base ceph-mon ceph-mgr ceph-osd ceph-mds radosgw"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("%q does not name %q", lines[0], want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the sandbox folder was created: %v", err)
	}
}

func TestSandboxCommandsWithoutSandboxExit2(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"status"}, {"down"}, {"down", "--purge"}, {"env"}, {"up", "--osds", "0"}, {"up", "--store", "zfs"}} {
		code, _, stderr := cephbench(t, context.Background(), append(append([]string{"sandbox"}, args...), "--dir", dir)...)
		if code != ExitUsage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("sandbox %v on an empty folder: exit %d, stderr %q; want exit 2 and one line", args, code, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
}

func TestSandboxHelpSaysNotForData(t *testing.T) {
	for _, cmd := range []string{"sandbox", "up"} {
		args := []string{"sandbox", "--help"}
		if cmd != "sandbox" {
			args = []string{"sandbox", cmd, "--help"}
		}
		_, stdout, _ := cephbench(t, context.Background(), args...)
		text := strings.ToLower(oneLine(stdout))
		if !strings.Contains(text, "for trying cephbench and for tests") || !strings.Contains(text, "not for data") {
			t.Errorf("%v does not say what the sandbox is for:\n%s", args, stdout)
		}
	}
}

// With the sandbox scripts/test.sh started: status and env are what a
// user reads.
func TestSandboxStatusAndEnv(t *testing.T) {
	dir := os.Getenv("CEPHBENCH_SANDBOX")
	if dir == "" {
		t.Skip("CEPHBENCH_SANDBOX is not set: run scripts/test.sh, which starts a sandbox cluster for the tests")
	}
	code, stdout, stderr := cephbench(t, context.Background(), "sandbox", "status", "--dir", dir)
	if code != 0 || !strings.Contains(stdout, "mon.a          running, pid ") || !strings.Contains(stdout, "health: HEALTH_") {
		t.Errorf("status: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = cephbench(t, context.Background(), "sandbox", "env", "--dir", dir)
	if code != 0 || !strings.Contains(stdout, "export CEPH_CONF="+filepath.Join(dir, "ceph.conf")+"\n") {
		t.Errorf("env: exit %d\n%s%s", code, stdout, stderr)
	}
}
