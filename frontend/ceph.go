//go:build ceph

package frontend

import (
	"context"
	"time"

	"github.com/cephbench/cephbench/step"
)

// eachStep runs a job's steps in turn with run, each with its hooks,
// stopping at the first error: the Ceph tools' commands each run one
// step.
func eachStep(run func(context.Context, step.Step, step.Hooks, IO) error) func(context.Context, Job, IO) error {
	return func(ctx context.Context, j Job, out IO) error {
		for i, st := range j.Steps {
			if err := run(ctx, st, out.hooks(i), out); err != nil {
				return err
			}
		}
		return nil
	}
}

// durations is the sum of the steps' workload durations.
func durations(j Job) time.Duration {
	var total time.Duration
	for _, st := range j.Steps {
		total += st.Workload.Duration.D()
	}
	return total
}
