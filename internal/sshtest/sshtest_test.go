package sshtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fleet's hosts answer a plain `ssh -F` by their aliases, each its own
// server; the user's ~/.ssh is left as it was, and the servers are gone
// once the test that started them ends.
func TestHostsAnswerPlainSSHAndStopWithTheirTest(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	before := listing(t, filepath.Join(home, ".ssh"))
	var pids []int
	t.Run("fleet", func(t *testing.T) {
		fleet := Start(t, 3)
		for _, h := range fleet.Hosts {
			out, err := exec.Command("ssh", "-F", fleet.ConfigFile, h.Alias, "echo $"+HostEnv+" $XDG_CACHE_HOME").CombinedOutput()
			if got := strings.TrimSpace(string(out)); err != nil || got != h.Alias+" "+h.CacheDir {
				t.Errorf("ssh %s: %q, %v; want its alias and its own cache folder", h.Alias, out, err)
			}
			pids = append(pids, h.Pid(t))
		}
	})
	if after := listing(t, filepath.Join(home, ".ssh")); after != before {
		t.Errorf("~/.ssh changed:\n%s\nbecame\n%s", before, after)
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("sshd %d still runs after its test ended", pid)
		}
	}
}

// listing names each file in dir with its size and modification time, or
// says dir does not exist.
func listing(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %s\n", e.Name(), info.Size(), info.ModTime().Format(time.RFC3339Nano))
	}
	return b.String()
}
