package frontend

import (
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
)

// Presenter prints a step whose seconds and result come from elsewhere
// (the hosts of a run on many hosts, added) as its command prints a step
// it runs itself: rados bench's table and summary for a rados bench step,
// and so on. Its functions are called from one goroutine.
type Presenter struct {
	// Opened is called when the step starts; it prints what the command
	// prints then and returns the subscriber of the step's seconds, nil
	// for none.
	Opened func() metrics.Subscriber
	// Done prints the step's result, saved at saved (empty: not saved).
	Done func(res *result.Result, saved string) error
}

// Present is how step i of j is printed when it runs elsewhere: its
// command's own way, or, for a command without one, as bench prints a
// step (heading, per-second table unless quiet, summary; with Format
// "json" the result as JSON on stdout and the text on stderr).
func Present(j Job, i int, out IO) Presenter {
	out = out.orDiscard()
	if f, err := lookup(j.Command); err == nil && f.present != nil {
		return f.present(j, i, out)
	}
	return benchPresenter(j, i, out)
}

// Presenters is Present of each step of j, in order.
func Presenters(j Job, out IO) []Presenter {
	ps := make([]Presenter, len(j.Steps))
	for i := range ps {
		ps[i] = Present(j, i, out)
	}
	return ps
}

// benchPresenter prints step i of j as bench prints a step.
func benchPresenter(j Job, i int, out IO) Presenter {
	so := benchOutput(j, out)
	return Presenter{
		Opened: func() metrics.Subscriber { return so.Opening(j.Steps[i]) },
		Done: func(res *result.Result, saved string) error {
			so.Closing(res, saved)
			if j.Format != "json" {
				return nil
			}
			return printJSON(out.Stdout, res)
		},
	}
}
