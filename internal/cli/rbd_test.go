//go:build ceph

package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ceph/go-ceph/rbd"

	_ "github.com/cephbench/cephbench/engine/rbd"
	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/result"
)

func images(t *testing.T, pool string) []string {
	t.Helper()
	return strings.Fields(tool(t, "rbd", "ls", "-p", pool))
}

// The rbd bench layout: start line, table header, rows, closing lines.
var (
	rbdStart = regexp.MustCompile(`(?m)^bench  type (read|write|readwrite read:write=\d+:\d+) io_size \d+ io_threads \d+ bytes \d+ pattern (sequential|random)$`)
	rbdEnd   = regexp.MustCompile(`(?m)^elapsed: \d+   ops: (\d+)   ops/sec: [\d.e+]+   bytes/sec: \d+ [KMGT]?i?B/s$`)
)

func TestRBDBenchCreatesWritesReadsAndRemoves(t *testing.T) {
	pool := poolFor(t, "rbd")
	results := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		code, out, errOut := cephbench(t, context.Background(), append(append([]string{"rbd", "bench", "-p", pool}, args...), "--results", results)...)
		if code != 0 {
			t.Fatalf("rbd bench %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
		}
		if !rbdStart.MatchString(out) || !strings.Contains(out, "  SEC       OPS   OPS/SEC   BYTES/SEC\n") || !rbdEnd.MatchString(out) {
			t.Errorf("rbd bench %s: not rbd bench's layout:\n%s", strings.Join(args, " "), out)
		}
		return out
	}
	out := run("img", "--io-type", "write", "--io-size", "64K", "--io-total", "32M", "--io-threads", "8", "--create", "--size", "32M", "--keep")
	if m := rbdEnd.FindStringSubmatch(out); m == nil || m[1] != "512" {
		t.Errorf("a 32M write in 64K ops: %v ops; want 512\n%s", m, out)
	}
	if got := images(t, pool); len(got) != 1 || got[0] != "img" {
		t.Fatalf("after a kept write, the pool holds %v; want the image", got)
	}
	run(pool+"/img", "--io-type", "read", "--io-size", "64K", "--io-total", "16M", "--io-pattern", "rand")
	out = run("img", "--io-type", "readwrite", "--rw-mix-read", "70", "--io-total", "8M", "--io-pattern", "rand")
	for _, line := range []string{"read_ops: ", "write_ops: ", "read_latency(ms): min ", "write_latency(ms): min "} {
		if !strings.Contains(out, "\n"+line) {
			t.Errorf("a readwrite run does not print %q:\n%s", line, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(results, "*.json"))
	writes, _ := filepath.Glob(filepath.Join(results, "*-rbd-bench-write.json"))
	if len(files) != 3 || len(writes) != 1 {
		t.Fatalf("%d results saved for 3 runs, %d of the write", len(files), len(writes))
	}
	r, err := result.Load(writes[0])
	if err != nil {
		t.Fatal(err)
	}
	if r.Ops["write"].Bytes != 32<<20 || r.Cluster == nil || r.Cluster.Before == nil {
		t.Errorf("the write's result: %d bytes written, cluster %v; want 32 MiB and the cluster's state", r.Ops["write"].Bytes, r.Cluster)
	}
	// A run that creates and does not keep leaves nothing; the image a
	// kept run created is the user's to remove now, and stays.
	run("tmp", "--io-type", "write", "--io-total", "4M", "--create", "--size", "8M")
	if got := images(t, pool); len(got) != 1 || got[0] != "img" {
		t.Errorf("after a run that created an image without --keep, the pool holds %v; want only the kept one", got)
	}
}

func TestRBDBenchBadInput(t *testing.T) {
	pool := poolFor(t, "rbd")
	tool(t, "rbd", "create", "-p", pool, "img", "--size", "8M")
	cases := map[string][]string{
		"missing pool":     {"rbd", "bench", "-p", "no-such-pool", "img", "--io-type", "write"},
		"missing image":    {"rbd", "bench", "-p", pool, "nothing", "--io-type", "write"},
		"create, no size":  {"rbd", "bench", "-p", pool, "new", "--io-type", "write", "--create"},
		"no io-type":       {"rbd", "bench", "-p", pool, "img"},
		"bad io-type":      {"rbd", "bench", "-p", pool, "img", "--io-type", "scribble"},
		"bad size":         {"rbd", "bench", "-p", pool, "img", "--io-type", "write", "--io-size", "4Q"},
		"no image":         {"rbd", "bench", "-p", pool, "--io-type", "write"},
		"region too large": {"rbd", "bench", "-p", pool, "img", "--io-type", "write", "--size", "1G"},
	}
	for name, args := range cases {
		code, out, errOut := cephbench(t, context.Background(), append(args, "--results", t.TempDir())...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != ExitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], "cephbench: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a one-line error and exit %d", name, code, out, errOut, ExitUsage)
		}
	}
	if got := images(t, pool); len(got) != 1 {
		t.Errorf("bad input changed the pool's images to %v", got)
	}
}

// The images cephbench must not write over without --force: one holding a
// filesystem (report 003 ran rbd bench-write over a fresh XFS), and one in
// use by another client.
func TestRBDBenchRefusesImagesHoldingDataInUse(t *testing.T) {
	pool := poolFor(t, "rbd")
	tool(t, "rbd", "create", "-p", pool, "xfs", "--size", "8M")
	tool(t, "rbd", "create", "-p", pool, "open", "--size", "8M")
	conn := cephtest.Cluster(t)
	ioctx, err := conn.OpenIOContext(pool)
	if err != nil {
		t.Fatal(err)
	}
	defer ioctx.Destroy()
	img, err := rbd.OpenImage(ioctx, "xfs", rbd.NoSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := img.WriteAt([]byte("XFSB"), 0); err != nil {
		t.Fatal(err)
	}
	img.Close()
	inUse, err := rbd.OpenImage(ioctx, "open", rbd.NoSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	defer inUse.Close()

	bench := func(image string, extra ...string) (int, string) {
		args := append([]string{"rbd", "bench", "-p", pool, image, "--io-type", "write", "--io-total", "1M", "--results", t.TempDir()}, extra...)
		code, _, errOut := cephbench(t, context.Background(), args...)
		return code, errOut
	}
	if code, errOut := bench("xfs"); code != ExitUsage || !strings.Contains(errOut, "xfs signature") {
		t.Errorf("a write over an XFS image: exit %d, %q; want refused, naming the signature", code, errOut)
	}
	if code, errOut := bench("open"); code != ExitUsage || !strings.Contains(errOut, "in use") {
		t.Errorf("a write to an image open in another client: exit %d, %q; want refused as in use", code, errOut)
	}
	if code, errOut := bench("xfs", "--force"); code != 0 {
		t.Errorf("--force over the XFS image: exit %d, %q", code, errOut)
	}
	code, _, errOut := cephbench(t, context.Background(), "rbd", "bench", "-p", pool, "open", "--io-type", "read", "--io-total", "1M", "--results", t.TempDir())
	if code != 0 {
		t.Errorf("a read of an image in use: exit %d, %q; reading must stay allowed", code, errOut)
	}
	if got := images(t, pool); len(got) != 2 {
		t.Errorf("the pool's images are %v; cephbench must never remove an image it did not create", got)
	}
}

func TestRunBuiltInPlanOnRBD(t *testing.T) {
	pool := poolFor(t, "rbd")
	for _, r := range runPlanOn(t, "rbd://"+pool+"/plan?create=true", 4) {
		if r.Spec.ReadPercent == 100 && !r.Spec.Verify {
			t.Errorf("%s did not verify its reads of the image the plan created", r.Name)
		}
	}
	if got := images(t, pool); len(got) != 0 {
		t.Errorf("the image the plan created is still there: %v", got)
	}
	tool(t, "rbd", "create", "-p", pool, "users", "--size", "64M")
	runPlanOn(t, "rbd://"+pool+"/users", 4)
	if got := images(t, pool); len(got) != 1 {
		t.Errorf("after the plan on the user's image, the pool holds %v; the image must stay", got)
	}
}

// An OSD stopped in the middle of writes to an image.
func TestDisruptiveRBDBenchSurvivesAStoppedOSD(t *testing.T) {
	pool := poolFor(t, "rbd")
	stopped := stopAnOSD(t, 2*time.Second)
	checkStall(t, stopped, "write", "rbd", "bench", "-p", pool, "img", "--io-type", "write", "--io-pattern", "rand",
		"--create", "--size", "64M", "--io-total", "64G", "--duration", "8s")
}
