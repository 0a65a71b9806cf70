package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/sshtest"
	"github.com/cephbench/cephbench/result"
)

// coordinatorRun is the coordinator binary running a job on a fleet's
// hosts, its output collected.
type coordinatorRun struct {
	cmd *exec.Cmd
	// Written by the scanning goroutines until scanned is closed.
	stdout, stderr bytes.Buffer
	said           []time.Time   // when each of stderr's lines came
	on             chan struct{} // closed at the run's first merged second
	scanned        chan struct{}
}

// startOnHosts starts the coordinator with args on every host of fleet;
// the test fails if it is still running when the test ends.
func startOnHosts(t *testing.T, bin string, fleet *sshtest.Fleet, args ...string) *coordinatorRun {
	t.Helper()
	args = append(args, "--hosts", strings.Join(fleet.Aliases(), ","), "--ssh-config", fleet.ConfigFile, "--remote-cephbench", bin)
	c := &coordinatorRun{cmd: exec.Command(bin, args...), on: make(chan struct{}), scanned: make(chan struct{})}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errOut, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdoutRead := make(chan struct{})
	go func() {
		defer close(stdoutRead)
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			// The per-second table's first row.
			if f := strings.Fields(lines.Text()); len(f) > 0 && f[0] == "1" {
				close(c.on)
			}
			c.stdout.WriteString(lines.Text() + "\n")
		}
	}()
	go func() {
		defer close(c.scanned)
		lines := bufio.NewScanner(errOut)
		for lines.Scan() {
			c.said = append(c.said, time.Now())
			c.stderr.WriteString(lines.Text() + "\n")
		}
		<-stdoutRead
	}()
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			t.Error("the coordinator still runs at the end of the test: killed")
			c.cmd.Process.Kill()
			c.cmd.Wait()
		}
	})
	return c
}

// running waits until the run's first second is in, and then for one more
// second, so that every host is writing.
func (c *coordinatorRun) running(t *testing.T) {
	t.Helper()
	select {
	case <-c.on:
		time.Sleep(time.Second)
	case <-c.scanned:
		c.cmd.Wait()
		t.Fatalf("the coordinator ended before its run was on:\n%s%s", c.stdout.String(), c.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("no second of the run after 30 s")
	}
}

// wait waits at most within for the coordinator to exit and returns its
// exit code and when it exited.
func (c *coordinatorRun) wait(t *testing.T, within time.Duration) (int, time.Time) {
	t.Helper()
	done := make(chan error, 1)
	go func() { <-c.scanned; done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		exited := time.Now()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), exited
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, exited
	case <-time.After(within):
		t.Fatalf("the coordinator still runs after %s:\n%s%s", within, c.stdout.String(), c.stderr.String())
	}
	return 0, time.Time{}
}

// agentsOf returns the agents of bin running on this machine, by pid,
// each with the fake host that started it (sshd sets sshtest.HostEnv).
func agentsOf(t *testing.T, bin string) map[int]string {
	t.Helper()
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := bin + "\x00agent\x00--stdio\x00"
	agents := map[int]string{}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		// A process may end between the listing and the reading.
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil || string(cmdline) != want {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "environ"))
		agents[pid] = "?"
		for _, kv := range strings.Split(string(env), "\x00") {
			if host, ok := strings.CutPrefix(kv, sshtest.HostEnv+"="); ok {
				agents[pid] = host
			}
		}
	}
	return agents
}

// waitForNoAgents waits at most within until no agent of bin runs.
func waitForNoAgents(t *testing.T, bin string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := agentsOf(t, bin)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("agents still running %s after the coordinator exited: %v", within, left)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// filesIn names the files in dir.
func filesIn(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		paths[i] = filepath.Base(p)
	}
	return paths
}

// wantMerged checks the merged result saved at path: made of the hosts'
// results, with writes measured, and interrupted or not.
func wantMerged(t *testing.T, path string, hosts int, partial bool) {
	t.Helper()
	m, err := result.Load(path)
	if err != nil {
		t.Fatalf("no merged result: %v", err)
	}
	if m.Interrupted != partial || len(m.Hosts) != hosts || m.Ops["write"].Ops == 0 {
		t.Errorf("merged result: interrupted %v, %d hosts' results, %d writes; want interrupted %v, %d hosts' writes", m.Interrupted, len(m.Hosts), m.Ops["write"].Ops, partial, hosts)
	}
}

// namesOnce checks that stderr, once the coordinator exited, has one
// line naming host (and otherwise only says on which hosts the run is),
// and returns that line and when it came.
func (c *coordinatorRun) namesOnce(t *testing.T, host string) (string, time.Time) {
	t.Helper()
	var line string
	var at time.Time
	for i, l := range strings.Split(strings.TrimSuffix(c.stderr.String(), "\n"), "\n") {
		switch {
		case strings.Contains(l, "host "+host+":") && line == "":
			line, at = l, c.said[i]
		case strings.Contains(l, " on 4 hosts, "):
		default:
			t.Errorf("stderr %q; want one line naming %s", c.stderr.String(), host)
			return line, at
		}
	}
	if line == "" {
		t.Errorf("stderr %q; want a line naming %s", c.stderr.String(), host)
	}
	return line, at
}

// startWriting starts the coordinator on every host of fleet with a file
// run long enough to be cut short, and flags, each host writing its own
// files in data, a new folder, and the merged result to be saved at out;
// it returns once every host writes.
func startWriting(t *testing.T, bin string, fleet *sshtest.Fleet, out string, flags ...string) (c *coordinatorRun, data string) {
	t.Helper()
	data = t.TempDir()
	args := append([]string{"bench", "--target", data, "--rw", "randwrite", "--size", "4M", "--duration", "1m", "-o", out}, flags...)
	c = startOnHosts(t, bin, fleet, args...)
	c.running(t)
	return c, data
}

// failureModes are the coordinator's ways with a host that fails, of four
// writing: each mode's flags (added after startWriting's, so a later
// --duration replaces its minute), its exit code, how many hosts' results
// the saved merged result holds and whether it is partial. Whatever the
// mode, the coordinator says in one line which host failed, and no agent
// is left running.
var failureModes = []struct {
	name         string
	flags        []string
	code, merged int
	partial      bool
}{
	{name: "default: stop every host", code: 1, merged: 3, partial: true},
	{name: "continue: the others go on", flags: []string{"--on-host-failure", "continue", "--duration", "6s"}, code: 0, merged: 3},
}

// Four hosts, each in its own network namespace; host3's link dies
// mid-run. The coordinator calls it lost within seconds and says so in one
// line, and by default stops the others (whose files go) and exits 1,
// with what they measured saved; or the others go on. Either way host3's
// agent, hearing nothing more, stops and removes its files by itself
// while its link is still down, and once the link is back its session
// ends.
func TestACutLinkIsCalledLostOverSSH(t *testing.T) {
	fleet := sshtest.StartIsolated(t, 4)
	dir, bin := build(t)
	host3 := fleet.Hosts[2]
	for _, mode := range failureModes {
		t.Run(mode.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.Fields(mode.name)[0]+".json")
			c, data := startWriting(t, bin, fleet, out, mode.flags...)
			cut := time.Now()
			host3.Cut(t)
			code, _ := c.wait(t, 30*time.Second)
			if code != mode.code {
				t.Fatalf("exit %d; want %d\n%s%s", code, mode.code, c.stdout.String(), c.stderr.String())
			}
			// Said as the host is called lost (going on), or as the
			// coordinator exits once the others stopped (stopping).
			line, said := c.namesOnce(t, "host3")
			took := said.Sub(cut)
			t.Logf("host3's link cut: said %s later: %s", took.Round(time.Millisecond), line)
			if !strings.Contains(line, "lost") {
				t.Errorf("%q; want host3 called lost", line)
			}
			// The rule is 1.5 to 2.25 s (multihost.Options.Silence); a
			// loaded machine's timers can be seconds late, so this bound
			// only tells the silence's rule from the run's minute ending.
			if took > 20*time.Second {
				t.Errorf("host3 said lost %s after the cut; want within 20 s", took)
			}
			wantMerged(t, out, mode.merged, mode.partial)
			for _, f := range filesIn(t, data) {
				if !strings.HasPrefix(f, "host3") {
					t.Errorf("%s left by a host that was stopped", f)
				}
			}

			waitForNoAgents(t, bin, 30*time.Second)
			t.Logf("host3's agent gone %s after the cut", time.Since(cut).Round(time.Millisecond))
			if left := filesIn(t, data); len(left) != 0 {
				t.Errorf("host3's agent ended and left %v", left)
			}
			// Once the link is back, the session whose client went
			// meanwhile hears so and ends: host3 runs nothing but its sshd.
			host3.Restore(t)
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				pids := host3.Pids(t)
				if len(pids) == 1 && pids[0] == host3.Pid(t) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("host3 still runs %v besides its sshd %d, 30 s after its link came back", pids, host3.Pid(t))
				}
			}
		})
	}
}

// Ctrl-C on the coordinator of four hosts: it exits 130 with the merged
// result of what they measured saved, no agent still runs, and nothing
// they wrote is left.
func TestCtrlCStopsEveryHostOverSSH(t *testing.T) {
	fleet := sshtest.Start(t, 4)
	dir, bin := build(t)
	out := filepath.Join(dir, "interrupted.json")
	c, data := startWriting(t, bin, fleet, out)
	if n := len(agentsOf(t, bin)); n != 4 {
		t.Fatalf("%d agents running; want 4", n)
	}

	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code, _ := c.wait(t, 30*time.Second); code != 130 {
		t.Fatalf("exit %d; want 130\n%s%s", code, c.stdout.String(), c.stderr.String())
	}
	wantMerged(t, out, 4, true)
	if left := filesIn(t, data); len(left) != 0 {
		t.Errorf("the hosts left %v", left)
	}
	waitForNoAgents(t, bin, 30*time.Second)
}

// An agent killed mid-run (SIGKILL: it cannot clean up), in each failure
// mode: the other hosts stop, or go on, and remove what they wrote.
func TestAKilledAgentOverSSH(t *testing.T) {
	fleet := sshtest.Start(t, 4)
	dir, bin := build(t)
	for _, mode := range failureModes {
		t.Run(mode.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.Fields(mode.name)[0]+".json")
			c, data := startWriting(t, bin, fleet, out, mode.flags...)
			killed, at := 0, time.Now()
			for pid, host := range agentsOf(t, bin) {
				if host == "host2" {
					if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					killed++
				}
			}
			if killed != 1 {
				t.Fatalf("%d agents of host2 killed; want 1", killed)
			}

			code, exited := c.wait(t, 30*time.Second)
			if code != mode.code {
				t.Fatalf("exit %d; want %d\n%s%s", code, mode.code, c.stdout.String(), c.stderr.String())
			}
			line, _ := c.namesOnce(t, "host2")
			t.Logf("exit %d %s after the kill: %s", code, exited.Sub(at).Round(time.Millisecond), line)
			if !strings.Contains(line, "its agent ended") {
				t.Errorf("%q; want that host2's agent ended", line)
			}
			wantMerged(t, out, mode.merged, mode.partial)
			waitForNoAgents(t, bin, 30*time.Second)
			// The others removed their files; the killed agent could not.
			for _, f := range filesIn(t, data) {
				if !strings.HasPrefix(f, "host2") {
					t.Errorf("%s left by a host that was stopped", f)
				}
			}
		})
	}
}
