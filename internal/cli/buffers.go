package cli

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/cephbench/cephbench/spec"
)

// bufferFlags are the memory an I/O run's buffers are in: fio's mem= and
// hugepage-size, for the native commands.
type bufferFlags struct {
	memory   string
	hugepage spec.Size
}

func (b *bufferFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&b.memory, "buffer-memory", "", "the memory the I/O buffers are in, as fio's mem=: "+strings.Join(spec.BufferMemories, ", ")+" (default malloc, ordinary pages)")
	fl.Var(&b.hugepage, "hugepage-size", "huge page size for mmaphuge and shmhuge (default: the system's)")
}

// apply sets w's buffer memory; Validate checks it.
func (b *bufferFlags) apply(w *spec.Workload) {
	w.BufferMemory, w.HugepageSize = b.memory, b.hugepage
}
