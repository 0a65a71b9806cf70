package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/cephbench/cephbench/internal/cli"
	"github.com/cephbench/cephbench/transport/kube/inpod"
)

// launcher is the program that renders and runs "cephbench k8s": it
// holds the Kubernetes client, kept out of this binary, which the pods
// run and --push-binary copies.
const launcher = "cephbench-k8s"

// k8s is "cephbench k8s ARGS": the agent of a run's pod here, render and
// run in cephbench-k8s, found beside this binary or on PATH, which
// replaces this process.
func k8s(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "agent" {
		return inpod.Main(ctx, args[1:], os.Stdout, os.Stderr)
	}
	path, err := findLauncher()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cephbench: k8s needs %s beside cephbench or on PATH (make k8s builds bin/%s)\n", launcher, launcher)
		return cli.ExitUsage
	}
	err = syscall.Exec(path, append([]string{launcher}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "cephbench: running %s: %v\n", path, err)
	return cli.ExitFailure
}

// findLauncher is cephbench-k8s beside this binary, or else on PATH.
func findLauncher() (string, error) {
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), launcher)
		if fi, err := os.Stat(beside); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	path, err := exec.LookPath(launcher)
	if errors.Is(err, exec.ErrDot) {
		err = nil // a launcher in the working directory is one the user put there
	}
	return path, err
}
