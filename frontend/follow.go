package frontend

import (
	"context"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/step"
)

// Runner runs a job as Run does (on other hosts, say).
type Runner func(ctx context.Context, j Job, out IO) error

// Follow gives the subscriber of the ticks of a step labelled step and
// target that runs on host (empty: this one), and what to call when the
// step has ended.
type Follow func(host, step, target string) (tick metrics.Subscriber, ended func())

// Following is run with each step's ticks also going to follow's
// subscriber for the step (its label StepLabel, its target's Short), on
// top of any hooks out has; on many hosts at once, each host's ticks
// (IO.HostTicks). A job whose command cannot be followed (Followable)
// runs as run runs it.
func Following(run Runner, follow Follow) Runner {
	return func(ctx context.Context, j Job, out IO) error {
		if !Followable(j.Command) {
			return run(ctx, j, out)
		}
		out.HostTicks = func(i int, host string) (metrics.Subscriber, func()) {
			return follow(host, StepLabel(j, i), j.Steps[i].Workload.Target.Short())
		}
		given := out.hooks
		out.Hooks = func(i int) step.Hooks {
			h := given(i)
			tick, ended := follow("", StepLabel(j, i), j.Steps[i].Workload.Target.Short())
			h.Tick = both(h.Tick, tick)
			before := h.Result
			h.Result = func(res *result.Result) {
				ended()
				if before != nil {
					before(res)
				}
			}
			return h
		}
		return run(ctx, j, out)
	}
}

// both is a subscriber that gives each tick to a, if set, then to b.
func both(a, b metrics.Subscriber) metrics.Subscriber {
	if a == nil {
		return b
	}
	return func(t metrics.Tick) {
		a(t)
		b(t)
	}
}

// Followable reports whether command's jobs honour IO.Hooks: every
// command that runs its steps as steps, all but net client.
func Followable(command string) bool {
	f, err := lookup(command)
	return err == nil && !f.unhooked
}

// StepLabel names step i of j among the steps of a run: its name, or in a
// plan the plan's step (its name and sweep values), followed by the
// step's own name when the job has several (s3 bench's phases, fio's
// jobs).
func StepLabel(j Job, i int) string {
	st := j.Steps[i]
	switch {
	case st.Plan == nil:
		return st.Name
	case len(j.Steps) == 1:
		return st.Plan.Step
	}
	return st.Plan.Step + "/" + st.Name
}
