//go:build ceph

package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/internal/cli"
)

// rados bench under GNU timeout -s INT, as the user ran it: the
// signal it gets twice is one interrupt, so every time rados bench's JSON
// is printed and the pool is left with none of its objects.
func TestTimeoutsInterruptOfRadosBench(t *testing.T) {
	timeout, err := exec.LookPath("timeout")
	if err != nil {
		t.Skip("no GNU timeout")
	}
	conn := cephtest.Cluster(t)
	pool := cephtest.Pool(t, conn, "cbint")
	ioctx, err := conn.OpenIOContext(pool)
	if err != nil {
		t.Fatal(err)
	}
	defer ioctx.Destroy()
	dir, bin := buildWithCeph(t)
	for i := 0; i < 5; i++ {
		cmd := exec.Command(timeout, "--preserve-status", "-s", "INT", "4", bin, "rados", "bench", "-p", pool, "30", "write", "--format", "json")
		cmd.Dir = dir
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := exitCode(t, cmd.Run())
		var out struct {
			Bandwidth string `json:"bandwidth"`
		}
		if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil || out.Bandwidth == "" || code != cli.ExitInterrupted {
			t.Errorf("run %d: exit %d, stdout %q (%v); want %d and rados bench's JSON\n%s", i+1, code, stdout.String(), err, cli.ExitInterrupted, stderr.String())
		}
		if left := listObjects(t, ioctx, false); len(left) != 0 {
			t.Fatalf("run %d left %d objects in the pool\n%s", i+1, len(left), stderr.String())
		}
	}
}
