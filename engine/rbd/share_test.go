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

// Hosts sharing one image each get their part of it, region K of N, in
// the target; an image to create, and regions out of range, are refused.
func TestHostsShareAnImageEachInItsRegion(t *testing.T) {
	d, _ := engine.Describe("rbd")
	w := spec.Workload{Target: spec.Target{Scheme: "rbd", Location: "bench/img?conf=/etc/c.conf"}}
	if err := d.ShareRegion(&w, 2, 3); err != nil {
		t.Fatal(err)
	}
	got, err := rbd.ParseTarget(w.Target.Location)
	if err != nil || got.Image != "img" || got.Region != 2 || got.Regions != 3 || got.Conn.Conf != "/etc/c.conf" {
		t.Errorf("region 2 of 3: %+v, %v", got, err)
	}
	w.Target.Location = "bench/img?create=true"
	if err := d.ShareRegion(&w, 0, 2); !engine.IsUsage(err) {
		t.Errorf("an image to create, shared: %v; want a usage error", err)
	}
	for _, bad := range []string{"3/3", "-1/2", "1", "a/b", "0/0"} {
		if _, err := rbd.ParseTarget("bench/img?region=" + bad); !engine.IsUsage(err) {
			t.Errorf("region=%s: %v; want a usage error", bad, err)
		}
	}
}
