package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// "cephbench k8s render|run" is cephbench-k8s, found beside cephbench,
// given the same arguments; without it, one line says how to build it.
func TestK8sRunsTheLauncherBesideIt(t *testing.T) {
	dir, bin := build(t)
	run := func(args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "PATH="+t.TempDir()) // none on PATH
		out, err := cmd.CombinedOutput()
		return exitCode(t, err), string(out)
	}
	code, out := run("k8s", "render", "--clients", "2")
	if code != 2 || !strings.Contains(out, "cephbench-k8s") || !strings.Contains(out, "make k8s") || strings.Count(out, "\n") != 1 {
		t.Errorf("no launcher: exit %d, %q; want 2 and one line saying how to build it", code, out)
	}
	launcher := filepath.Join(dir, "cephbench-k8s")
	if err := os.WriteFile(launcher, []byte("#!/bin/sh\necho \"launched: $0 $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out = run("k8s", "render", "--clients", "2", "--", "bench", "--target", "null://")
	if code != 0 || out != "launched: "+launcher+" render --clients 2 -- bench --target null://\n" {
		t.Errorf("with the launcher beside it: exit %d, %q", code, out)
	}
	// The pods' agent is this binary's own.
	code, out = run("k8s", "agent", "--configmap", "run1")
	if code != 2 || !strings.Contains(out, "JOB_COMPLETION_INDEX") {
		t.Errorf("an agent outside a pod: exit %d, %q; want 2 naming the index it lacks", code, out)
	}
	for _, help := range []string{"--help", "-h"} {
		code, out = run("k8s", "agent", help)
		if code != 0 || !strings.HasPrefix(out, "usage: cephbench k8s agent --configmap NAME") {
			t.Errorf("k8s agent %s: exit %d, %q; want 0 and the agent's usage", help, code, out)
		}
	}
}
