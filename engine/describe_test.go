package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// opened counts the Opens that reached the test engines: a refused
// workload must not.
var opened int

func init() {
	open := engine.Func(func(context.Context, *spec.Workload) (engine.Session, error) {
		opened++
		return nil, engine.Usagef("test engine: nothing to open")
	})
	engine.Register("plain", open, engine.Description{Syntax: "plain://"})
	engine.Register("files", open, engine.Description{Syntax: "files://DIR", LocalPath: true, IOEngines: []string{"psync", "libaio", "io_uring"}, FilePrefix: true})
}

func TestOpenChecksWhatTheEngineDeclares(t *testing.T) {
	for _, tc := range []struct {
		scheme, ioengine, prefix string
		want                     string // "" when the engine's Open is reached
	}{
		{"plain", "libaio", "", "I/O engine libaio drives files and block devices, not plain:// targets"},
		{"plain", "", "job", "a file prefix names files in a directory, not in plain:// targets"},
		{"files", "spdk", "", `invalid I/O engine "spdk" (want psync, libaio or io_uring)`},
		{"files", "io_uring", "job", ""},
		{"plain", "", "", ""},
		{"nosuch", "", "", `unknown target scheme "nosuch" (known: [`},
	} {
		w := &spec.Workload{Target: spec.Target{Scheme: tc.scheme}, IOEngine: tc.ioengine, FilePrefix: tc.prefix}
		before := opened
		_, err := engine.Open(context.Background(), w)
		if !engine.IsUsage(err) {
			t.Errorf("%s:// with I/O engine %q, prefix %q: %v, not a usage error", tc.scheme, tc.ioengine, tc.prefix, err)
			continue
		}
		reached := opened > before
		switch {
		case tc.want == "" && !reached:
			t.Errorf("%s:// with I/O engine %q, prefix %q was refused before the engine's Open: %v", tc.scheme, tc.ioengine, tc.prefix, err)
		case tc.want != "" && reached:
			t.Errorf("%s:// with I/O engine %q, prefix %q reached the engine's Open; want it refused with %q", tc.scheme, tc.ioengine, tc.prefix, tc.want)
		case tc.want != "" && !strings.HasPrefix(err.Error(), tc.want):
			t.Errorf("%s:// with I/O engine %q, prefix %q: %q; want %q", tc.scheme, tc.ioengine, tc.prefix, err, tc.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	d, err := engine.Describe("files")
	if err != nil || d.Syntax != "files://DIR" || !d.FilePrefix {
		t.Errorf("Describe(files) = %+v, %v; want what the engine registered", d, err)
	}
	if _, err := engine.Describe("nosuch"); !engine.IsUsage(err) {
		t.Errorf("Describe of an unknown scheme: %v; want a usage error", err)
	}
}

func TestCleanKeptWithoutCleaner(t *testing.T) {
	if err := engine.CleanKept(context.Background(), spec.Target{Scheme: "plain"}, nil); err != nil {
		t.Errorf("CleanKept on a scheme that keeps nothing: %v", err)
	}
}

// A relative local path is taken from the directory of whoever named it;
// other locations are not paths here and stay as given.
func TestInDirResolvesOnlyLocalPaths(t *testing.T) {
	for _, tc := range []struct {
		target spec.Target
		dir    string
		want   string
	}{
		{spec.Target{Scheme: "files", Location: "data"}, "/work/x", "/work/x/data"},
		{spec.Target{Scheme: "files", Location: "/abs"}, "/work/x", "/abs"},
		{spec.Target{Scheme: "files", Location: "data"}, "", "data"},
		{spec.Target{Scheme: "plain", Location: "pool/img"}, "/work/x", "pool/img"},
		{spec.Target{Scheme: "nosuch", Location: "data"}, "/work/x", "data"},
	} {
		if got := engine.InDir(tc.target, tc.dir); got.Location != tc.want || got.Scheme != tc.target.Scheme {
			t.Errorf("InDir(%v, %q) = %v; want location %q", tc.target, tc.dir, got, tc.want)
		}
	}
}

// A directory target's host gets a directory under it, its query kept.
func TestInSubdirectoryKeepsTheQuery(t *testing.T) {
	for _, tc := range []struct{ loc, want string }{
		{"/data", "/data/h1"},
		{"/data/", "/data/h1"},
		{"fs/dir?conf=/etc/c.conf", "fs/dir/h1?conf=/etc/c.conf"},
		{"bucket/prefix/?endpoint=http://x", "bucket/prefix/h1?endpoint=http://x"},
	} {
		if got := engine.InSubdirectory(tc.loc, "h1"); got != tc.want {
			t.Errorf("InSubdirectory(%q) = %q; want %q", tc.loc, got, tc.want)
		}
	}
}
