//go:build ceph

package rados_test

import (
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/spec"
)

// Hosts writing one pool at once each record their write in a metadata
// object of their own, so that a later seq or rand on each host reads its
// own objects; the connection options stay.
func TestHostsGetTheirOwnMetadataObject(t *testing.T) {
	d, _ := engine.Describe("rados")
	for _, tc := range []struct{ loc, want string }{
		{"bench", "benchmark_last_metadata_h2"},
		{"bench?run-name=mine&id=admin", "mine_h2"},
	} {
		w := spec.Workload{Target: spec.Target{Scheme: "rados", Location: tc.loc}}
		if err := d.Share(&w, "h2"); err != nil {
			t.Fatal(err)
		}
		got, err := rados.ParseTarget(w.Target.Location)
		if err != nil || got.RunName != tc.want || got.Pool != "bench" {
			t.Errorf("%s shared to h2: %+v, %v; want run-name %s", tc.loc, got, err, tc.want)
		}
	}
}
