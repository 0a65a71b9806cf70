package s3

import (
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/fuzztest"
)

// FuzzParseTarget: an s3:// location is a target or a one-line usage
// error; a target reads back as itself from its Location.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"bench", "bench/run1", "bench//a/b/", "bench?region=default&insecure=true",
		"b-1?addressing=virtual", "bench/p?endpoint=https%3A%2F%2F127.0.0.1%3A8443&profile=ceph",
		"bench?endpoint=http://127.0.0.1:7480", "bench?secret_key=x", "bench?%zz", "Bench", "/run"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		tg, err := ParseTarget(loc)
		if fuzztest.Refused(t, loc, err, engine.IsUsage) {
			return
		}
		back, err := ParseTarget(tg.Location())
		if err != nil || back != tg {
			t.Fatalf("ParseTarget(%q) = %+v, whose Location %q reads back as %+v, %v", loc, tg, tg.Location(), back, err)
		}
	})
}
