// Package fuzztest holds what the fuzz targets check of every parser of
// input a user, a crash or another host could have mangled: an error is
// one line that says something, and inputs that are files are written to
// a test's temporary directory.
package fuzztest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OneLine fails t unless err is nil or a non-blank message of one line:
// what a user sees after "cephbench: " when the input is refused.
func OneLine(t *testing.T, input any, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if strings.TrimSpace(msg) == "" || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("input %q: the error is not one line naming the problem: %q", input, msg)
	}
}

// Refused reports whether err refuses input, failing t unless it is nil
// or a one-line error that isUsage (engine.IsUsage, which fuzztest cannot
// import: the engine's own imports are fuzzed) takes for bad input found
// before any I/O, which cephbench exits 2 for.
func Refused(t *testing.T, input any, err error, isUsage func(error) bool) bool {
	t.Helper()
	OneLine(t, input, err)
	if err != nil && !isUsage(err) {
		t.Fatalf("input %q: %v is not a usage error", input, err)
	}
	return err != nil
}

// WriteFile writes b to a file named name in a new temporary directory of
// t and returns its path.
func WriteFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	return filepath.Join(Dir(t, map[string][]byte{name: b}), name)
}

// Dir writes files (name to content) into a new temporary directory of t
// and returns it.
func Dir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
