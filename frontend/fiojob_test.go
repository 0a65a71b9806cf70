package frontend

import (
	"os"
	"testing"

	"github.com/cephbench/cephbench/internal/peer/fiojob"
)

// randseed seeds a job's offsets, randseed=0 included (a step's zero seed
// would draw a fresh one); without it, randrepeat's fixed seed holds, and
// randrepeat=0 draws a fresh one per run.
func TestFioRandseedSeedsTheStep(t *testing.T) {
	for _, c := range []struct {
		args []string
		want uint64
	}{
		{[]string{"--randseed=42"}, 42},
		{[]string{"--randseed=0"}, 1 << 63},
		{nil, 1},
		{[]string{"--randrepeat=0"}, 0},
	} {
		args := append(append([]string{"--rw=randread", "--size=1m", "--filename=" + t.TempDir() + "/f"}, c.args...), "--name=j")
		plan, err := fiojob.Parse(args, nil, os.ReadFile)
		if err != nil {
			t.Fatal(err)
		}
		if got := FioJob(plan, "", t.TempDir(), "at").Steps[0].Seed; got != c.want {
			t.Errorf("%v: seed %d, want %d", c.args, got, c.want)
		}
	}
}
