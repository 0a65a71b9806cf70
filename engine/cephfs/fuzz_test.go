//go:build ceph

package cephfs

import (
	"path"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/fuzztest"
)

// FuzzParseTarget: a cephfs:// location is a target with a clean absolute
// path, or a one-line usage error, before any mount.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"/bench", "/cephbench-side-by-side", "cephfs/a/b/../c?id=admin", "fs2/?conf=/etc/ceph/ceph.conf", "nopath", "/x?y=1", "/x?%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		tg, err := ParseTarget(loc)
		if fuzztest.Refused(t, loc, err, engine.IsUsage) {
			return
		}
		if !path.IsAbs(tg.Dir) || path.Clean(tg.Dir) != tg.Dir {
			t.Fatalf("ParseTarget(%q) = %+v: the path is not clean and absolute", loc, tg)
		}
	})
}
