//go:build ceph

package rados_test

import (
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/rados"
	"github.com/cephbench/cephbench/internal/fuzztest"
)

// FuzzParseTarget: a rados:// location is a target naming a pool or a
// one-line usage error, before any connection.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"bench", "bench/", "rbd?conf=/etc/ceph/ceph.conf&id=admin&keyring=/etc/ceph/k",
		"bench?name=client.bench&cluster=ceph&run-name=run1&hints=false", "bench?hints=maybe", "?id=x", "bench?x=1", "bench?%zz", "bench?a;b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		tg, err := rados.ParseTarget(loc)
		if !fuzztest.Refused(t, loc, err, engine.IsUsage) && tg.Pool == "" {
			t.Fatalf("ParseTarget(%q) = %+v, without a pool", loc, tg)
		}
	})
}
