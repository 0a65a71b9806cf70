// Command cephbench measures Ceph clusters, local disks and the network.
package main

import (
	"context"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/internal/cli"
	"github.com/cephbench/cephbench/internal/interrupt"

	_ "github.com/cephbench/cephbench/engine/dirobj"
	_ "github.com/cephbench/cephbench/engine/file"
	_ "github.com/cephbench/cephbench/engine/null"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	// SIGPIPE (stdout piped into head) stops the run like Ctrl-C does, so
	// that what it wrote is still removed; later writes just fail.
	interrupt.Notify(cancel, cli.ExitInterrupted, func(os.Signal) {
		// Any write to a pipe nobody reads is told here, one to a lost
		// host's ssh too: only a stdout gone stops the run.
		if stdoutGone() {
			cancel()
		}
	}, syscall.SIGPIPE)
	if len(os.Args) > 1 && os.Args[1] == "k8s" {
		os.Exit(k8s(ctx, os.Args[2:]))
	}
	env := cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, StdoutTerminal: isTerminal(os.Stdout), StderrTerminal: isTerminal(os.Stderr)}
	os.Exit(cli.Main(ctx, env, os.Args[1:]))
}

// stdoutGone reports whether stdout is a pipe whose reader has gone.
func stdoutGone() bool {
	fds := []unix.PollFd{{Fd: int32(unix.Stdout), Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&unix.POLLERR != 0
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
