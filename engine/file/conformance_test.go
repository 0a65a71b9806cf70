package file_test

import (
	"path/filepath"
	"testing"

	"github.com/cephbench/cephbench/engine/enginetest"
	"github.com/cephbench/cephbench/spec"
)

// TestConformance runs the engine suite against a directory target, where
// every worker gets its own file.
func TestConformance(t *testing.T) {
	enginetest.Run(t, enginetest.Config{
		NewTarget: func(t *testing.T) spec.Target {
			return spec.Target{Scheme: "file", Location: t.TempDir()}
		},
		Persistent: true,
		Leftovers: func(t *testing.T, target spec.Target) []string {
			return names(t, target.Location)
		},
		Plant: func(t *testing.T, target spec.Target) string {
			const name = "planted.dat"
			foreign(t, filepath.Join(target.Location, name), 4096)
			return name
		},
		// A path below a regular file cannot be created.
		BadTarget: func(t *testing.T) spec.Target {
			regular := filepath.Join(t.TempDir(), "regular")
			foreign(t, regular, 4096)
			return spec.Target{Scheme: "file", Location: filepath.Join(regular, "f")}
		},
	})
}
