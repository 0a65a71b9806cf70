package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/workload"
)

// fakeStore is an object store that serves every op kind, named as S3
// names them, and keeps its objects in memory. A get reports its first
// byte halfway through, after firstByte, and completes lastByte later; it
// fails if its object is gone at either end, as a real get of an object
// deleted under it would.
type fakeStore struct {
	firstByte, lastByte time.Duration
	mu                  sync.Mutex
	objects             map[int64][]byte
	count               int64 // objects there at Open
}

func newFakeStore(objects int64) *fakeStore {
	f := &fakeStore{objects: map[int64][]byte{}, count: objects}
	buf := make([]byte, 4096)
	workload.Fill(buf)
	for n := range objects {
		op := &engine.Op{Kind: engine.Write, Object: n, Buf: buf}
		workload.Stamp(op)
		f.objects[n] = append([]byte(nil), buf...)
	}
	return f
}

func (f *fakeStore) Geometry() engine.Geometry {
	return engine.Geometry{Layout: engine.Objects, ObjectCount: f.count}
}

func (f *fakeStore) Kinds() []engine.KindName {
	return []engine.KindName{
		{Kind: engine.Write, Name: "put"}, {Kind: engine.Read, Name: "get", FirstByte: "get-ttfb"},
		{Kind: engine.Delete, Name: "delete"}, {Kind: engine.List, Name: "list"}, {Kind: engine.Stat, Name: "stat"},
	}
}

// ErrorClass names a missing object's error as S3 does.
func (f *fakeStore) ErrorClass(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "NoSuchKey"
	}
	return ""
}

func (f *fakeStore) object(n int64) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.objects[n]
	return b, ok
}

func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeStore) Do(ctx context.Context, op *engine.Op) error {
	missing := fmt.Errorf("fake: %s of object %d, which is not there: %w", op.Kind, op.Object, fs.ErrNotExist)
	switch op.Kind {
	case engine.Write:
		f.mu.Lock()
		f.objects[op.Object] = append([]byte(nil), op.Buf...)
		f.mu.Unlock()
	case engine.Read:
		if _, ok := f.object(op.Object); !ok {
			return missing
		}
		if err := pause(ctx, f.firstByte); err != nil {
			return err
		}
		op.FirstByte = engine.Now()
		if err := pause(ctx, f.lastByte); err != nil {
			return err
		}
		b, ok := f.object(op.Object)
		if !ok {
			return missing
		}
		copy(op.Buf, b)
	case engine.Stat:
		if _, ok := f.object(op.Object); !ok {
			return missing
		}
	case engine.Delete:
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.objects[op.Object]; !ok {
			return missing
		}
		delete(f.objects, op.Object)
	case engine.List:
	default:
		return fmt.Errorf("fake: no %s ops", op.Kind)
	}
	return nil
}

func (f *fakeStore) Close(context.Context) error { return nil }

func mixWorkload(mix string, mut func(*spec.Workload)) *spec.Workload {
	w := &spec.Workload{
		Target: spec.Target{Scheme: "fake"}, Pattern: spec.Random, Mix: spec.OpMix(mix), BlockSize: 4096,
		Workers: 8, QueueDepth: 1, Duration: spec.Duration(time.Minute), Verify: true,
	}
	mut(w)
	return w
}

// runMix runs w and returns its outcome and its op counts by kind,
// failing the test on any failed op.
func runMix(t *testing.T, s engine.Session, w *spec.Workload, opts Options) (*Outcome, map[string]int64) {
	t.Helper()
	o, err := Run(context.Background(), s, w, opts)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int64{}
	for k, name := range o.Kinds {
		n, _, errs := o.Collector.Totals(k)
		if errs > 0 {
			t.Errorf("%s: %d failed ops (%v)", name, errs, o.Collector.Errors())
		}
		ops[name] = n
	}
	return o, ops
}

func TestMixDrawsKindsAtTheirShares(t *testing.T) {
	const n = 20000
	w := mixWorkload("get=45,put=15,delete=10,list=5,stat=25", func(w *spec.Workload) { w.TotalOps = n })
	o, ops := runMix(t, newFakeStore(200), w, Options{Seed: 3})
	if o.StopReason != StopOps {
		t.Errorf("stopped on %q; want the op count", o.StopReason)
	}
	if got := ops["get"] + ops["put"] + ops["delete"] + ops["list"] + ops["stat"]; got != n {
		t.Errorf("%d ops; want %d", got, n)
	}
	shares, _ := w.Mix.Shares()
	for _, s := range shares {
		share := 100 * float64(ops[s.Kind]) / n
		if math.Abs(share-float64(s.Percent)) > 1.5 {
			t.Errorf("%s: %.1f%% of the ops; want %d%% ± 1.5", s.Kind, share, s.Percent)
		}
	}
	if _, did := o.Summaries()["read"]; did {
		t.Error("a mix on a store that names its kinds reports reads")
	}
}

// Every successful get has its time to first byte, which is never later
// than its last byte; the ticks carry the first-byte times marked as the
// gets again, so that views counting ops count each get once.
func TestMixRecordsTimeToFirstByte(t *testing.T) {
	s := newFakeStore(50)
	s.firstByte, s.lastByte = 300*time.Microsecond, 700*time.Microsecond
	w := mixWorkload("get=80,stat=20", func(w *spec.Workload) { w.TotalOps = 400 })
	var tickedTTFB, tickedGets int64
	marked := true
	sub := func(tk metrics.Tick) {
		tickedTTFB += tk.Second.Kinds["get-ttfb"].Ops
		tickedGets += tk.Second.Kinds["get"].Ops
		marked = marked && !tk.Counted("get-ttfb") && tk.Counted("get")
	}
	o, ops := runMix(t, s, w, Options{Seed: 1, Interval: 20 * time.Millisecond, Subscribers: []metrics.Subscriber{sub}})
	if ops["get"] == 0 || ops["get-ttfb"] != ops["get"] {
		t.Fatalf("%d gets, %d first-byte times; want one per get", ops["get"], ops["get-ttfb"])
	}
	sum := o.Summaries()
	get, ttfb := sum["get"].Latency, sum["get-ttfb"].Latency
	if ttfb.MeanNs >= get.MeanNs || ttfb.MaxNs > get.MaxNs || ttfb.MinNs > get.MinNs {
		t.Errorf("get-ttfb mean %.0f max %d min %d, get mean %.0f max %d min %d: the first byte comes after the last",
			ttfb.MeanNs, ttfb.MaxNs, ttfb.MinNs, get.MeanNs, get.MaxNs, get.MinNs)
	}
	if ttfb.MinNs < int64(s.firstByte) || get.MinNs < int64(s.firstByte+s.lastByte) {
		t.Errorf("get-ttfb min %d, get min %d; want at least %v and %v", ttfb.MinNs, get.MinNs, s.firstByte, s.firstByte+s.lastByte)
	}
	if sum["get-ttfb"].Bytes != 0 || sum["get"].Bytes != ops["get"]*4096 || sum["stat"].Bytes != 0 {
		t.Errorf("bytes: get %d, get-ttfb %d, stat %d; want the gets' objects only", sum["get"].Bytes, sum["get-ttfb"].Bytes, sum["stat"].Bytes)
	}
	if tickedGets != ops["get"] || tickedTTFB != ops["get-ttfb"] || !marked {
		t.Errorf("the ticks carried %d gets and %d first-byte times, get-ttfb marked derived %v; want all %d of each, marked",
			tickedGets, tickedTTFB, marked, ops["get"])
	}
}

// A delete takes only an object no get or stat holds: with many ops in
// flight on few objects, gets that fail when their object is deleted
// under them never fail.
func TestMixNeverDeletesAnObjectInUse(t *testing.T) {
	s := newFakeStore(4)
	s.firstByte, s.lastByte = 100*time.Microsecond, 200*time.Microsecond
	w := mixWorkload("get=40,stat=20,delete=20,put=20", func(w *spec.Workload) {
		w.Workers, w.TotalOps = 16, 3000
	})
	_, ops := runMix(t, s, w, Options{Seed: 5})
	if ops["get"] < 100 || ops["delete"] < 100 {
		t.Errorf("%d gets, %d deletes: too few to show anything", ops["get"], ops["delete"])
	}
}

func TestMixOfDeletesStopsWhenNoneAreLeft(t *testing.T) {
	s := newFakeStore(50)
	o, ops := runMix(t, s, mixWorkload("delete=100", func(*spec.Workload) {}), Options{})
	if o.StopReason != StopExhausted || ops["delete"] != 50 || len(s.objects) != 0 {
		t.Errorf("stopped on %q after %d deletes, %d objects left; want exhausted after 50, none left", o.StopReason, ops["delete"], len(s.objects))
	}
}

// Puts stop at the workload's object limit; the next run on the same
// object set gets exactly those objects.
func TestMixPutsStopAtTheObjectLimit(t *testing.T) {
	s := newFakeStore(0)
	objs := workload.NewObjects(0)
	o, ops := runMix(t, s, mixWorkload("put=100", func(w *spec.Workload) { w.Objects = 30 }), Options{Objects: objs})
	if o.StopReason != StopExhausted || ops["put"] != 30 || len(s.objects) != 30 || objs.Count() != 30 {
		t.Errorf("stopped on %q after %d puts, %d objects stored, %d in the set; want exhausted at 30",
			o.StopReason, ops["put"], len(s.objects), objs.Count())
	}
	_, ops = runMix(t, s, mixWorkload("get=100", func(w *spec.Workload) { w.TotalOps = 300 }), Options{Objects: objs})
	if ops["get"] != 300 {
		t.Errorf("%d gets of the objects put; want 300", ops["get"])
	}
}

// A mix that lists put, even at 0%, puts when there is nothing to get;
// one that does not stops.
func TestMixPutsWhenThereIsNothingToGet(t *testing.T) {
	o, ops := runMix(t, newFakeStore(0), mixWorkload("get=100,put=0", func(w *spec.Workload) { w.TotalOps = 500 }), Options{})
	if o.StopReason != StopOps || ops["put"] == 0 || ops["get"] == 0 {
		t.Errorf("stopped on %q after %d puts and %d gets; want puts, then gets of them", o.StopReason, ops["put"], ops["get"])
	}
	o, ops = runMix(t, newFakeStore(0), mixWorkload("get=100", func(*spec.Workload) {}), Options{})
	if o.StopReason != StopExhausted || ops["get"]+ops["put"] != 0 {
		t.Errorf("stopped on %q after %d gets and %d puts; want exhausted at once", o.StopReason, ops["get"], ops["put"])
	}
}

func TestMixRefusals(t *testing.T) {
	_, err := Run(context.Background(), newFakeStore(1), mixWorkload("read=100", func(*spec.Workload) {}), Options{})
	if !engine.IsUsage(err) || err.Error() != "fake:// targets do no read ops (they do put, get, delete, list, stat)" {
		t.Errorf("a kind the store does not name: %v", err)
	}
	_, err = Run(context.Background(), &fakeSession{}, mixWorkload("read=50,write=50", func(*spec.Workload) {}), Options{})
	if !engine.IsUsage(err) || err.Error() != "an op mix works on objects: fake:// targets have none" {
		t.Errorf("a mix on a block target: %v", err)
	}
	w := mixWorkload("get=50,put=40", func(*spec.Workload) {})
	if _, err := Run(context.Background(), newFakeStore(1), w, Options{}); err == nil || !strings.Contains(err.Error(), "sum to 90") {
		t.Errorf("a mix summing to 90: %v", err)
	}
}

// A mix's failed ops are counted under the session's names for their
// errors.
func TestMixNamesErrorsAsTheSessionDoes(t *testing.T) {
	w := mixWorkload("get=100", func(w *spec.Workload) { w.TotalOps = 50 })
	o, err := Run(context.Background(), newFakeStore(0), w, Options{Objects: workload.NewObjects(5)})
	if err != nil {
		t.Fatal(err)
	}
	_, _, failed := o.Collector.Totals(1) // get, after put
	if errs := o.Collector.Errors(); failed != 50 || len(errs) != 1 || errs["NoSuchKey"] != 50 {
		t.Errorf("%d failed gets, errors %v; want 50 NoSuchKey", failed, errs)
	}
}
