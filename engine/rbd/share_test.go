//go:build ceph

package rbd_test

import (
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/rbd"
	"github.com/cephbench/cephbench/spec"
)

// Each host makes and writes an image of its own; one existing image is
// not written by several hosts at once.
func TestHostsGetTheirOwnImage(t *testing.T) {
	d, _ := engine.Describe("rbd")
	w := spec.Workload{Target: spec.Target{Scheme: "rbd", Location: "bench/img?create=true"}}
	if err := d.Share(&w, "h3"); err != nil {
		t.Fatal(err)
	}
	got, err := rbd.ParseTarget(w.Target.Location)
	if err != nil || got.Image != "img-h3" || got.Conn.Pool != "bench" || !got.Create {
		t.Errorf("shared to h3: %+v, %v; want image img-h3 created in bench", got, err)
	}
	w.Target.Location = "bench/img"
	if err := d.Share(&w, "h3"); !engine.IsUsage(err) {
		t.Errorf("an existing image shared: %v; want a usage error", err)
	}
}
