//go:build ceph

package frontend

import (
	"strings"
	"testing"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/internal/peer/cephtext/cephtexttest"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// watchedResults are results of one kind of op on a watched cluster, in
// each state its summary tells: at rest, not at rest with a health
// check's message and an error that have colons of their own, with a slow
// OSD, quiesced, and not watched at all.
func watchedResults(kind string) map[string]*result.Result {
	res := func(c *cluster.Pair) *result.Result {
		return &result.Result{
			ElapsedSeconds: 5, Spec: spec.Workload{BlockSize: 4096},
			Ops:     map[string]metrics.KindSummary{kind: {Ops: 100, Bytes: 409600, Errors: 1}},
			Errors:  map[string]int64{kind: 1},
			Cluster: c,
		}
	}
	watched := func() *cluster.During {
		return &cluster.During{Samples: 6, IntervalSeconds: 1, FSID: "f96452ed-a582-4bcc-9275-1cf7a3482716", Pools: []string{"p1", "p2"}}
	}
	unsettled := watched()
	unsettled.Events = []cluster.Event{
		{What: "health check PG_DEGRADED raised", At: 2, Detail: "Degraded data redundancy: 3/30 objects degraded"},
		{What: "osd.2 down", At: 12},
	}
	unsettled.Problems = []string{"ceph osd perf: timed out at 12:00:01"}
	slow := watched()
	slow.SlowOSDs = []cluster.SlowOSD{{ID: 1, Measure: "commit latency", P99Ms: 46, OthersMs: 9, Seconds: 4}}
	return map[string]*result.Result{
		"at rest":     res(&cluster.Pair{During: watched()}),
		"not at rest": res(&cluster.Pair{During: unsettled}),
		"slow OSD":    res(&cluster.Pair{During: slow}),
		"quiesced":    res(&cluster.Pair{During: watched(), Quiesced: &cluster.Quiesced{AlreadySet: []string{"noscrub"}}}),
		"not watched": res(&cluster.Pair{During: &cluster.During{}}),
	}
}

// Every line of rados bench's summary from "Total time run" on, and every
// line rbd bench's summary adds to rbd bench's own, is "key: value" with
// one colon, whatever the cluster did: CBT splits rados bench's at its
// colon.
func TestCephSummariesAreKeyValueLines(t *testing.T) {
	for _, mode := range []string{"write", "seq", "rand"} {
		kind := map[string]string{"write": "write"}[mode]
		if kind == "" {
			kind = "read"
		}
		for name, res := range watchedResults(kind) {
			var stdout strings.Builder
			st := step.Step{Front: step.Front{RadosBench: &step.RadosBench{Mode: mode, Format: "plain"}}}
			if err := radosPresenter(st, IO{Stdout: &stdout}).Done(res, "/tmp/r.json"); err != nil {
				t.Fatal(err)
			}
			if err := cephtexttest.KeyValueSummary(stdout.String(), "Total time run"); err != nil {
				t.Errorf("rados bench %s, %s: %v", mode, name, err)
			}
			if !strings.Contains(stdout.String(), "\nCluster at rest: ") {
				t.Errorf("rados bench %s, %s: no Cluster at rest line:\n%s", mode, name, stdout.String())
			}
		}
	}
	for name, res := range watchedResults("write") {
		var stdout strings.Builder
		st := step.Step{Front: step.Front{RBDBench: &step.RBDBench{IOType: "write"}}}
		if err := rbdPresenter(st, IO{Stdout: &stdout}).Done(res, "/tmp/r.json"); err != nil {
			t.Fatal(err)
		}
		if err := cephtexttest.KeyValueSummary(stdout.String(), "elapsed: ", "elapsed: ", "read_ops: ", "write_ops: "); err != nil {
			t.Errorf("rbd bench, %s: %v", name, err)
		}
	}
}
