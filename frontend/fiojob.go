package frontend

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/peer/fiojob"
	"github.com/cephbench/cephbench/internal/peer/fiolog"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// FioJob is the job of a fio invocation: a step for each of its jobs,
// its targets taken from the folder dir (empty: the process's), saving
// their results as at-N-JOBNAME.json, at being the invocation's stamped
// name in its results folder, results.
func FioJob(plan *fiojob.Plan, dir, results, at string) Job {
	opts := &FioOptions{
		OutputFormats: plan.OutputFormats, Output: plan.Output, StatusInterval: spec.Duration(plan.StatusInterval),
		GlobalOptions: stepFioOptions(plan.GlobalOptions), Results: results,
	}
	steps := make([]step.Step, len(plan.Jobs))
	for i, j := range plan.Jobs {
		st := step.Step{
			Name: j.Name, Workload: j.Workload, Save: fmt.Sprintf("%s-%d-%s.json", at, i, fileSafe(j.Name)),
			Front: step.Front{Command: "fio", Fio: &step.Fio{
				StartDelay: spec.Duration(j.StartDelay), Stonewall: j.Stonewall, Group: j.Group, GroupReporting: j.GroupReporting,
				Description: j.Description, NumJobs: j.NumJobs, RW: j.RW, IOEngine: j.IOEngine, IODepth: j.IODepth,
				PercentileList: j.PercentileList, LatPercentiles: j.LatPercentiles, Options: stepFioOptions(j.Options),
				Logs:    logsIn(j.Logs, dir),
				ExitAll: j.ExitAll, ExitAllOnError: j.ExitAllOnError, ExitWhat: j.ExitWhat,
			}},
		}
		st.Workload.Target = engine.InDir(st.Workload.Target, dir)
		if j.ContinueOnError != "none" {
			st.Front.Fio.ContinueOnError = j.ContinueOnError
		}
		if j.WholeTarget {
			st.Passes = j.Passes()
		}
		if j.RandRepeat {
			// fio's randrepeat=1 (its default): every run draws the same
			// offsets.
			st.Seed = 1
		}
		if j.RandSeedSet {
			// A step's zero seed means a fresh one; randseed=0 is fio's
			// fixed seed 0, so it is moved to a fixed seed of its own.
			st.Seed = j.RandSeed
			if st.Seed == 0 {
				st.Seed = 1 << 63
			}
		}
		steps[i] = st
	}
	return Job{Command: "fio", Steps: steps, Fio: opts, Notes: plan.Notes}
}

// logsIn is logs with relative file names taken from the folder dir
// (empty: the process's), as the job's files are.
func logsIn(logs *fiolog.Options, dir string) *fiolog.Options {
	if logs == nil || dir == "" {
		return logs
	}
	in := *logs
	for _, name := range []*string{&in.BW, &in.Lat, &in.IOPS, &in.Hist} {
		if *name != "" && !filepath.IsAbs(*name) {
			*name = filepath.Join(dir, *name)
		}
	}
	return &in
}

func stepFioOptions(opts []fiojob.Option) []step.FioOption {
	out := make([]step.FioOption, len(opts))
	for i, o := range opts {
		out[i] = step.FioOption{Name: o.Name, Value: o.Value}
	}
	return out
}

// fileSafe makes a job name usable in a file name.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r < ' ' {
			return '_'
		}
		return r
	}, name)
}
