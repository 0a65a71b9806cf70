//go:build ceph

package rados_test

import (
	"testing"

	"github.com/ceph/go-ceph/rados"

	"github.com/cephbench/cephbench/engine/enginetest"
	cbrados "github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/spec"
)

func objects(t *testing.T, conn *rados.Conn, pool string) []string {
	t.Helper()
	ioctx, err := conn.OpenIOContext(pool)
	if err != nil {
		t.Fatal(err)
	}
	defer ioctx.Destroy()
	var names []string
	if err := ioctx.ListObjects(func(oid string) { names = append(names, oid) }); err != nil {
		t.Fatal(err)
	}
	return names
}

func TestConformance(t *testing.T) {
	conn := cephtest.Cluster(t)
	enginetest.Run(t, enginetest.Config{
		NewTarget: func(t *testing.T) spec.Target {
			return spec.Target{Scheme: "rados", Location: cephtest.Pool(t, conn, "cbtest")}
		},
		Persistent: true,
		Leftovers: func(t *testing.T, target spec.Target) []string {
			return objects(t, conn, target.Location)
		},
		Plant: func(t *testing.T, target spec.Target) string {
			ioctx, err := conn.OpenIOContext(target.Location)
			if err != nil {
				t.Fatal(err)
			}
			defer ioctx.Destroy()
			if err := ioctx.WriteFull("precious-object", []byte("not a benchmark's")); err != nil {
				t.Fatal(err)
			}
			return "precious-object"
		},
		BadTarget: func(t *testing.T) spec.Target {
			return spec.Target{Scheme: "rados", Location: "no-such-pool"}
		},
		EmptyReadIsUsage: true,
	})
}

func TestCleanupRefusesForeignPrefixes(t *testing.T) {
	conn := cephtest.Cluster(t)
	pool := cephtest.Pool(t, conn, "cbtest")
	ioctx, err := conn.OpenIOContext(pool)
	if err != nil {
		t.Fatal(err)
	}
	defer ioctx.Destroy()
	for _, name := range []string{"precious", "benchmark_data_h_1_object0", "benchmark_data_h_1_object1"} {
		if err := ioctx.WriteFull(name, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cbrados.Cleanup(t.Context(), ioctx, "", "prec"); err == nil {
		t.Fatal("cleanup accepted a prefix that is not a benchmark's")
	}
	res, err := cbrados.Cleanup(t.Context(), ioctx, "", "benchmark_data_h_1")
	if err != nil || res.Removed != 2 {
		t.Fatalf("removed %d objects, %v; want 2", res.Removed, err)
	}
	if left := objects(t, conn, pool); len(left) != 1 || left[0] != "precious" {
		t.Errorf("after cleanup the pool holds %v; want only the foreign object", left)
	}
	if _, err := cbrados.Cleanup(t.Context(), ioctx, "", ""); err == nil {
		t.Error("cleanup with no metadata object and no prefix succeeded")
	}
}
