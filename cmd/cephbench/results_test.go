package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/io/devsafe/devsafetest"
	"github.com/cephbench/cephbench/result"
)

// savedTo is the path a run's output says its result was saved to.
var savedTo = regexp.MustCompile(`result saved to (\S+)`)

// untilNextSecond sleeps until just after the wall clock's next second,
// so that what starts next starts within one second's stamp.
func untilNextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 20*time.Millisecond).Sub(now))
}

// Runs started at once in one results folder, as scripts on many client
// hosts sharing one folder start them, each keep their own result: none
// takes another's name, each says where it went, and each loads.
func TestTwentyRunsAtOnceSaveTwentyResults(t *testing.T) {
	dir, bin := build(t)
	results := filepath.Join(dir, "results")
	runsAtOnce(t, bin, []string{results}, 20)
}

// runsAtOnce starts n saving runs at once, in turn with each of folders
// (one folder seen through different mounts, or one), and checks that the
// folder holds n results, each one a run said it saved, each whole.
func runsAtOnce(t *testing.T, bin string, folders []string, n int) {
	t.Helper()
	outs := make([]string, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	untilNextSecond()
	for i := range n {
		wg.Go(func() {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, "bench", "--target", "null://", "--ops", "20000", "--quiet", "--results", folders[i%len(folders)])
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); ok {
				codes[i] = ee.ExitCode()
			} else if err != nil {
				codes[i] = -1
			}
			outs[i] = stdout.String() + stderr.String()
		})
	}
	wg.Wait()
	var said []string
	for i, out := range outs {
		m := savedTo.FindStringSubmatch(out)
		if codes[i] != 0 || m == nil {
			t.Fatalf("run %d: exit %d\n%s", i, codes[i], out)
		}
		// As the first folder names it, whichever mount the run saw.
		said = append(said, filepath.Join(folders[0], filepath.Base(m[1])))
	}
	slices.Sort(said)
	if len(slices.Compact(slices.Clone(said))) != n {
		t.Fatalf("%d runs said they saved to %d distinct files:\n%s", n, len(slices.Compact(said)), strings.Join(said, "\n"))
	}
	files, _ := filepath.Glob(filepath.Join(folders[0], "*.json"))
	slices.Sort(files)
	if !slices.Equal(files, said) {
		t.Fatalf("the folder holds\n%s\nthe runs said\n%s", strings.Join(files, "\n"), strings.Join(said, "\n"))
	}
	for _, f := range files {
		r, err := result.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if r.Unfinished || r.Ops["read"].Ops+r.Ops["write"].Ops != 20000 || len(r.Series) == 0 {
			t.Errorf("%s: unfinished %v, %d ops, %d seconds; want a finished run of 20000 ops", f, r.Unfinished, r.Ops["read"].Ops+r.Ops["write"].Ops, len(r.Series))
		}
	}
	// Started within a second or two, most share a stamp: the names that
	// met another's took a suffix.
	suffixed := regexp.MustCompile(`-bench-\d+\.json$`)
	if !slices.ContainsFunc(files, suffixed.MatchString) {
		t.Errorf("no run met another's name: the test did not start them at once\n%s", strings.Join(files, "\n"))
	}
}

// Two plans started in the same second each make their own results
// folder, and both finish.
func TestTwoPlansStartedInOneSecondBothFinish(t *testing.T) {
	dir, bin := build(t)
	planFile := filepath.Join(dir, "plan.yaml")
	plan := "name: twice\nsteps:\n  - name: w\n    run: bench --target null:// --rw write --bs 4k --ops 5000 --quiet\n"
	if err := os.WriteFile(planFile, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]error, 2)
	untilNextSecond()
	for i := range outs {
		wg.Go(func() {
			b, err := exec.Command(bin, "run", planFile, "--results", results).CombinedOutput()
			outs[i], errs[i] = string(b), err
		})
	}
	wg.Wait()
	for i := range outs {
		if errs[i] != nil {
			t.Fatalf("plan %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	folders, _ := filepath.Glob(filepath.Join(results, "*-twice*"))
	if len(folders) != 2 {
		t.Fatalf("results folders %v; want one per plan", folders)
	}
	for _, f := range folders {
		m, err := result.LoadManifest(f)
		if err != nil {
			t.Fatal(err)
		}
		saved, _ := filepath.Glob(filepath.Join(f, "*", "*.json"))
		if m.Status != result.StepDone || len(saved) != 1 {
			t.Errorf("%s: status %s, results %v; want done with one result", f, m.Status, saved)
		}
	}
	if strings.TrimSuffix(folders[1], "-2") != folders[0] {
		t.Errorf("folders %v: the plans did not meet in one second's name", folders)
	}
}

// A results folder on a full disk is refused before any I/O, in one line
// naming it, with exit 2.
func TestAFullResultsDiskIsRefusedBeforeAnyIO(t *testing.T) {
	dir, bin := build(t)
	disk := devsafetest.Filesystem(t, 8<<20)
	fill(t, disk)
	data := filepath.Join(dir, "data")
	cmd := exec.Command(bin, "bench", "--target", data, "--rw", "write", "--size", "1M", "--duration", "2s", "--results", filepath.Join(disk, "results"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := exitCode(t, cmd.Run())
	msg := stderr.String()
	if code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "cannot save results in "+filepath.Join(disk, "results")) || !strings.Contains(msg, "free") {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line naming the folder and its room", code, msg)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the target was touched before the refusal: %v", err)
	}
}

// fill writes a file into the filesystem at dir until it is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(dir, "filler"), "bs=64k").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "No space left") {
		t.Fatalf("filling %s: %v %s", dir, err, out)
	}
}

// A results disk that fills during the run loses nothing: the summary is
// printed, the result goes whole (every second) to the fallback folder
// that the error names, and nothing of it is left on the full disk.
func TestAResultsDiskThatFillsMidRunSavesToTheFallback(t *testing.T) {
	dir, bin := build(t)
	disk := devsafetest.Filesystem(t, 8<<20)
	state := filepath.Join(dir, "state")
	results := filepath.Join(disk, "results")
	cmd := exec.Command(bin, "bench", "--target", "null://", "--rw", "randread", "--duration", "4s", "--results", results)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the run has claimed its result's place, the disk fills.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if logs, _ := filepath.Glob(filepath.Join(results, "*.hlog")); len(logs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no tick log after 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	fill(t, disk)
	code := exitCode(t, cmd.Wait())
	m := savedTo.FindStringSubmatch(stdout.String())
	fallback := filepath.Join(state, "cephbench", "unsaved")
	if code != 1 || m == nil || !strings.HasPrefix(m[1], fallback) || !strings.Contains(stderr.String(), "no space left on device") ||
		!strings.Contains(stderr.String(), "saved to "+m[1]+" instead") || !strings.Contains(stdout.String(), "IOPS") {
		t.Fatalf("exit %d; want 1, the summary, and the fallback named\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	r, err := result.Load(m[1])
	if err != nil {
		t.Fatal(err)
	}
	var ops int64
	for _, s := range r.Series {
		ops += s.Kinds["read"].Ops
	}
	if len(r.Series) < 4 || r.Unfinished || ops != r.Ops["read"].Ops {
		t.Errorf("the fallback result: %d seconds holding %d ops, of %d; unfinished %v", len(r.Series), ops, r.Ops["read"].Ops, r.Unfinished)
	}
	if left, _ := os.ReadDir(results); len(left) != 0 {
		t.Errorf("left on the full disk: %v", left)
	}
}
