//go:build ceph

package frontend

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/internal/peer/loadgen"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// A load-gen step in a plan shows as every plan step does: its live line
// while it runs, erased before the lines that follow, and its result
// placed in the plan.
func TestLoadGenStepInAPlanDrawsItsLiveLineAndIsPlaced(t *testing.T) {
	pool := cephtest.Pool(t, cephtest.Cluster(t), "cbfront")
	cfg := loadgen.Config{
		Objects: 4, MinObjectSize: 64 << 10, MaxObjectSize: 64 << 10, MinOpLen: 4 << 10, MaxOpLen: 16 << 10,
		MaxOps: 2, MaxBacklog: 1 << 20, ReadPercent: 50, RunLength: spec.Duration(2 * time.Second),
	}
	placed := &result.PlanStep{Step: "load", Target: "rados://" + pool, Repeat: 2, Of: 3}
	st := step.Step{
		Name: "rados-load-gen", Workload: cfg.Workload(spec.Target{Scheme: "rados", Location: pool}),
		Save: filepath.Join(t.TempDir(), "lg.json"), Plan: placed,
		Front: step.Front{Command: "rados load-gen", LoadGen: &cfg},
	}
	var stdout, live strings.Builder
	err := Run(context.Background(), Job{Command: "rados load-gen", Steps: []step.Step{st}},
		IO{Stdout: &stdout, Live: &step.Live{W: &live, Label: "[2/3]"}})
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if !strings.Contains(live.String(), "[2/3] rados-load-gen  1s of 2s, 1s left") || !strings.HasSuffix(live.String(), "\r\x1b[K") {
		t.Errorf("live line %q: want the step's seconds of 2s, erased at the end", live.String())
	}
	if !strings.Contains(stdout.String(), "waiting for all operations to complete") {
		t.Errorf("rados load-gen's lines:\n%s", stdout.String())
	}
	res, err := result.Load(st.Save)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Plan, placed) || res.Ops["read"].Ops == 0 {
		t.Errorf("saved result placed at %+v with %d reads; want %+v and reads", res.Plan, res.Ops["read"].Ops, placed)
	}
}
