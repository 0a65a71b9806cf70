package toy_test

import (
	"fmt"
	"testing"

	"github.com/cephbench/cephbench/engine/enginetest"
	"github.com/cephbench/cephbench/engine/toy"
	"github.com/cephbench/cephbench/spec"
)

func TestConformance(t *testing.T) {
	n := 0
	enginetest.Run(t, enginetest.Config{
		NewTarget: func(*testing.T) spec.Target {
			n++
			return spec.Target{Scheme: "toy", Location: fmt.Sprintf("target%d", n)}
		},
		Persistent: true,
		Leftovers:  func(_ *testing.T, t spec.Target) []string { return toy.Leftovers(t.Location) },
		Plant: func(_ *testing.T, t spec.Target) string {
			toy.Plant(t.Location, "planted")
			return "planted"
		},
		BadTarget: func(*testing.T) spec.Target { return spec.Target{Scheme: "toy"} },
	})
}
