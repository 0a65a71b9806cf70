package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	_ "github.com/cephbench/cephbench/engine/dirobj"
	_ "github.com/cephbench/cephbench/engine/file"
	_ "github.com/cephbench/cephbench/engine/null"
	"github.com/cephbench/cephbench/internal/io/diskstats"
	"github.com/cephbench/cephbench/result"
)

// cephbench runs the CLI in-process and returns its exit code and output.
func cephbench(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, Env{Stdout: &stdout, Stderr: &stderr}, args)
	return code, stdout.String(), stderr.String()
}

// cephbenchIn runs the CLI in-process in the working directory dir, with
// getenv as its environment (nil: the process's).
func cephbenchIn(t *testing.T, ctx context.Context, dir string, getenv func(string) string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, Env{Stdout: &stdout, Stderr: &stderr, Dir: dir, Getenv: getenv}, args)
	return code, stdout.String(), stderr.String()
}

// wantUsageError checks what bad input must give: exit 2, nothing on
// stdout, and one line on stderr.
func wantUsageError(t *testing.T, name string, code int, stdout, stderr string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != ExitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], "cephbench: ") || stdout != "" {
		t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one error line", name, code, stdout, stderr)
	}
}

func TestBadInputIsOneLineAndExit2(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]string{
		"wrong size":       {"bench", "--target", dir + "/f", "--bs", "4q"},
		"unknown flag":     {"bench", "--target", "null://", "--no-such-flag"},
		"unknown command":  {"frobnicate"},
		"bad rw":           {"bench", "--target", "null://", "--rw", "sideways"},
		"bad duration":     {"run", "--target", dir + "/d", "--duration", "ten"},
		"no target":        {"bench"},
		"unknown scheme":   {"bench", "--target", "nfs://server/x"},
		"missing parent":   {"bench", "--target", dir + "/no/such/dir/f", "--size", "1M", "--rw", "write"},
		"zero workers":     {"bench", "--target", "null://", "--workers", "0"},
		"bad format":       {"bench", "--target", "null://", "--format", "xml"},
		"direct unaligned": {"bench", "--target", dir + "/f", "--size", "1M", "--bs", "1000", "--direct"},
	}
	for name, args := range cases {
		code, stdout, stderr := cephbench(t, context.Background(), append(args, "--results", dir+"/results")...)
		wantUsageError(t, name, code, stdout, stderr)
		if strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
			t.Errorf("%s: stack trace in %q", name, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad input left files behind: %v", entries)
	}
}

func TestBenchJSONIsTheResultAlone(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := cephbench(t, context.Background(),
		"bench", "--target", "null://", "--rw", "randrw", "--rwmixread", "70", "--ops", "20000",
		"--iodepth", "8", "--format", "json", "--output", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r result.Result
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("stdout is not one JSON result: %v\n%s", err, stdout)
	}
	reads, writes := r.Ops["read"].Ops, r.Ops["write"].Ops
	if reads+writes != 20000 || reads < 13000 || reads > 15000 {
		t.Errorf("%d reads + %d writes; want 20000 ops, 70%% reads", reads, writes)
	}
	if r.Schema != result.Schema || r.Host.CPUs == 0 || r.Histograms["read"] == "" || len(r.Ops["read"].Latency.Percentiles) != 17 {
		t.Errorf("result lacks schema, host, histograms or percentiles: %+v", r)
	}
	saved, err := result.Load(out)
	if err != nil || saved.Ops["read"].Ops != reads {
		t.Errorf("saved result %v, %v", saved, err)
	}
}

func TestRunBuiltInPlan(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "cephbench-data")
	runs := runPlanOn(t, data, 5)
	for i, want := range []string{"objects-write-4M", "objects-seq-read-4M", "objects-rand-read-4M", "file-randwrite-4K", "file-randread-4K"} {
		if runs[i].Name != want {
			t.Errorf("step %d is %s; want %s", i+1, runs[i].Name, want)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(data)
		t.Errorf("the data directory the plan created is still there: %v", entries)
	}
}

// runPlanOn runs the built-in plan on target, 1 s a step, and returns the
// results of its steps, each checked for ops and no errors.
func runPlanOn(t *testing.T, target string, steps int) []*result.Result {
	t.Helper()
	results := t.TempDir()
	code, out, errOut := cephbench(t, context.Background(), "run", "--target", target, "--duration", "1s", "--results", results)
	if code != 0 {
		t.Fatalf("run --target %s: exit %d\n%s\n%s", target, code, out, errOut)
	}
	for _, want := range []string{"STEP", "IOPS", "P99", "avg MB/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("run --target %s: the output lacks %q:\n%s", target, want, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(results, "*-quick", "*", "*.json"))
	if len(files) != steps {
		t.Fatalf("run --target %s: %d results, want %d\n%s", target, len(files), steps, out)
	}
	return loadMeasured(t, files)
}

// loadMeasured loads result files, each checked for ops and no errors.
func loadMeasured(t *testing.T, files []string) []*result.Result {
	t.Helper()
	var all []*result.Result
	for _, f := range files {
		r, err := result.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		var ops, errs int64
		for _, s := range r.Ops {
			ops += s.Ops
			errs += s.Errors
		}
		if ops == 0 || errs != 0 {
			t.Errorf("%s: %d ops, %d errors", filepath.Base(f), ops, errs)
		}
		all = append(all, r)
	}
	return all
}

func TestRunKeepsForeignFiles(t *testing.T) {
	data := t.TempDir()
	foreign := filepath.Join(data, "precious.txt")
	if err := os.WriteFile(foreign, []byte("not cephbench's"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cephbench(t, context.Background(), "run", "--target", data, "--duration", "1s", "--quiet",
		"--results", filepath.Join(t.TempDir(), "results"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(data)
	if len(entries) != 1 || entries[0].Name() != "precious.txt" {
		t.Errorf("after the run the directory holds %v; want only the user's file", entries)
	}
}

func TestRunInterruptedSavesAndCleansUp(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	results := filepath.Join(dir, "results")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	code, stdout, _ := cephbench(t, ctx, "run", "--target", data, "--duration", "1h", "--results", results)
	if code != ExitInterrupted {
		t.Fatalf("exit %d; want %d", code, ExitInterrupted)
	}
	// Steps before the interrupted one may have finished (the object write
	// stops at its object limit); the last saved result is the interrupted
	// step's, with what it measured.
	files, _ := filepath.Glob(filepath.Join(results, "*-quick", "*", "*.json"))
	if len(files) == 0 || len(files) == 5 {
		t.Fatalf("%d results saved; want those up to the interrupted step", len(files))
	}
	for i, f := range files {
		r, err := result.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		last := i == len(files)-1
		var ops int64
		for _, s := range r.Ops {
			ops += s.Ops
		}
		if r.Interrupted != last || ops == 0 {
			t.Errorf("%s: interrupted %v with %d ops", f, r.Interrupted, ops)
		}
		if last && !strings.Contains(stdout, r.Name+"*") {
			t.Errorf("the table does not mark the interrupted step %s:\n%s", r.Name, stdout)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("data directory left after Ctrl-C: %v", err)
	}
}

// TestHelpStatesEachDefaultOnce walks every command's help: a flag's
// default is shown once, and a zero that means "not set" is not shown as
// a default.
func TestHelpStatesEachDefaultOnce(t *testing.T) {
	var walk func(path []string, cmd *cobra.Command)
	walk = func(path []string, cmd *cobra.Command) {
		if strings.HasSuffix(cmd.Short, "(this build has no Ceph support)") {
			return // it has no flags to show: it says how to get them
		}
		code, stdout, stderr := cephbench(t, context.Background(), append(path, "--help")...)
		if code != ExitOK {
			t.Fatalf("%v --help: exit %d: %s", path, code, stderr)
		}
		for _, line := range strings.Split(stdout, "\n") {
			if strings.Count(line, "(default") > 1 || strings.Contains(line, "(default 0s)") {
				t.Errorf("cephbench %s --help: %q", strings.Join(path, " "), strings.TrimSpace(line))
			}
		}
		for _, sub := range cmd.Commands() {
			if !sub.Hidden && sub.Name() != "help" && sub.Name() != "completion" {
				walk(append(path[:len(path):len(path)], sub.Name()), sub)
			}
		}
	}
	walk(nil, newRoot(Env{Stdout: io.Discard, Stderr: io.Discard}))
}

// The quick plan picks its steps by what a target's engine says the target
// is: file:// is the local directory a bare path is, and a target of no
// kind is refused with the kinds there are.
func TestQuickPlanStepsAreChosenByTheEngine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	code, stdout, stderr := cephbench(t, context.Background(), "run", "--target", "file://"+dir, "--duration", "1s", "--dry-run")
	if code != 0 {
		t.Fatalf("dry run of the quick plan on file://%s: exit %d: %s", dir, code, stderr)
	}
	for _, want := range []string{"objects-write-4M", "--target dirobj://" + dir, "file-randread-4K", "--target " + dir + " "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the quick plan on file://%s lacks %q:\n%s", dir, want, stdout)
		}
	}
	code, stdout, stderr = cephbench(t, context.Background(), "run", "--target", "null://", "--duration", "1s")
	wantUsageError(t, "quick plan on null://", code, stdout, stderr)
	for _, want := range []string{"runs on a local directory", "s3://BUCKET[/PREFIX]", "not on null://"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("refusing the quick plan on null://: %q lacks %q", stderr, want)
		}
	}
}

// A step samples the disks under its target when the target's engine
// declares local disks (file does, dirobj does not).
func TestBenchWatchesTheDisksTheEngineDeclares(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "cbdisks") // a real disk
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if devices, err := diskstats.DevicesOf(dir); err != nil || len(devices) == 0 {
		t.Skipf("no block device under %s (%v)", dir, err)
	}
	for _, tc := range []struct {
		args  []string
		disks bool
	}{
		{[]string{"--target", filepath.Join(dir, "f"), "--size", "4M", "--rw", "randwrite", "--ops", "2000"}, true},
		{[]string{"--target", "dirobj://" + filepath.Join(dir, "objs"), "--rw", "write", "--bs", "64k", "--objects", "4", "--ops", "64"}, false},
	} {
		args := append([]string{"bench", "--format", "json", "--results", filepath.Join(dir, "results")}, tc.args...)
		code, stdout, stderr := cephbench(t, context.Background(), args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		var r result.Result
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := len(r.Disks) > 0; got != tc.disks {
			t.Errorf("bench %s: disks %+v; want them sampled: %v", r.Spec.Target, r.Disks, tc.disks)
		}
	}
}

// watchedOutput is a writer that the CLI writes from one goroutine while
// the test waits for a line from another.
type watchedOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func watchFor(line string) *watchedOutput {
	return &watchedOutput{want: line, seen: make(chan struct{})}
}

func (w *watchedOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.want != "" && strings.Contains(w.buf.String(), w.want) {
		w.want = ""
		close(w.seen)
	}
	return n, err
}

func (w *watchedOutput) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// A flag of a run on other hosts, given without the hosts, would do
// nothing: it is refused in one line naming it, before any I/O.
func TestHostFlagsWithoutHostsAreRefused(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--target", "null://", "--duration", "1s", "--per-host"},
		{"bench", "--target", "null://", "--duration", "1s", "--on-host-failure", "continue"},
		{"bench", "--target", "null://", "--duration", "1s", "--push-binary"},
		{"fio", "--name=x", "--ioengine=null", "--size=1M", "--ssh-config", "cfg"},
	} {
		results := t.TempDir()
		code, stdout, stderr := cephbenchIn(t, context.Background(), results, nil, args...)
		flag := args[len(args)-1]
		if !strings.HasPrefix(flag, "--") {
			flag = args[len(args)-2]
		}
		if code != ExitUsage || !strings.Contains(stderr, flag+" is for a run on other hosts") || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", args, code, stdout, stderr, flag)
		}
		if entries, _ := os.ReadDir(results); len(entries) != 0 {
			t.Errorf("%v: wrote %v", args, entries)
		}
	}
}

// --cluster-interval is refused below what the monitors should be asked
// at, before any I/O, on the commands that take it; 0 turns the watch off.
func TestClusterIntervalIsCheckedBeforeAnyIO(t *testing.T) {
	results := t.TempDir()
	for _, args := range [][]string{
		{"bench", "--target", "null://", "--duration", "1s", "--cluster-interval", "10ms"},
		{"fio", "--name=x", "--ioengine=null", "--size=1M", "--cluster-interval", "10ms"},
		{"bench", "--target", "null://", "--duration", "1s", "--cluster-interval", "-1s"},
	} {
		code, stdout, stderr := cephbench(t, context.Background(), append(args, "--results", results)...)
		wantUsageError(t, strings.Join(args, " "), code, stdout, stderr)
		if !strings.Contains(stderr, "--cluster-interval") {
			t.Errorf("%s: %q does not name --cluster-interval", strings.Join(args, " "), stderr)
		}
	}
	code, stdout, stderr := cephbench(t, context.Background(), "bench", "--target", "null://", "--ops", "100", "--cluster-interval", "0", "--results", results)
	if code != 0 || strings.Contains(stdout, "cluster") {
		t.Errorf("exit %d, %s\n%s", code, stdout, stderr)
	}
}

// --quiesce is taken by the commands that take --cluster-interval; on a
// target not on a Ceph cluster it has nothing to quiesce, and says
// nothing.
func TestQuiesceIsTakenBesideClusterInterval(t *testing.T) {
	results := t.TempDir()
	for _, args := range [][]string{
		{"bench", "--target", "null://", "--ops", "100", "--quiesce"},
		{"fio", "--name=x", "--ioengine=null", "--size=1M", "--quiesce"},
	} {
		code, stdout, stderr := cephbench(t, context.Background(), append(args, "--results", results)...)
		if code != 0 || strings.Contains(stdout+stderr, "quiesce") {
			t.Errorf("%s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
}
