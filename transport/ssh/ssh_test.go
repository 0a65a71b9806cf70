package ssh

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/sshtest"
)

// Each of four hosts runs cat; lines written to each session come back
// from it, in order, and each session ends cleanly once its stdin closes.
func TestCatOnFourHostsEchoesEachSessionsLines(t *testing.T) {
	fleet := sshtest.Start(t, 4)
	opts := Options{ConfigFile: fleet.ConfigFile}
	var wg sync.WaitGroup
	for _, host := range fleet.Aliases() {
		wg.Go(func() {
			s, err := Start(t.Context(), host, []string{"cat"}, opts)
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			out := bufio.NewScanner(s.Stdout())
			for i := range 3 {
				want := fmt.Sprintf("line %d to %s", i, host)
				if _, err := io.WriteString(s.Stdin(), want+"\n"); err != nil {
					t.Errorf("%s: writing: %v (%v)", host, err, s.Wait())
					return
				}
				if !out.Scan() {
					t.Errorf("%s: stdout ended before %q: %v", host, want, s.Wait())
					return
				}
				if got := out.Text(); got != want {
					t.Errorf("%s: read %q, want %q", host, got, want)
				}
			}
			if err := s.Stdin().Close(); err != nil {
				t.Error(err)
			}
			if out.Scan() {
				t.Errorf("%s: more output after stdin closed: %q", host, out.Text())
			}
			if err := s.Wait(); err != nil {
				t.Errorf("%s: %v", host, err)
			}
		})
	}
	wg.Wait()
}

// Four sessions are served by four different sshd processes: each
// session's environment names its own host and the address and port of
// that host's server, and each server logged the login.
func TestFourHostsAreFourServers(t *testing.T) {
	fleet := sshtest.Start(t, 4)
	opts := Options{ConfigFile: fleet.ConfigFile}
	pids := map[int]string{}
	for _, h := range fleet.Hosts {
		out := run(t, h.Alias, opts, "sh", "-c", `echo "$`+sshtest.HostEnv+` $SSH_CONNECTION"`)
		// SSH_CONNECTION is the client's address and port, then the server's.
		f := strings.Fields(out)
		if len(f) != 5 || f[0] != h.Alias || f[3] != h.Addr || f[4] != strconv.Itoa(h.Port) {
			t.Errorf("%s: the session says %q; want %s and server %s %d", h.Alias, out, h.Alias, h.Addr, h.Port)
		}
		if !strings.Contains(h.Log(t), "Accepted publickey for ") {
			t.Errorf("%s: its sshd logged no login:\n%s", h.Alias, h.Log(t))
		}
		pid := h.Pid(t)
		if other, ok := pids[pid]; ok {
			t.Errorf("%s and %s have one sshd, pid %d", other, h.Alias, pid)
		}
		pids[pid] = h.Alias
	}
}

// Arguments reach the remote command as they were given, whatever the
// remote shell would make of them unquoted.
func TestArgumentsReachTheRemoteCommandUnchanged(t *testing.T) {
	fleet := sshtest.Start(t, 1)
	args := []string{"plain", "two words", "", `it's "quoted"`, "$HOME", "*", "a;b|c&d", "-x", "line\nbreak", `back\slash`}
	out := run(t, "host1", Options{ConfigFile: fleet.ConfigFile}, append([]string{"printf", "[%s]"}, args...)...)
	want := ""
	for _, a := range args {
		want += "[" + a + "]"
	}
	if out != want {
		t.Errorf("the remote command got %q, want %q", out, want)
	}
}

// Every way a session can fail is one line naming the host and saying
// what went wrong, as ssh (or the remote command) said it.
func TestFailuresAreOneLineNamingTheHost(t *testing.T) {
	fleet := sshtest.Start(t, 1)
	unknown := fleet.AddUnknown(t)
	known, err := os.ReadFile(fleet.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	// Two more aliases: a server that is not there, and host1 with a key
	// it does not accept.
	h := fleet.Hosts[0]
	l, err := net.Listen("tcp", net.JoinHostPort(h.Addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	otherKey := filepath.Join(t.TempDir(), "other_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", otherKey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	config, err := os.ReadFile(fleet.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf(`Host nobody-home
  HostName %s
  Port %d
  UserKnownHostsFile /dev/null
  IdentityAgent none
  BatchMode yes
Host wrong-key
  HostName %s
  Port %d
  User %s
  IdentityFile "%s"
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile "%s"
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
`, h.Addr, closed, h.Addr, h.Port, me.Username, otherKey, fleet.KnownHosts)
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(cfg, append(config, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := Options{ConfigFile: cfg}

	for _, c := range []struct {
		host   string
		argv   []string
		status int
		says   string
	}{
		{unknown.Alias, []string{"true"}, 255, "Host key verification failed."},
		{"wrong-key", []string{"true"}, 255, "Permission denied (publickey)."},
		{"nobody-home", []string{"true"}, 255, "Connection refused"},
		{"host1", []string{"sh", "-c", "echo starting; echo 'it broke' >&2; exit 3"}, 3, "remote command exited with status 3: it broke"},
	} {
		s, err := Start(t.Context(), c.host, c.argv, opts)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Wait()
		s.Close()
		var e *Error
		if !errors.As(err, &e) || e.Host != c.host || e.ExitStatus != c.status {
			t.Errorf("%s: %#v; want an *Error for the host with status %d", c.host, err, c.status)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "ssh "+c.host+": ") || !strings.Contains(msg, c.says) || strings.ContainsAny(msg, "\r\n") {
			t.Errorf("%s: %q; want one line naming the host and saying %q", c.host, msg, c.says)
		}
	}
	if strings.Contains(unknown.Log(t), "Accepted") {
		t.Errorf("the unknown host's server logged a login:\n%s", unknown.Log(t))
	}
	if now, _ := os.ReadFile(fleet.KnownHosts); !bytes.Equal(now, known) {
		t.Errorf("known_hosts changed:\n%s\nbecame\n%s", known, now)
	}
}

// A remote command reading its stdin ends when the local ssh is killed,
// by Close or by Start's context.
func TestKilledLocalSSHEndsTheRemoteCommand(t *testing.T) {
	fleet := sshtest.Start(t, 1)
	opts := Options{ConfigFile: fleet.ConfigFile}
	for _, how := range []string{"Close", "context"} {
		ctx, cancel := context.WithCancel(t.Context())
		pidFile := filepath.Join(t.TempDir(), "pid")
		s, err := Start(ctx, "host1", []string{"sh", "-c", `echo $$ > "$1"; exec cat`, "sh", pidFile}, opts)
		if err != nil {
			t.Fatal(err)
		}
		// A line back from cat: it runs, and has written its pid.
		if _, err := io.WriteString(s.Stdin(), "ping\n"); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(s.Stdout()).ReadString('\n'); line != "ping\n" {
			t.Fatalf("%s: cat answered %q, %v; %v", how, line, err, s.Wait())
		}
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); string(comm) != "cat\n" {
			t.Fatalf("%s: pid %d is %q, not the remote cat", how, pid, comm)
		}

		start := time.Now()
		switch how {
		case "Close":
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := s.Wait(); !errors.Is(err, ErrClosed) {
				t.Errorf("Wait after Close: %v, want ErrClosed", err)
			}
		case "context":
			cancel()
			if err := s.Wait(); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "host1") {
				t.Errorf("Wait after the context ended: %v, want the host and context.Canceled", err)
			}
			s.Close()
		}
		cancel()
		for running(t, pid) {
			// A hang check: a loaded machine may take seconds to reap it.
			if time.Since(start) > 30*time.Second {
				t.Fatalf("%s: the remote cat (pid %d) still runs 30s after the local ssh was killed", how, pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("%s: the remote command ended %v after the local ssh was killed", how, time.Since(start).Round(time.Millisecond))
	}
}

// PushBinary leaves the same bytes, executable, at the remote path, also
// over a file already there, and no temporary file beside it.
func TestPushBinaryCopiesByteForByte(t *testing.T) {
	fleet := sshtest.Start(t, 1)
	opts := Options{ConfigFile: fleet.ConfigFile}
	remoteDir := t.TempDir()
	remote := filepath.Join(remoteDir, "cephbench")
	for i, size := range []int{3<<20 + 7, 1000} {
		local := filepath.Join(t.TempDir(), "bin")
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(j*7 + i + j>>11)
		}
		if err := os.WriteFile(local, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := PushBinary(t.Context(), "host1", local, remote, opts); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(remote)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("push %d: %d bytes arrived, not the %d sent", i, len(got), len(data))
		}
		if st, err := os.Stat(remote); err != nil || st.Mode().Perm()&0o111 != 0o111 {
			t.Errorf("push %d: %v, %v; want it executable", i, st.Mode(), err)
		}
	}
	if entries, _ := os.ReadDir(remoteDir); len(entries) != 1 {
		t.Errorf("the remote folder holds %d files, want only the binary", len(entries))
	}

	err := PushBinary(t.Context(), "host1", remote, filepath.Join(remoteDir, "missing", "cephbench"), opts)
	if err == nil || !strings.HasPrefix(err.Error(), "ssh host1: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a push into a missing folder: %v; want one line naming the host", err)
	}
}

// PushMkdir creates the path's folders and the binary; over a file
// already there it renames a whole copy into place: a reader that had the
// old file open still reads it whole, the path holds the new one, and
// pushes racing to one path from two hosts all succeed, one of them last.
func TestPushMkdirReplacesAtomically(t *testing.T) {
	fleet := sshtest.Start(t, 2)
	opts := Options{ConfigFile: fleet.ConfigFile}
	local := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(local, []byte("new binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(t.TempDir(), "cache", "v1", "cephbench")
	if err := PushMkdir(t.Context(), "host1", local, remote, opts); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(remote); err != nil || string(got) != "new binary" {
		t.Fatalf("after a push: %q, %v", got, err)
	}
	if err := os.WriteFile(remote, []byte("another build"), 0o755); err != nil {
		t.Fatal(err)
	}
	old, err := os.Open(remote)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	errs := make(chan error, 4)
	for i := range cap(errs) {
		go func() { errs <- PushMkdir(t.Context(), fleet.Aliases()[i%2], local, remote, opts) }()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Errorf("pushes racing to one path: %v", err)
		}
	}
	if got, err := io.ReadAll(old); err != nil || string(got) != "another build" {
		t.Errorf("the file replaced, read through a descriptor opened before: %q, %v; want it untouched", got, err)
	}
	if got, _ := os.ReadFile(remote); string(got) != "new binary" {
		t.Errorf("the path holds %q after the pushes", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(remote)); len(entries) != 1 {
		t.Errorf("the remote folder holds %d files, want only the binary", len(entries))
	}
}

// A copy that ends early (the local ssh killed mid-way ends the remote
// stdin as a finished copy does) is refused on the host and removed.
func TestPushRefusesATruncatedCopy(t *testing.T) {
	fleet := sshtest.Start(t, 1)
	remote := filepath.Join(t.TempDir(), "cephbench")
	s, err := Start(t.Context(), "host1", []string{"sh", "-c", pushScript, "sh", remote, "10"}, Options{ConfigFile: fleet.ConfigFile})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := io.WriteString(s.Stdin(), "12345"); err != nil {
		t.Fatal(err)
	}
	s.Stdin().Close()
	if err := s.Wait(); err == nil || !strings.Contains(err.Error(), "received 5 bytes of 10") {
		t.Errorf("5 bytes of 10: %v; want the copy refused", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(remote)); len(entries) != 0 {
		t.Errorf("a refused copy left %d files", len(entries))
	}
}

// A host name that ssh would read as an option is refused before ssh
// runs.
func TestStartRefusesAnOptionForAHost(t *testing.T) {
	for _, host := range []string{"-oProxyCommand=true", "", "two words"} {
		if s, err := Start(t.Context(), host, []string{"true"}, Options{}); err == nil {
			s.Close()
			t.Errorf("host %q was accepted", host)
		}
	}
}

// running reports whether pid has not exited. A process that has exited
// but is not yet reaped by its parent (PID 1, for an orphan, takes its
// time on some machines) has ended.
func running(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	// The state follows the command name in parentheses, which may hold
	// anything.
	_, after, _ := bytes.Cut(b[bytes.LastIndexByte(b, ')')+1:], []byte(" "))
	return len(after) == 0 || after[0] != 'Z'
}

// run runs argv on host and returns its stdout, failing t if it fails.
func run(t *testing.T, host string, opts Options, argv ...string) string {
	t.Helper()
	s, err := Start(t.Context(), host, argv, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Stdin().Close()
	out, readErr := io.ReadAll(s.Stdout())
	if err := s.Wait(); err != nil {
		t.Fatalf("%s: %v", host, err)
	}
	if readErr != nil {
		t.Fatal(readErr)
	}
	return strings.TrimSuffix(string(out), "\n")
}
