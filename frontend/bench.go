package frontend

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/cephbench/cephbench/result"

	"github.com/cephbench/cephbench/step"
)

func init() { register("bench", front{run: runBench, estimate: stepsInTurn}) }

// runBench runs a bench job's steps in turn, each with its heading,
// per-second table (unless quiet) and summary; with Format "json" the
// text goes to stderr and stdout gets each result as JSON.
func runBench(ctx context.Context, j Job, out IO) error {
	so := benchOutput(j, out)
	for i, st := range j.Steps {
		so.Hooks = out.hooks(i)
		res, err := step.Run(ctx, st, so)
		if err != nil {
			return err
		}
		if j.Format == "json" {
			if err := printJSON(out.Stdout, res); err != nil {
				return err
			}
		}
		if res.Interrupted {
			return step.ErrInterrupted
		}
	}
	return nil
}

// printJSON prints res as bench's JSON format does: indented, one
// document a step.
func printJSON(w io.Writer, res *result.Result) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// benchOutput is how bench prints a step: its heading and per-second
// table (unless quiet) and summary, to stdout, or stderr with JSON.
func benchOutput(j Job, out IO) step.Output {
	text := j.text(out)
	so := step.Output{Summary: text, Live: out.Live}
	if !j.Quiet {
		so.Progress = text
	}
	return so
}

// stepsInTurn is the time of steps run one after another: each one's
// ramp and duration; a step bound by ops or bytes runs at least its ramp.
func stepsInTurn(j Job) (time.Duration, bool) {
	var total time.Duration
	exact := true
	for _, st := range j.Steps {
		w := st.Workload
		total += time.Duration(w.Ramp + w.Duration)
		exact = exact && w.Duration > 0
	}
	return total, exact
}
