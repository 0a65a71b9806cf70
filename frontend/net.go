package frontend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/netbench"
	"github.com/cephbench/cephbench/step"
)

func init() { register("net client", front{run: runNetClient, estimate: netTime, unhooked: true}) }

// runNetClient runs a net client job's one step against its server: the
// iperf-style per-second table (unless quiet) and summary, the result
// saved where the step says; with Format "json" the text goes to stderr
// and stdout gets the result as JSON.
func runNetClient(ctx context.Context, j Job, out IO) error {
	if len(j.Steps) != 1 || j.Steps[0].Front.Net == nil {
		return engine.Usagef("a net client job is one step with the net test's options")
	}
	st := j.Steps[0]
	opts := st.Front.Net
	text := j.text(out)
	progress := text
	if j.Quiet {
		progress = nil
	}
	res, err := netbench.RunClient(ctx, opts.Host, opts.Port, opts.Params, progress)
	var setup *netbench.SetupError
	switch {
	case errors.Is(err, netbench.ErrBusy):
		return err // a failure (exit 1), also when interrupted meanwhile
	case errors.As(err, &setup):
		return &engine.UsageError{Err: err}
	case err != nil && ctx.Err() != nil:
		return step.ErrInterrupted
	case err != nil:
		return err // the server or the network went away: a failure
	}
	res.Plan = st.Plan
	var saved string
	var saveErr error
	if st.Save != "" {
		saved, saveErr = res.SaveNew(st.Save)
	}
	netbench.Summary(text, res)
	if saved != "" {
		fmt.Fprintf(text, "result saved to %s\n", saved)
	}
	if j.Format == "json" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(out.Stdout, "%s\n", b)
	}
	switch {
	case saveErr != nil:
		return fmt.Errorf("saving the result: %w", saveErr)
	case res.Interrupted:
		return step.ErrInterrupted
	}
	return nil
}

// netTime is the ping-pong phase and the throughput phase, exactly.
func netTime(j Job) (time.Duration, bool) {
	var total time.Duration
	for _, st := range j.Steps {
		if n := st.Front.Net; n != nil {
			total += time.Duration(n.Params.RTT + n.Params.Duration)
		}
	}
	return total, true
}
