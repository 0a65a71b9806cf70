package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/fuzztest"
	"github.com/cephbench/cephbench/plan"
)

// FuzzParseJob: a command line (bench, fio, rados bench, rados load-gen,
// rbd bench, s3 bench, disk, net client, or any other), split as a plan
// splits its run: lines, parses into the job it asks for, without running
// anything, or a one-line error; a job comes back unchanged from JSON, as
// it travels to other hosts. Seeds: the README's command lines and the
// field reports' (the peer tools' outputs' README).
func FuzzParseJob(f *testing.F) {
	for _, name := range []string{"../../README.md", "/work/shared/reference/outputs/README.md"} {
		b, _ := os.ReadFile(name)
		for line := range strings.Lines(string(b)) {
			for _, part := range strings.Split(line, "`") {
				cmd, _, _ := strings.Cut(part, "  #")
				if rest, ok := strings.CutPrefix(strings.TrimSpace(cmd), "cephbench "); ok {
					f.Add(rest)
				} else if strings.HasPrefix(cmd, "rados ") || strings.HasPrefix(cmd, "rbd ") || strings.HasPrefix(cmd, "fio ") {
					f.Add(strings.TrimSpace(cmd))
				}
			}
		}
	}
	f.Add("s3 bench --target s3://bench/run1?endpoint=http://127.0.0.1:7480 --duration 10s --mix put=20,get=70,stat=5,delete=5")
	f.Add("bench --target null:// --ops 1000 --rw randrw --rwmixread 70 --bsrange 4k-64k --pace 1000")
	f.Fuzz(func(t *testing.T, line string) {
		// A plan's lines are YAML, which is UTF-8 (a target that is not
		// is refused; a name that is not would only print oddly).
		args, err := plan.SplitArgs(line)
		if err != nil || !utf8.ValidString(line) || readsADevice(args) {
			return
		}
		dir := t.TempDir()
		env := Env{Dir: dir, Getenv: func(string) string { return "" }}
		j, err := ParseJob(env, args, filepath.Join(dir, "results"))
		fuzztest.OneLine(t, line, err)
		if err != nil {
			return
		}
		b, err := json.Marshal(j)
		if err != nil {
			t.Fatalf("%s: the job does not go into JSON: %v", line, err)
		}
		var back frontend.Job
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, j) {
			t.Fatalf("%s: the job does not come back from JSON (%v):\n%s", line, err, b)
		}
	})
}

// readsADevice says whether args name a file outside the test's folder
// that a parser could read for ever (/dev/zero as a job file, say).
func readsADevice(args []string) bool {
	for _, a := range args {
		if strings.Contains(a, "/dev") || strings.Contains(a, "/proc") || strings.Contains(a, "/sys") || strings.Contains(a, "..") {
			return true
		}
	}
	return false
}
