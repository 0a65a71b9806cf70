// Package ssh runs commands on other hosts through the system's OpenSSH
// client, never an SSH implementation of its own, so that the operator's
// own ssh configuration applies unchanged: keys, agent, certificates, jump
// hosts and known_hosts. Every connection is in batch mode (no prompts)
// with strict host key checking: a host whose key is unknown or changed is
// refused, never added.
package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/cephbench/cephbench/internal/shellword"
)

// ErrClosed is what Wait returns for a session that Close ended.
var ErrClosed = errors.New("session closed")

// Options are how ssh is run.
type Options struct {
	// ConfigFile is given to ssh as -F: it replaces the user's
	// ~/.ssh/config and /etc/ssh/ssh_config. Empty: those are read.
	ConfigFile string
}

// Error is a session that failed: ssh could not connect or log in (exit
// status 255, which the remote command's own 255 cannot be told from), or
// the remote command exited with another non-zero status.
type Error struct {
	Host       string
	ExitStatus int
	// LastLine is the last line ssh wrote on stderr (its own message, or
	// the remote command's), without control characters; may be empty.
	LastLine string
}

// Error is one line naming the host and what ssh said.
func (e *Error) Error() string {
	switch {
	case e.ExitStatus == 255 && e.LastLine != "":
		return fmt.Sprintf("ssh %s: %s", e.Host, e.LastLine)
	case e.LastLine != "":
		return fmt.Sprintf("ssh %s: remote command exited with status %d: %s", e.Host, e.ExitStatus, e.LastLine)
	}
	return fmt.Sprintf("ssh %s: exited with status %d", e.Host, e.ExitStatus)
}

// Session is a command running on a host, through a local ssh process.
// Its Stdin and Stdout may be used by one goroutine each; Wait and Close
// may be called from any goroutine, any number of times.
type Session struct {
	host   string
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *tail

	done      chan struct{}
	err       error // set before done is closed
	closing   atomic.Bool
	closeOnce sync.Once
}

// stderrKept is how much of ssh's stderr a session keeps for its error.
const stderrKept = 4 << 10

// waitDelay bounds how long Wait waits for ssh's stderr to close after
// ssh exits: a process ssh started (a ProxyCommand, a jump host's ssh) may
// still hold it.
const waitDelay = 2 * time.Second

// Start runs argv on host through `ssh -o BatchMode=yes -o
// StrictHostKeyChecking=yes`, with the user's ssh configuration or
// opts.ConfigFile. The remote login shell runs argv, each word quoted for
// a POSIX shell. host is passed after "--", so it cannot be taken for an
// option. When ctx is done, the local ssh is killed; this (or Close)
// closes the remote command's stdin, and a command that reads its stdin
// then sees its end. Start returns an error only when ssh cannot be
// started; a failed connection shows in Wait and as Stdout's end.
func Start(ctx context.Context, host string, argv []string, opts Options) (*Session, error) {
	if err := checkHost(host); err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("ssh %s: no command", host)
	}
	args := []string{
		"-T", // no terminal: stdin and stdout carry data
		"-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=yes",
		// Forwardings in the user's config would be set up, and could
		// collide, once per session.
		"-o", "ClearAllForwardings=yes",
	}
	if opts.ConfigFile != "" {
		args = append(args, "-F", opts.ConfigFile)
	}
	args = append(args, "--", host, shellword.Join(argv))

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	s := &Session{
		host:   host,
		stdin:  stdinW,
		stdout: stdoutR,
		stderr: &tail{max: stderrKept},
		done:   make(chan struct{}),
	}
	s.cmd = exec.CommandContext(ctx, "ssh", args...)
	s.cmd.Stdin = stdinR
	s.cmd.Stdout = stdoutW
	s.cmd.Stderr = s.stderr
	s.cmd.WaitDelay = waitDelay
	// Its own process group: a Ctrl-C at the terminal reaches the
	// coordinator, which decides how its sessions end, not ssh.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = s.cmd.Start()
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, fmt.Errorf("ssh %s: %w", host, err)
	}
	go s.wait(ctx)
	return s, nil
}

// Host returns the host the session runs on, as Start was given it.
func (s *Session) Host() string { return s.host }

// Stdin is the remote command's stdin; closing it ends that stdin.
func (s *Session) Stdin() io.WriteCloser { return s.stdin }

// Stdout is the remote command's stdout; it ends when ssh exits.
func (s *Session) Stdout() io.Reader { return s.stdout }

// Wait waits for the local ssh to exit and returns nil if the remote
// command exited with status 0, ErrClosed if Close ended the session,
// ctx's error (wrapped, naming the host) if Start's context did, and an
// *Error otherwise.
func (s *Session) Wait() error {
	<-s.done
	return s.err
}

// Close kills the local ssh if it still runs, which closes the remote
// command's stdin, waits for it to exit and releases the session's pipes.
// It returns Wait's error, except ErrClosed.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Kill()
		}
		<-s.done
		s.stdin.Close()
		s.stdout.Close()
	})
	if errors.Is(s.err, ErrClosed) {
		return nil
	}
	return s.err
}

func (s *Session) wait(ctx context.Context) {
	err := s.cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.Is(err, exec.ErrWaitDelay):
		// The command succeeded; a process ssh started kept its stderr
		// open past waitDelay.
		err = nil
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		err = &Error{Host: s.host, ExitStatus: exit.ExitCode(), LastLine: s.stderr.lastLine()}
	case s.closing.Load():
		err = ErrClosed
	case ctx.Err() != nil:
		err = fmt.Errorf("ssh %s: %w", s.host, ctx.Err())
	default:
		err = fmt.Errorf("ssh %s: %w", s.host, err)
	}
	s.err = err
	close(s.done)
}

// checkHost refuses a host name ssh would take for an option or that
// is not one word.
func checkHost(host string) error {
	if host == "" {
		return errors.New("an empty host name")
	}
	if strings.HasPrefix(host, "-") {
		return fmt.Errorf("host %q: a host name cannot begin with '-'", host)
	}
	if strings.IndexFunc(host, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("host %q: a host name is one word", host)
	}
	// --hosts separates names by commas: a hostfile's "a,b" is two hosts
	// written as if on one line, not a name.
	if strings.Contains(host, ",") {
		return fmt.Errorf("host %q: a host name has no ','", host)
	}
	return nil
}

// tail keeps the last max bytes written to it. It is written by exec's
// copying goroutine and read only after Wait, which orders the two.
type tail struct {
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

// lastLine is the last non-blank line, without control characters: ssh
// ends its lines with "\r\n", and a remote command may write anything.
func (t *tail) lastLine() string {
	lines := bytes.Split(t.buf, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return -1
			}
			return r
		}, string(lines[i]))
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}
