package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// How long a daemon gets to exit after SIGTERM before it is killed. A
// memstore OSD saves its whole store to its folder on the way out.
const stopTimeout = 30 * time.Second

// How long a daemon's launcher may take: ceph-mon and ceph-osd wait until
// the daemon has initialised, the others return once they have forked.
const launchTimeout = 2 * time.Minute

// daemon is one Ceph daemon of the sandbox, named as Ceph names it:
// "mon.a", "osd.0", "client.rgw.a".
type daemon string

func (d daemon) kind() string { k, _, _ := strings.Cut(string(d), "."); return k }

func (d daemon) id() string { _, id, _ := strings.Cut(string(d), "."); return id }

// binary is the program that runs d.
func (d daemon) binary() string {
	if d.kind() == "client" {
		return "radosgw"
	}
	return "ceph-" + d.kind()
}

// args start d in the background: every Ceph daemon forks by default.
func (d daemon) args(conf string) []string {
	if d.kind() == "client" {
		return []string{"-c", conf, "-n", string(d)}
	}
	return []string{"-c", conf, "-i", d.id()}
}

func (c *Cluster) pidFile(d daemon) string { return filepath.Join(c.dir, "run", string(d)+".pid") }

func (c *Cluster) logFile(d daemon) string { return filepath.Join(c.dir, "log", string(d)+".log") }

// launchLog holds what a daemon's launcher printed before it detached.
func (c *Cluster) launchLog(d daemon) string {
	return filepath.Join(c.dir, "log", string(d)+".launch.log")
}

// pid returns the pid in d's pid file if that process is alive and is d
// of this sandbox, and 0 otherwise. The check against the process's
// command line keeps a stale pid file from naming an unrelated process
// that was given the same pid later.
func (c *Cluster) pid(d daemon) int {
	b, err := os.ReadFile(c.pidFile(d))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || !c.isOurs(pid, d) {
		return 0
	}
	return pid
}

// isOurs reports whether pid is a live (not zombie) process running d
// with this sandbox's ceph.conf.
func (c *Cluster) isOurs(pid int, d daemon) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain spaces or parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if filepath.Base(args[0]) != d.binary() {
		return false
	}
	return slices.Equal(args[1:], d.args(c.Conf()))
}

// launch starts d and returns once its pid file names a live process.
// Neither the launcher nor the wait for the pid file is cut short by ctx:
// either would leave a forked daemon that Down cannot find.
func (c *Cluster) launch(ctx context.Context, d daemon) error {
	out, err := os.Create(c.launchLog(d))
	if err != nil {
		return err
	}
	defer out.Close()
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), launchTimeout)
	defer cancel()
	argv := append([]string{d.binary()}, d.args(c.Conf())...)
	if c.st.Netns != "" {
		argv = append([]string{"ip", "netns", "exec", c.st.Netns}, argv...)
	}
	cmd := exec.CommandContext(lctx, argv[0], argv[1:]...)
	cmd.Env = cephEnv()
	cmd.Stdout, cmd.Stderr = out, out
	// Its own session, so that Ctrl-C in the terminal reaches cephbench,
	// which stops the daemons in order, and not the daemons themselves.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil {
		return c.daemonError(d, fmt.Errorf("%s did not start: %w", d, err))
	}
	deadline := time.Now().Add(30 * time.Second)
	for c.pid(d) == 0 {
		if time.Now().After(deadline) {
			return c.daemonError(d, fmt.Errorf("%s did not write its pid file %s", d, c.pidFile(d)))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// daemonError adds the end of d's log to err, where Ceph says why a
// daemon stopped; or, when there is no log yet, what its launcher printed.
func (c *Cluster) daemonError(d daemon, err error) error {
	tail := lastLines(c.logFile(d), 12)
	if tail == "" {
		tail = lastLines(c.launchLog(d), 12)
	}
	if tail == "" {
		return err
	}
	return fmt.Errorf("%w; end of %s:\n%s", err, c.logFile(d), tail)
}

// lastLines returns the last n lines of the file at path, or "".
func lastLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := strings.Join(lines, "\n")
	if s == "" {
		return ""
	}
	return s + "\n"
}

// stop sends SIGTERM to each of ds that is running, waits for them to
// exit, and kills those still running after stopTimeout or when ctx is
// done. It waits for the killed ones too, so that none of ds runs when it
// returns.
func (c *Cluster) stop(ctx context.Context, ds ...daemon) error {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		killed []string
	)
	for _, d := range ds {
		pid := c.pid(d)
		if pid == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !c.signalAndWait(ctx, pid, d, syscall.SIGTERM) {
				c.signalAndWait(context.Background(), pid, d, syscall.SIGKILL)
				mu.Lock()
				killed = append(killed, string(d))
				mu.Unlock()
			}
			// A daemon removes its own pid file when it exits cleanly, not
			// when it is killed.
			os.Remove(c.pidFile(d))
		}()
	}
	wg.Wait()
	for _, d := range ds {
		if pid := c.pid(d); pid != 0 {
			return fmt.Errorf("%s (pid %d) is still running", d, pid)
		}
	}
	if len(killed) > 0 {
		return fmt.Errorf("killed %s: no exit %s after SIGTERM", strings.Join(killed, ", "), stopTimeout)
	}
	return nil
}

// signalAndWait sends sig to pid, which runs d, and reports whether it
// exited within stopTimeout and before ctx was done.
func (c *Cluster) signalAndWait(ctx context.Context, pid int, d daemon, sig syscall.Signal) bool {
	if err := syscall.Kill(pid, sig); errors.Is(err, syscall.ESRCH) {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	for c.isOurs(pid, d) {
		if sleep(ctx, 50*time.Millisecond) != nil {
			return !c.isOurs(pid, d)
		}
	}
	return true
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// cephEnv is the environment of every Ceph program the sandbox runs:
// the caller's, minus what would point them at another cluster.
func cephEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "CEPH_ARGS" && k != "CEPH_CONF" && k != "CEPH_KEYRING" {
			env = append(env, kv)
		}
	}
	return env
}
