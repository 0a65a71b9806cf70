// Package enginetest is the conformance suite every engine passes: the same
// checks, against the real target, for every scheme.
package enginetest

import (
	"testing"

	"github.com/cephbench/cephbench/spec"
)

// Config describes the engine under test.
type Config struct {
	// Target is where the suite may create data; each subtest gets a
	// fresh one from NewTarget.
	NewTarget func(t *testing.T) spec.Target
	// Persistent is true when data written reads back (false for null).
	Persistent bool
	// Leftovers lists what exists at target (file names, object names),
	// so the suite can check that Close removes what the session created
	// and nothing else.
	Leftovers func(t *testing.T, target spec.Target) []string
	// Plant creates one foreign item (a file or object the engine did not
	// create) at target, returning its name, so the suite can check that
	// Close leaves it. Nil skips that check.
	Plant func(t *testing.T, target spec.Target) string
}

// Run runs the suite.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	// Filled in by the conformance suite's author.
	_ = cfg
}
