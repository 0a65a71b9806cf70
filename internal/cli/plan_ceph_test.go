//go:build ceph

package cli

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceph/go-ceph/cephfs"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/result"
)

// wantPlanDone checks that every step of the plan in out finished with a
// result, and returns the folder's results.
func wantPlanDone(t *testing.T, out string, steps int) *aggregate.Set {
	t.Helper()
	m, err := result.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != result.StepDone || len(m.Steps) != steps {
		t.Fatalf("plan %s: %s with %d steps; want done with %d", m.Plan, m.Status, len(m.Steps), steps)
	}
	for _, st := range m.Steps {
		if st.Status != result.StepDone || len(st.Results) == 0 {
			t.Errorf("%s: %s, %d results", st.ID, st.Status, len(st.Results))
		}
	}
	set, err := aggregate.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestBuiltInRadosRBDPlan(t *testing.T) {
	t.Parallel() // with the other long plans, after the package's other tests
	pool := poolFor(t, "rbd")
	out := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := cephbench(t, context.Background(), "run", "rados-rbd", "--set", "pool="+pool,
		"--set", "seconds=2", "--set", "pause=0s", "--set", "image_size=64M", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	set := wantPlanDone(t, out, 8)
	for _, g := range set.Groups() {
		if g.IOPS.Mean <= 0 || g.Errors != 0 {
			t.Errorf("%s %s: %.0f IOPS, %d errors", g.Name(), g.Kind, g.IOPS.Mean, g.Errors)
		}
	}
	// The cleanup removed the benchmark objects and the image the plan
	// created.
	for _, o := range poolObjects(t, pool) {
		if strings.HasPrefix(o, "benchmark_") || strings.HasPrefix(o, "rbd_data.") || strings.HasPrefix(o, "rbd_header.") {
			t.Errorf("the plan left %s in the pool", o)
		}
	}
	if images := strings.TrimSpace(tool(t, "rbd", "ls", "-p", pool)); images != "" {
		t.Errorf("the plan left images: %s", images)
	}
}

func TestBuiltInBaselinePlan(t *testing.T) {
	t.Parallel() // with the other long plans, after the package's other tests
	pool := poolFor(t, "rbd")
	m := cephtest.MountCephFS(t)
	fsDir := fmt.Sprintf("/cbbaseline-%d", rand.Uint32())
	disk := filepath.Join(t.TempDir(), "disk.dat")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	ctx, stop := context.WithCancel(context.Background())
	serverDone := make(chan int)
	go func() {
		serverDone <- Main(ctx, Env{Stdout: io.Discard, Stderr: io.Discard}, []string{"net", "server", "--listen", "127.0.0.1:" + port})
	}()
	t.Cleanup(func() { stop(); <-serverDone })

	out := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := cephbench(t, context.Background(), "run", "baseline", "--set", "pool="+pool,
		"--set", "disk="+disk, "--set", "port="+port, "--set", "fs_path="+fsDir,
		"--set", "seconds=2", "--set", "pause=0s", "--set", "size=64M", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	set := wantPlanDone(t, out, 13)
	// The same four workloads on RBD and on CephFS, side by side, and the
	// network and disk baselines.
	targets := map[string][]string{}
	kinds := map[string]bool{}
	for _, g := range set.Groups() {
		targets[g.Step] = append(targets[g.Step], g.Target)
		kinds[g.Kind] = true
	}
	for _, step := range []string{"write-4M", "read-4M", "randwrite-4K", "randread-4K"} {
		if got := strings.Join(targets[step], ","); got != "rbd,cephfs" {
			t.Errorf("%s ran on %q; want rbd,cephfs", step, got)
		}
	}
	if !kinds["up"] || len(targets["disk"]) == 0 {
		t.Errorf("no network or disk baseline among the measurements: %v", targets)
	}
	if images := strings.TrimSpace(tool(t, "rbd", "ls", "-p", pool)); images != "" {
		t.Errorf("the plan left images: %s", images)
	}
	if _, err := m.Statx(fsDir, cephfs.StatxMode, 0); err == nil {
		t.Errorf("the plan left its CephFS directory %s", fsDir)
	}
	if _, err := os.Stat(disk); !os.IsNotExist(err) {
		t.Errorf("the plan left the disk baseline's file: %v", err)
	}
}
