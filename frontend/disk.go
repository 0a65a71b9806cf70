package frontend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

func init() { register("disk", front{run: runDisk, estimate: diskEstimate}) }

// Disk is what the steps of a disk job share: what their file or device
// is and what the run does around them. The steps come in the disk
// command's order: the sequential write of the region, the sequential
// read, then the random steps, the last at the deepest queue.
type Disk struct {
	// Target describes the file or device, as the run's first line names
	// it.
	Target string `json:"target"`
	// Device says the target is a block device: when the write ends
	// before covering the region, the next steps address only what it
	// covered, since reading never-written blocks measures the device's
	// firmware.
	Device bool `json:"device,omitempty"`
	// Existing says the target is a file that was there before the run:
	// when the engine refuses to write it, the read steps still run.
	Existing bool `json:"existing,omitempty"`
	// Remove removes the file at the end: the run created it.
	Remove bool `json:"remove,omitempty"`
	// Results is the folder the steps' results are saved in, which the
	// run names at its end.
	Results string `json:"results"`
}

// diskEstimate is a disk job's time: at least a step's duration, since a
// sequential step ends after one pass over the region.
func diskEstimate(j Job) (time.Duration, bool) {
	if len(j.Steps) == 0 {
		return 0, false
	}
	return time.Duration(j.Steps[0].Workload.Duration), false
}

// runDisk runs the steps in order and stops at the first that fails or
// is interrupted. Then it removes the file the run created, if it is to,
// and prints the table of the steps that ran.
func runDisk(ctx context.Context, j Job, out IO) error {
	if j.Disk == nil || len(j.Steps) == 0 {
		return engine.Usagef("a disk job needs its options and its steps")
	}
	first, deepest := j.Steps[0].Workload, j.Steps[len(j.Steps)-1].Workload
	fmt.Fprintf(out.Stdout, "cephbench %s: disk baseline of %s, region %s: %s sequential, %s random at qd 1 and %d (%s), up to %s a step\n\n",
		result.Version, j.Disk.Target, first.FileSize, first.BlockSize, deepest.BlockSize, deepest.QueueDepth, deepest.IOEngine, first.Duration)
	done, stepErr := diskSteps(ctx, j, out)
	if j.Disk.Remove {
		if err := os.Remove(first.Target.Location); err != nil && !errors.Is(err, fs.ErrNotExist) {
			stepErr = errors.Join(stepErr, fmt.Errorf("removing %s: %w", first.Target.Location, err))
		}
	}
	if len(done) > 0 {
		diskTable(out.Stdout, done)
		fmt.Fprintf(out.Stdout, "\nresults: %s\n", j.Disk.Results)
	}
	return stepErr
}

// diskSteps runs j's steps in order, each saved where it says, and
// returns the results of those that ran. A write the engine refuses on an
// existing file leaves the read steps; a write that covers part of a
// device narrows the next steps to that part.
func diskSteps(ctx context.Context, j Job, out IO) ([]*result.Result, error) {
	var progress io.Writer
	if !j.Quiet {
		progress = out.Stdout
	}
	steps := slices.Clone(j.Steps)
	var done []*result.Result
	readOnly := false
	for i, st := range steps {
		if readOnly && st.Workload.Writes() {
			continue
		}
		res, err := step.Run(ctx, st, step.Output{Progress: progress, Summary: out.Stdout, Live: out.Live, Hooks: out.hooks(i)})
		var refused *engine.UsageError
		if i == 0 && j.Disk.Existing && !st.Workload.Force && errors.As(err, &refused) {
			// The engine refused before any I/O: reading the file
			// still measures the disk.
			fmt.Fprintf(out.Stdout, "read steps only: %s\n\n", oneLine(refused.Error()))
			readOnly = true
			continue
		}
		if res != nil {
			done = append(done, res)
			fmt.Fprintln(out.Stdout)
		}
		if err != nil {
			return done, err
		}
		if res.Interrupted {
			return done, step.ErrInterrupted
		}
		if i == 0 && j.Disk.Device && res.StopReason != runner.StopBytes {
			// Reading never-written blocks of a device measures its
			// firmware (an SSD answers trimmed blocks without reading).
			covered := res.Ops["write"].Bytes
			if covered == 0 { // a zero region would mean the whole device
				return done, fmt.Errorf("%s wrote nothing, so the other steps have nothing to read", st.Name)
			}
			fmt.Fprintf(out.Stdout, "the write covered %s of the %s region in %s; the next steps address only that\n\n",
				spec.Size(covered), st.Workload.FileSize, st.Workload.Duration)
			for k := range steps[1:] {
				narrow(&steps[1+k].Workload, covered)
			}
		}
	}
	return done, nil
}

// narrow makes w address only the first region bytes of its target: a
// step bounded by one pass over its region stays bounded by one pass.
func narrow(w *spec.Workload, region int64) {
	w.FileSize = spec.Size(region)
	if w.TotalBytes > 0 {
		w.TotalBytes = spec.Size(region - region%int64(w.BlockSize))
	}
}

// diskTable is the steps' table with MB/s (10^6 bytes, as dd and disk
// makers count) next to MiB/s and the queue depth that tells the random
// steps apart.
func diskTable(w io.Writer, results []*result.Result) {
	mbps := report.Column{Heading: "MB/s", Cell: func(_ *result.Result, s metrics.KindSummary) string {
		return strconv.FormatFloat(s.BandwidthBps.Mean/1e6, 'f', 1, 64)
	}}
	report.TableOf(w, results, report.ColBlockSize, report.ColQueueDepth, report.ColIOPS, mbps, report.ColMiBps,
		report.ColMean, report.ColPercentile(99), report.ColErrors)
}
