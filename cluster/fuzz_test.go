package cluster

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/fuzztest"
)

// FuzzParse: whatever the monitors answer to status, df, osd pool ls
// detail, osd tree and versions, a snapshot or a one-line error; a
// snapshot prints and goes into a result's JSON. Seeds
// (testdata/fuzz/FuzzParse): the answers in testdata of a one-OSD
// cluster, and the sandbox's status, healthy and with an OSD down.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, status, df, pools, tree, versions []byte) {
		s, err := Parse(Outputs{Status: status, DF: df, PoolsDetail: pools, OSDTree: tree, Versions: versions}, time.Unix(1796166966, 0))
		fuzztest.OneLine(t, status, err)
		if err != nil {
			return
		}
		s.Print(io.Discard)
		if _, err := json.Marshal(Pair{Before: s, After: s}); err != nil {
			t.Fatalf("a snapshot that parses does not go into JSON: %v", err)
		}
	})
}
