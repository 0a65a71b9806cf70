package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

type nopSession struct{}

func (nopSession) Geometry() engine.Geometry {
	return engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 1 << 20}
}
func (nopSession) Do(context.Context, *engine.Op) error { return nil }
func (nopSession) Close(context.Context) error          { return nil }

func TestSaveLoadKeepsFiguresAndHistograms(t *testing.T) {
	w := spec.Workload{Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 50,
		BlockSize: 4096, Workers: 2, QueueDepth: 1, TotalOps: 5000}
	o, err := Run(context.Background(), nopSession{}, &w, Options{Seed: 3, Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r, err := o.Result("step", &w, result.ThisHost())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sub", "r.json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := result.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// The result records the memory its buffers were in, also when the
	// workload left it to the default.
	want := w
	want.BufferMemory = "malloc"
	if back.Ops["read"].Ops+back.Ops["write"].Ops != 5000 || back.Spec != want || back.Host.Kernel == "" {
		t.Errorf("loaded %+v", back)
	}
	// Two workers of one slot: every op alone in its worker.
	if back.Queue != r.Queue || back.Queue.Depth[0] != 5000 || back.Queue.Submit[1] != 5000 || back.CPU != r.CPU {
		t.Errorf("queue %+v, cpu %+v; saved %+v, %+v", back.Queue, back.CPU, r.Queue, r.CPU)
	}
	for kind, enc := range back.Histograms {
		h, err := hdr.Decode([]byte(enc))
		if err != nil {
			t.Fatalf("%s histogram: %v", kind, err)
		}
		if h.TotalCount() != back.Ops[kind].Ops {
			t.Errorf("%s histogram holds %d values for %d ops", kind, h.TotalCount(), back.Ops[kind].Ops)
		}
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Error("temporary file left behind")
	}
}
