//go:build ceph

package rbd_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ceph/go-ceph/rados"
	"github.com/ceph/go-ceph/rbd"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/enginetest"
	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
)

// newPool makes an RBD pool that is removed when the test ends, and
// returns its name and an I/O context on it.
func newPool(t *testing.T, conn *rados.Conn) (string, *rados.IOContext) {
	t.Helper()
	name := cephtest.Pool(t, conn, "cbrbd")
	ioctx, err := conn.OpenIOContext(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ioctx.Destroy)
	if err := rbd.PoolInit(ioctx, true); err != nil {
		t.Fatalf("rbd pool init %s: %v", name, err)
	}
	return name, ioctx
}

func images(t *testing.T, ioctx *rados.IOContext) []string {
	t.Helper()
	names, err := rbd.GetImageNames(ioctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func TestConformance(t *testing.T) {
	conn := cephtest.Cluster(t)
	pools := map[string]*rados.IOContext{}
	enginetest.Run(t, enginetest.Config{
		NewTarget: func(t *testing.T) spec.Target {
			name, ioctx := newPool(t, conn)
			pools[name] = ioctx
			return spec.Target{Scheme: "rbd", Location: name + "/bench?create=true"}
		},
		Persistent: true,
		Leftovers: func(t *testing.T, target spec.Target) []string {
			return images(t, pools[poolOf(target)])
		},
		Plant: func(t *testing.T, target spec.Target) string {
			if err := rbd.CreateImage(pools[poolOf(target)], "precious-image", 1<<20, rbd.NewRbdImageOptions()); err != nil {
				t.Fatal(err)
			}
			return "precious-image"
		},
		BadTarget: func(t *testing.T) spec.Target {
			return spec.Target{Scheme: "rbd", Location: "no-such-pool/bench?create=true"}
		},
	})
}

func poolOf(t spec.Target) string {
	pool, _, _ := strings.Cut(t.Location, "/")
	return pool
}

// TestDirectWritesReadBackVerified writes through the aio queue with the
// cache off, where librbd sends cephbench's buffers without copying them,
// while the runner refills each buffer for its next op as soon as the op
// completes: every block must still read back as written.
func TestDirectWritesReadBackVerified(t *testing.T) {
	conn := cephtest.Cluster(t)
	pool, _ := newPool(t, conn)
	w := spec.Workload{
		Target: spec.Target{Scheme: "rbd", Location: pool + "/direct?create=true"}, Pattern: spec.Random,
		BlockSize: 64 << 10, FileSize: 16 << 20, Workers: 1, QueueDepth: 16, TotalOps: 1024, Direct: true, Keep: true,
	}
	run := func(w spec.Workload) *runner.Outcome {
		t.Helper()
		s, err := engine.Open(context.Background(), &w)
		if err != nil {
			t.Fatal(err)
		}
		o, err := runner.Run(context.Background(), s, &w, runner.Options{})
		if cerr := s.Close(context.Background()); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if errs := run(w).Collector.Errors(); len(errs) != 0 {
		t.Fatalf("direct writes failed: %v", errs)
	}
	w.ReadPercent, w.Verify = 100, true
	o := run(w)
	if ops, _, _ := o.Collector.Totals(int(engine.Read)); ops != 1024 || len(o.Collector.Errors()) != 0 {
		t.Errorf("verified reads after direct writes: %d ops, errors %v; want 1024 and none", ops, o.Collector.Errors())
	}
}
