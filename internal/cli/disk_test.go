package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine/file"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/io/devsafe/devsafetest"
	"github.com/cephbench/cephbench/result"
)

var diskStepNames = []string{
	"disk-seqwrite-4M", "disk-seqread-4M",
	"disk-randread-4K-qd1", "disk-randread-4K-qd32",
	"disk-randwrite-4K-qd1", "disk-randwrite-4K-qd32",
}

// varTmpDir is a new directory under /var/tmp, which is on a disk where
// the default temporary directory may be a tmpfs.
func varTmpDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "cephbench-disk-test.")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// runDiskCmd runs "cephbench disk" with 1 s steps and returns its stdout
// and the saved results, in step order, each checked for ops and no
// errors. The table that ends the output must list every step.
func runDiskCmd(t *testing.T, args ...string) (string, []*result.Result) {
	t.Helper()
	results := t.TempDir()
	args = append([]string{"disk"}, append(args, "--duration", "1s", "--quiet", "--results", results)...)
	code, stdout, stderr := cephbench(t, context.Background(), args...)
	if code != ExitOK {
		t.Fatalf("cephbench %s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(results, "*-disk", "*.json"))
	all := loadMeasured(t, files)
	for _, r := range all {
		if !r.Spec.Direct {
			t.Errorf("%s: not direct", r.Name)
		}
	}
	_, table, ok := strings.Cut(stdout, "STEP")
	if !ok {
		t.Fatalf("no table of the steps:\n%s", stdout)
	}
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 5 {
			rows = append(rows, f[0])
		}
	}
	for _, r := range all {
		if !slices.Contains(rows, r.Name) {
			t.Errorf("the table does not list %s:\n%s", r.Name, table)
		}
	}
	return stdout, all
}

// checkSteps checks that results are the steps named, in order, and that
// each sequential one made one pass over region bytes.
func checkSteps(t *testing.T, results []*result.Result, names []string, region int64) {
	t.Helper()
	var got []string
	for _, r := range results {
		got = append(got, r.Name)
	}
	if !slices.Equal(got, names) {
		t.Fatalf("steps %v; want %v", got, names)
	}
	for _, r := range results {
		kind := "read"
		if r.Spec.ReadPercent == 0 {
			kind = "write"
		}
		s := r.Ops[kind]
		if strings.Contains(r.Name, "-seq") && (s.Bytes != region || s.Ops != region/(4<<20) || r.StopReason != "bytes") {
			t.Errorf("%s: %d ops, %d bytes, stopped at %s; want one pass over %d bytes", r.Name, s.Ops, s.Bytes, r.StopReason, region)
		}
		if strings.Contains(r.Name, "-rand") && (r.Spec.BlockSize != 4<<10 || r.Spec.IOEngine == "" || s.Ops == 0) {
			t.Errorf("%s: %d ops of %s through %q; want 4K ops through io_uring or libaio", r.Name, s.Ops, r.Spec.BlockSize, r.Spec.IOEngine)
		}
	}
}

func TestDiskOnNewFile(t *testing.T) {
	dir := varTmpDir(t)
	probe, err := os.OpenFile(filepath.Join(dir, "probe"), os.O_CREATE|os.O_RDWR|unix.O_DIRECT, 0o600)
	refusesDirect := errors.Is(err, unix.EINVAL)
	if err == nil {
		probe.Close()
	}
	os.Remove(filepath.Join(dir, "probe"))

	_, results := runDiskCmd(t, filepath.Join(dir, "disk.dat"), "--size", "8M")
	checkSteps(t, results, diskStepNames, 8<<20)
	for _, r := range results {
		noted := slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "O_DIRECT") })
		if noted != refusesDirect {
			t.Errorf("%s: notes %q, while the filesystem refuses O_DIRECT: %v", r.Name, r.Notes, refusesDirect)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the file the run created is still there: %v", entries)
	}
}

func TestDiskKeepsFileInDirectory(t *testing.T) {
	dir := varTmpDir(t)
	_, results := runDiskCmd(t, dir, "--size", "8M", "--keep")
	checkSteps(t, results, diskStepNames, 8<<20)
	fi, err := os.Stat(filepath.Join(dir, file.WorkerFile(0)))
	if err != nil || fi.Size() != 8<<20 {
		t.Errorf("with --keep the file is %v, %v; want 8 MiB", fi, err)
	}
}

func TestDiskOnlyReadsForeignFile(t *testing.T) {
	path := filepath.Join(varTmpDir(t), "precious.dat")
	data := bytes.Repeat([]byte("not cephbench's"), 1<<20)[:8<<20]
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, results := runDiskCmd(t, path)
	checkSteps(t, results, []string{"disk-seqread-4M", "disk-randread-4K-qd1", "disk-randread-4K-qd32"}, 8<<20)
	if !strings.Contains(stdout, "--force") {
		t.Errorf("the output does not say why nothing was written:\n%s", stdout)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, data) {
		t.Errorf("the user's file changed or is gone: %v", err)
	}
}

func TestDiskOnLoopDevice(t *testing.T) {
	dev, image := devsafetest.Loop(t, 64<<20)
	_, results := runDiskCmd(t, dev, "--size", "16M")
	checkSteps(t, results, diskStepNames, 16<<20)
	if _, err := os.Stat(dev); err != nil {
		t.Errorf("the device is gone after the run: %v", err)
	}
	img, err := os.ReadFile(image)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(img[:4<<20], []byte{0}) == 4<<20 || bytes.Count(img[16<<20:], []byte{0}) != 48<<20 {
		t.Errorf("the run did not write the first 16M of the device, or wrote past them")
	}

	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		t.Skip("mkfs.ext4 is not installed")
	}
	if out, err := exec.Command(mkfs, "-q", "-F", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, out)
	}
	before := sha256File(t, image)
	code, stdout, stderr := cephbench(t, context.Background(), "disk", dev, "--duration", "1s", "--results", t.TempDir())
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != ExitUsage || len(lines) != 1 || !strings.Contains(stderr, "ext4") || !strings.Contains(stderr, "--force") || stdout != "" {
		t.Errorf("disk on a device with a filesystem: exit %d, stdout %q, stderr %q; want exit 2 and one line naming ext4 and --force", code, stdout, stderr)
	}
	if sha256File(t, image) != before {
		t.Error("the refused run changed the device")
	}
}

func sha256File(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return [sha256.Size]byte(h.Sum(nil))
}

func TestDiskBadInputIsOneLineAndExit2(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]string{
		"no path":          {"disk"},
		"missing parent":   {"disk", dir + "/no/such/dir/f"},
		"bad bs":           {"disk", dir + "/f", "--bs", "4q"},
		"bs not direct":    {"disk", dir + "/f", "--bs", "1000"},
		"size below bs":    {"disk", dir + "/f", "--size", "1M"},
		"zero duration":    {"disk", dir + "/f", "--duration", "0"},
		"character device": {"disk", "/dev/null"},
	}
	for name, args := range cases {
		code, stdout, stderr := cephbench(t, context.Background(), append(args, "--results", dir+"/results")...)
		wantUsageError(t, name, code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad input left files behind: %v", entries)
	}
}

// A plan reads a disk command line into a job that creates nothing, and
// says it runs at least a step's duration: a sequential step may end
// after one pass over the region. Its paths are taken from the command's
// working directory.
func TestDiskCommandLineIsAJobWithoutIO(t *testing.T) {
	dir := t.TempDir()
	var j frontend.Job
	code := Main(context.Background(), Env{Stdout: io.Discard, Stderr: io.Discard, Dir: dir, parsed: &j},
		[]string{"disk", "disk.dat", "--size", "8M", "--duration", "5s", "--results", "results"})
	if code != ExitOK || len(j.Steps) != len(diskStepNames) {
		t.Fatalf("exit %d, %d steps; want exit 0 and the %d steps", code, len(j.Steps), len(diskStepNames))
	}
	if d, exact := frontend.Estimate(j); d != 5*time.Second || exact {
		t.Errorf("estimate %s (exact %v); want at least 5s", d, exact)
	}
	if loc := j.Steps[0].Workload.Target.Location; loc != filepath.Join(dir, "disk.dat") {
		t.Errorf("the job writes %s; want disk.dat in %s", loc, dir)
	}
	if save := j.Steps[0].Save; !strings.HasPrefix(save, filepath.Join(dir, "results")+"/") {
		t.Errorf("the job saves its first step to %s; want under %s", save, filepath.Join(dir, "results"))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("parsing created %v", entries)
	}
}
