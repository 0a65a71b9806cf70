package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// record is a write record as the file holds it; zero fields are left
// out, as cephbench before 2026-12 wrote none of them.
type record struct {
	Host    string    `json:"host,omitempty"`
	PID     int       `json:"pid,omitempty"`
	Started time.Time `json:"started,omitzero"`
}

// forge puts in dir a write record of r's process with three of its
// objects, and returns their names, the record's first.
func forge(t *testing.T, dir string, r record) []string {
	t.Helper()
	stem := "benchmark_data_" + r.Host + "_" + strconv.Itoa(r.PID) + "_object"
	b, err := json.Marshal(struct {
		Stem string `json:"stem"`
		record
	}{stem, r})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"cephbench_writing_" + stem}
	if err := os.WriteFile(filepath.Join(dir, names[0]), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		name := stem + strconv.Itoa(i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// present returns which of names are in dir.
func present(t *testing.T, dir string, names []string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// A child process of this test, running until the test ends.
func sleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// A record of another host's run cannot be checked from here: cephbench
// cleanup leaves it and its objects and names the run, unless --force, or
// --older-than an age the record has reached. A record of this host is
// judged by its process: left while the process runs, cleaned once it is
// dead or its PID is another process's (begun after the record).
func TestCleanupJudgesWriteRecords(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: this host cannot tell a live run")
	}
	host, _ := os.Hostname()
	ctx := context.Background()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := sleeper(t)
	type want struct {
		removed bool
		line    string // in the output, "" for none
	}
	cases := []struct {
		name string
		rec  record
		age  time.Duration // of the record's file
		args []string
		want want
	}{
		{"other host", record{Host: "otherhost", PID: 4242, Started: time.Now()}, 0, nil,
			want{false, "skipped: run 4242 on otherhost, another host, may still be running"}},
		{"other host, --force", record{Host: "otherhost", PID: 4242, Started: time.Now()}, 0, []string{"--force"},
			want{true, ""}},
		{"other host, younger than --older-than", record{Host: "otherhost", PID: 4242}, 30 * time.Minute, []string{"--older-than", "1h"},
			want{false, "skipped: run 4242 on otherhost"}},
		{"other host, older than --older-than", record{Host: "otherhost", PID: 4242}, 2 * time.Hour, []string{"--older-than", "1h"},
			want{true, ""}},
		{"no process recorded", record{}, 0, nil,
			want{false, "names no process"}},
		{"no process recorded, --force", record{}, 0, []string{"--force"},
			want{true, ""}},
		{"live run here", record{Host: host, PID: live, Started: time.Now()}, 0, nil,
			want{false, "skipped: run " + strconv.Itoa(live) + " on " + host + " is still running"}},
		{"live run here, --force", record{Host: host, PID: live, Started: time.Now()}, 0, []string{"--force"},
			want{false, "skipped: run " + strconv.Itoa(live) + " on " + host + " is still running"}},
		{"dead run here", record{Host: host, PID: dead.Process.Pid, Started: time.Now()}, 0, nil,
			want{true, ""}},
		{"PID reused here", record{Host: host, PID: live, Started: time.Now().Add(-time.Hour)}, 0, nil,
			want{true, ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			names := forge(t, dir, c.rec)
			if c.age > 0 {
				then := time.Now().Add(-c.age)
				if err := os.Chtimes(filepath.Join(dir, names[0]), then, then); err != nil {
					t.Fatal(err)
				}
			}
			foreign := filepath.Join(dir, "benchmark_data_otherhost_7_object0")
			if err := os.WriteFile(foreign, []byte("another run's, unrecorded"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := cephbench(t, ctx, append([]string{"cleanup", "dirobj://" + dir}, c.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			left := present(t, dir, names)
			switch {
			case c.want.removed && len(left) > 0:
				t.Errorf("cleanup left %v; want the record and its objects gone\n%s", left, stdout)
			case !c.want.removed && !slices.Equal(left, names):
				t.Errorf("cleanup left only %v of %v; want the record and its objects kept\n%s", left, names, stdout)
			}
			if _, err := os.Stat(foreign); err != nil {
				t.Errorf("cleanup removed an object no record names: %v", err)
			}
			skipped := strings.Count(stdout, "skipped: ")
			if c.want.line != "" && (skipped != 1 || !strings.Contains(stdout, c.want.line)) {
				t.Errorf("output %q; want one line with %q", stdout, c.want.line)
			}
			if c.want.line == "" && skipped != 0 {
				t.Errorf("output %q names a skipped run", stdout)
			}
		})
	}
}

// Bad values for cleanup's flags are refused before anything is removed,
// by each form of the command.
func TestCleanupFlagsAreCheckedBeforeAnyIO(t *testing.T) {
	dir := t.TempDir()
	names := forge(t, dir, record{Host: "otherhost", PID: 1})
	for _, form := range [][]string{
		{"cleanup", "dirobj://" + dir},
		{"rados", "-p", "no-such-pool", "cleanup"},
		{"s3", "cleanup", "s3://no-such-bucket"},
	} {
		for name, bad := range map[string][]string{
			"negative":     {"--older-than", "-1h"},
			"zero":         {"--older-than", "0"},
			"not a time":   {"--older-than", "yesterday"},
			"with --force": {"--force", "--older-than", "1h"},
		} {
			code, stdout, stderr := cephbench(t, context.Background(), append(form, bad...)...)
			wantUsageError(t, form[0]+" "+name, code, stdout, stderr)
		}
	}
	if left := present(t, dir, names); !slices.Equal(left, names) {
		t.Errorf("bad flags removed %v", names[len(left):])
	}
}
