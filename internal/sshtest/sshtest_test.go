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

	"github.com/cephbench/cephbench/internal/vethtest"
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

// Isolated hosts answer ssh through their own namespace's link; a cut
// link drops what is sent to the host until it is restored, and the
// namespaces and links are gone once the test ends.
func TestIsolatedHostsCanBeCutOff(t *testing.T) {
	var links []*vethtest.Link
	ran := t.Run("fleet", func(t *testing.T) {
		fleet := StartIsolated(t, 2)
		ssh := func(h *Host) (string, error) {
			out, err := exec.Command("ssh", "-F", fleet.ConfigFile, "-o", "ConnectTimeout=2", h.Alias, "echo $"+HostEnv).CombinedOutput()
			return strings.TrimSpace(string(out)), err
		}
		for _, h := range fleet.Hosts {
			if got, err := ssh(h); err != nil || got != h.Alias || !strings.HasPrefix(h.Addr, "10.231.") {
				t.Fatalf("ssh %s at %s: %q, %v; want its alias", h.Alias, h.Addr, got, err)
			}
			links = append(links, h.veth)
		}
		cut := fleet.Hosts[1]
		cut.Cut(t)
		if got, err := ssh(cut); err == nil {
			t.Errorf("ssh %s answered %q with its link cut", cut.Alias, got)
		}
		if got, err := ssh(fleet.Hosts[0]); err != nil || got != fleet.Hosts[0].Alias {
			t.Errorf("host1 with host2 cut: %q, %v", got, err)
		}
		cut.Restore(t)
		if got, err := ssh(cut); err != nil || got != cut.Alias {
			t.Errorf("ssh %s once restored: %q, %v", cut.Alias, got, err)
		}
	})
	if !ran || len(links) == 0 {
		return // skipped, or failed already
	}
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	left, _ := exec.Command("ip", "-o", "link").CombinedOutput()
	for _, l := range links {
		if strings.Contains(string(out), l.Netns) {
			t.Errorf("namespace %s outlived its test", l.Netns)
		}
		if strings.Contains(string(left), l.HostLink+"@") {
			t.Errorf("link %s outlived its test", l.HostLink)
		}
	}
}

// StartSharedHome's hosts are separate servers with one cache folder:
// what a session on one writes there, a session on another reads.
func TestSharedHomeHostsSeeOneCache(t *testing.T) {
	fleet := StartSharedHome(t, 2)
	h1, h2 := fleet.Hosts[0], fleet.Hosts[1]
	if h1.CacheDir != h2.CacheDir {
		t.Fatalf("cache folders %s and %s; want one", h1.CacheDir, h2.CacheDir)
	}
	ssh := func(h *Host, cmd string) string {
		out, err := exec.Command("ssh", "-F", fleet.ConfigFile, h.Alias, cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh %s: %v: %s", h.Alias, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	ssh(h1, `mkdir -p "$XDG_CACHE_HOME" && echo $`+HostEnv+` > "$XDG_CACHE_HOME/mark"`)
	if got := ssh(h2, `echo $`+HostEnv+` $(cat "$XDG_CACHE_HOME/mark")`); got != "host2 host1" {
		t.Errorf("host2 read %q; want host2 reading host1's mark", got)
	}
}
