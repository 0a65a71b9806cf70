//go:build ceph

package frontend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/internal/peer/cephtext"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

func init() {
	register("rados bench", front{run: eachStep(radosBench), estimate: radosBenchTime, present: presentRadosBench})
}

// radosBench runs st as rados bench does: its start lines, per-second
// table and summary in rados bench's words, or its JSON document alone on
// stdout.
func radosBench(ctx context.Context, st step.Step, hooks step.Hooks, out IO) error {
	opts := st.Front.RadosBench
	if opts == nil {
		return engine.Usagef("%s: no rados bench options", st.Name)
	}
	if err := opts.Validate(); err != nil {
		return &engine.UsageError{Err: err}
	}
	if opts.Mode != "write" {
		if err := readLastWrite(&st.Workload, opts.Mode); err != nil {
			return err
		}
	}
	p := radosPresenter(st, out)
	so := step.Output{Live: out.Live, Hooks: hooks, Opened: func(s engine.Session) metrics.Subscriber {
		if rs, ok := s.(*rados.Session); ok {
			p.prefix = rs.Prefix()
		}
		return p.Opened()
	}}
	res, err := step.Run(ctx, st, so)
	if res == nil {
		return err
	}
	// A result that could not be saved where asked is still printed.
	if err := errors.Join(err, p.Done(res, res.Path)); err != nil {
		return err
	}
	if res.Interrupted {
		return step.ErrInterrupted
	}
	return nil
}

// radosPresentation prints a rados bench step in rados bench's words;
// prefix is its objects' prefix, when one host made them all.
type radosPresentation struct {
	Presenter
	prefix string
}

func presentRadosBench(j Job, i int, out IO) Presenter {
	return radosPresenter(j.Steps[i], out).Presenter
}

// radosPresenter prints st as rados bench does: its start lines and
// per-second table, then its summary, or its JSON document alone on
// stdout.
func radosPresenter(st step.Step, out IO) *radosPresentation {
	opts, w := st.Front.RadosBench, st.Workload
	kind := "read"
	if opts.Mode == "write" {
		kind = "write"
	}
	p := &radosPresentation{}
	p.Opened = func() metrics.Subscriber {
		if opts.Format != "plain" {
			return nil
		}
		if opts.Mode == "write" {
			fmt.Fprintf(out.Stdout, "Maintaining %d concurrent writes of %d bytes to objects of size %d for up to %d seconds or %d objects\n",
				w.QueueDepth, int64(w.BlockSize), int64(w.EffectiveObjectSize()), int64(w.Duration.D().Seconds()), w.Objects)
			if p.prefix != "" {
				fmt.Fprintf(out.Stdout, "Object prefix: %s\n", p.prefix)
			}
		}
		return cephtext.NewRadosProgress(out.Stdout, int64(w.BlockSize)).Tick
	}
	p.Done = func(res *result.Result, saved string) error {
		if opts.Format == "plain" {
			cephtext.RadosSummary(out.Stdout, res, kind)
			// As wide as the lines cephbench adds before them.
			report.ClusterFields(out.Stdout, res, 23)
			if saved != "" {
				fmt.Fprintf(out.Stdout, "Result saved to:        %s\n", saved)
			}
			return nil
		}
		doc := cephtext.RadosJSON(res, kind, w.QueueDepth, p.prefix)
		marshal := json.Marshal
		if opts.Format == "json-pretty" {
			marshal = func(v any) ([]byte, error) { return json.MarshalIndent(v, "", "    ") }
		}
		b, err := marshal(doc)
		if err != nil {
			return err
		}
		fmt.Fprintf(out.Stdout, "%s\n", b)
		report.ClusterLines(out.Stderr, res, "")
		if saved != "" {
			fmt.Fprintf(out.Stderr, "result saved to %s\n", saved)
		}
		return nil
	}
	return p
}

// readLastWrite completes the workload of a seq or rand step from the
// metadata object of the last write on its pool: the write's block and
// object sizes, and for seq its op count, so that it reads every object
// once. Nothing recorded is an *engine.UsageError.
func readLastWrite(w *spec.Workload, mode string) error {
	t, err := rados.ParseTarget(w.Target.Location)
	if err != nil {
		return err
	}
	m, err := rados.LastWrite(t)
	if err != nil {
		return err
	}
	w.BlockSize, w.ObjectSize = spec.Size(m.OpSize), spec.Size(m.ObjectSize)
	if mode == "seq" {
		w.TotalOps = m.Ops
	}
	if err := w.Validate(); err != nil {
		return &engine.UsageError{Err: err}
	}
	return nil
}

// radosBenchTime is the steps' seconds, exact for writes only: how a read
// goes depends on what the last write left (seq stops once it has read
// every object).
func radosBenchTime(j Job) (time.Duration, bool) {
	exact := true
	for _, st := range j.Steps {
		exact = exact && st.Front.RadosBench != nil && st.Front.RadosBench.Mode == "write"
	}
	return durations(j), exact
}
