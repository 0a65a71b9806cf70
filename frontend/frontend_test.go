package frontend

import (
	"context"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/internal/jsontest"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// A job is what a plan or a coordinator hands over to be run: every field
// of it, of its steps and of their commands' options comes back from JSON
// as it went in.
func TestJobRoundTripsThroughJSON(t *testing.T) {
	jsontest.RoundTrips[Job](t)
}

// What parsing a command line had to say (a deprecated spelling, an
// option ignored) comes on stderr before the job's own text, wherever the
// job runs.
func TestRunPrintsTheJobsNotesBeforeItRuns(t *testing.T) {
	st := step.Step{Name: "noted", Front: step.Front{Command: "bench"}, Workload: spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 100, BlockSize: 4096, Workers: 1, QueueDepth: 1, TotalOps: 10,
	}}
	var stdout, stderr strings.Builder
	j := Job{Command: "bench", Steps: []step.Step{st}, Notes: []string{"first note", "second note"}}
	if err := Run(context.Background(), j, IO{Stdout: &stdout, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if stderr.String() != "first note\nsecond note\n" || !strings.Contains(stdout.String(), "noted") {
		t.Errorf("stderr %q, stdout:\n%s\nwant the notes on stderr, the step on stdout", stderr.String(), stdout.String())
	}
}
