package enginetest_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// blankImport begins the line of cmd/cephbench that links an engine in.
const blankImport = "\t_ \"github.com/cephbench/cephbench/engine/"

// TestANewEngineIsItsFolderAndOneBlankImport follows the README's "Adding
// an engine" for the toy engine in testdata: the module with the toy's
// folder added and one blank import line in cmd/cephbench (a go build
// overlay, so the tree stays as it is) passes the conformance suite, and
// the binary built from it runs a workload on toy:// targets.
func TestANewEngineIsItsFolderAndOneBlankImport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cephbench")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build with")
	}
	goMod, err := exec.Command(goTool, "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(strings.TrimSpace(string(goMod)))
	tmp := t.TempDir()

	mainGo := filepath.Join(root, "cmd", "cephbench", "main.go")
	src, err := os.ReadFile(mainGo)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(l, blankImport) {
			last = i
		}
	}
	if last < 0 {
		t.Fatalf("%s has no blank import of an engine: the README's path to a new engine no longer holds", mainGo)
	}
	lines = append(lines[:last+1], append([]string{blankImport + "toy\"\n"}, lines[last+1:]...)...)
	withToy := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(withToy, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	replace := map[string]string{mainGo: withToy}
	for _, name := range []string{"toy.go", "toy_test.go"} {
		abs, err := filepath.Abs(filepath.Join("testdata", "toy", name))
		if err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(root, "engine", "toy", name)] = abs
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}

	// run returns what the command wrote to stdout.
	run := func(dir, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out, stderr.String())
		}
		return string(out)
	}
	// The toy's folder exists only in the overlay, where go vet and the
	// test binary cannot change directory: vet is off, and the suite runs
	// here.
	suite := filepath.Join(tmp, "toy.test")
	run(root, goTool, "test", "-c", "-vet=off", "-overlay", overlayFile, "-o", suite, "./engine/toy")
	run(tmp, suite, "-test.run", "TestConformance")
	bin := filepath.Join(tmp, "cephbench")
	run(root, goTool, "build", "-overlay", overlayFile, "-o", bin, "./cmd/cephbench")
	out := run(tmp, bin, "bench", "--target", "toy://demo", "--rw", "randrw", "--ops", "1000", "--format", "json")
	var res struct {
		Spec struct {
			Target struct{ Scheme string }
		}
		Ops map[string]struct{ Ops int64 }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("cephbench bench on toy://: not a JSON result: %v\n%s", err, out)
	}
	if res.Spec.Target.Scheme != "toy" || res.Ops["read"].Ops+res.Ops["write"].Ops != 1000 {
		t.Errorf("cephbench bench on toy://demo: %+v; want 1000 ops on the toy target", res)
	}
}
