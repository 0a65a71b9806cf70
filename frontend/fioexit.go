package frontend

import (
	"sync"
	"sync/atomic"

	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/step"
)

// fioExits ends a fio job's steps early, as fio's exitall, exit_what and
// exitall_on_error do. It is safe for concurrent use.
type fioExits struct {
	steps []step.Step
	stops []chan struct{}
	once  []sync.Once
	// rest: no later stretch of jobs starts (exit_what=all).
	rest atomic.Bool
}

func newFioExits(steps []step.Step) *fioExits {
	x := &fioExits{steps: steps, stops: make([]chan struct{}, len(steps)), once: make([]sync.Once, len(steps))}
	for i := range x.stops {
		x.stops[i] = make(chan struct{})
	}
	return x
}

// stop is step i's stop channel, closed when another step ends it.
func (x *fioExits) stop(i int) <-chan struct{} { return x.stops[i] }

// ended takes step i's end, res and err being what it returned, and
// ends the steps its exitall options name: those from..to run together
// with it (a stretch between stonewalls).
func (x *fioExits) ended(i, from, to int, res *result.Result, err error) {
	f := x.steps[i].Front.Fio
	failed := err != nil || res != nil && res.StopReason == result.StopError
	if !f.ExitAll && !(f.ExitAllOnError && failed) {
		return
	}
	for k := from; k < to; k++ {
		if k != i && (f.ExitWhat != "group" && f.ExitWhat != "" || x.steps[k].Front.Fio.Group == f.Group) {
			x.once[k].Do(func() { close(x.stops[k]) })
		}
	}
	if f.ExitWhat == "all" {
		x.rest.Store(true)
	}
}

// stopped reports whether exit_what=all ended the job's later steps.
func (x *fioExits) stopped() bool { return x.rest.Load() }
