package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
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

// An OSD tree whose children lead back to their parents (a mangled
// answer) is walked once: each node once, at its first depth.
func TestAnOSDTreeWithACycleIsWalkedOnce(t *testing.T) {
	o := outputs(t)
	o.OSDTree = []byte(`{"nodes":[{"id":-1,"name":"default","type":"root","children":[-2,-1]},{"id":-2,"name":"vm","type":"host","children":[0,-1,-2]},{"id":0,"name":"osd.0","type":"osd","children":[-1]}]}`)
	s, err := Parse(o, time.Unix(1796166966, 0))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range s.OSDTree {
		got = append(got, fmt.Sprintf("%s@%d", n.Name, n.Depth))
	}
	if strings.Join(got, " ") != "default@0 vm@1 osd.0@2" {
		t.Errorf("tree %q; want each node once", got)
	}
}

// FuzzWatch: whatever the cluster answers to the watch's commands, the
// samples hold what could be read and one-line problems for the rest; what
// they sum up to prints as lines and goes into a result's JSON. Seeds:
// the answers of testdata/watch.
func FuzzWatch(f *testing.F) {
	for _, status := range []string{"status-clean.json", "status-osd-down.json", "status-deep-scrub.json"} {
		f.Add(readWatchData(f, status), readWatchData(f, "osd-dump-osd-down.json"), readWatchData(f, "pool-stats.json"),
			readWatchData(f, "osd-perf.json"), readWatchData(f, "status-clean.json"))
	}
	f.Fuzz(func(t *testing.T, status, dump, pools, perf, status2 []byte) {
		s := &script{t: t, answers: map[string][]string{
			"status": {"raw: " + string(status), "raw: " + string(status2)}, "osd dump": {"raw: " + string(dump)},
			"osd pool stats": {"raw: " + string(pools)}, "osd perf": {"raw: " + string(perf)},
		}}
		d := Summarize(s.samples(3))
		for _, p := range d.Problems {
			fuzztest.OneLine(t, status, errors.New(p))
		}
		for _, l := range d.Lines() {
			if strings.ContainsAny(l, "\n\r") {
				t.Fatalf("a summary line of more than one line: %q", l)
			}
		}
		if _, err := json.Marshal(Pair{During: d}); err != nil {
			t.Fatalf("what the watch saw does not go into JSON: %v", err)
		}
	})
}
