package file_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/enginetest"
	"github.com/cephbench/cephbench/internal/io/kaio"
	"github.com/cephbench/cephbench/spec"
)

// The suite builds its own workloads; a scheme of this test's, "file+" and
// the mechanism, opens the file engine with the workload's IOEngine set.
func init() {
	desc, err := engine.Describe("file")
	if err != nil {
		panic(err)
	}
	for _, mech := range []string{kaio.LibAIO, kaio.IOURing} {
		engine.Register("file+"+mech, engine.Func(func(ctx context.Context, w *spec.Workload) (engine.Session, error) {
			fw := *w
			fw.Target.Scheme, fw.IOEngine = "file", mech
			return engine.Open(ctx, &fw)
		}), desc)
	}
}

// TestConformance runs the engine suite against a directory target, where
// every worker gets its own file.
func TestConformance(t *testing.T) { enginetest.Run(t, conformance("file")) }

// TestConformanceLibAIO runs the suite with queues on Linux AIO.
func TestConformanceLibAIO(t *testing.T) { enginetest.Run(t, conformance("file+"+kaio.LibAIO)) }

// TestConformanceIOURing runs the suite with queues on io_uring.
func TestConformanceIOURing(t *testing.T) { enginetest.Run(t, conformance("file+"+kaio.IOURing)) }

func conformance(scheme string) enginetest.Config {
	return enginetest.Config{
		NewTarget: func(t *testing.T) spec.Target {
			return spec.Target{Scheme: scheme, Location: t.TempDir()}
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
			return spec.Target{Scheme: scheme, Location: filepath.Join(regular, "f")}
		},
	}
}
