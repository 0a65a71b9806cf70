//go:build ceph

package rbd

import (
	"strings"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/fuzztest"
)

// FuzzParseTarget: an rbd:// location is a target naming a pool and an
// image, and a region within the image's parts when it names one, or a
// one-line usage error, before any connection.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"rbd/img", "rbd/cephbench-side-by-side?create=true", "rbd/img?region=1/4&id=admin",
		"rbd/img?region=4/4", "rbd/img?region=0/1&create=true", "rbd", "rbd/a/b", "/img", "rbd/img?create=maybe&conf=/etc/ceph/ceph.conf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		tg, err := ParseTarget(loc)
		if fuzztest.Refused(t, loc, err, engine.IsUsage) {
			return
		}
		if tg.Conn.Pool == "" || tg.Image == "" || strings.Contains(tg.Image, "/") || tg.Regions > 0 && (tg.Region < 0 || tg.Region >= tg.Regions) {
			t.Fatalf("ParseTarget(%q) = %+v", loc, tg)
		}
	})
}
