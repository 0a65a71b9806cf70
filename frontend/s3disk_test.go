package frontend

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// An s3 bench or disk job handed over without what its command needs
// beyond the steps is bad input, refused before it touches the target.
func TestS3AndDiskJobsWithoutTheirOptionsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	st := step.Step{Name: "x", Workload: spec.Workload{
		Target: spec.Target{Scheme: "file", Location: filepath.Join(dir, "f")}, Pattern: spec.Sequential, BlockSize: 4096,
		Workers: 1, QueueDepth: 1, FileSize: 1 << 20, Duration: spec.Duration(time.Second),
	}}
	jobs := map[string]Job{
		"s3 bench without options":        {Command: "s3 bench", Steps: []step.Step{st}},
		"s3 bench step without its phase": {Command: "s3 bench", Steps: []step.Step{st}, S3: &S3Bench{Prepare: 10}},
		"disk without options":            {Command: "disk", Steps: []step.Step{st}},
		"disk without steps":              {Command: "disk", Disk: &Disk{Target: dir, Remove: true}},
	}
	for name, j := range jobs {
		if err := Run(context.Background(), j, IO{}); !engine.IsUsage(err) {
			t.Errorf("%s: %v; want a usage error", name, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused jobs wrote %v", entries)
	}
}
