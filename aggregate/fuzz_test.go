package aggregate

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/fuzztest"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result/netresult"
)

// FuzzParseConditions: --fail-if flags (one a line) are conditions or a
// one-line error; each condition's text reads back as itself.
func FuzzParseConditions(f *testing.F) {
	for _, s := range []string{"iops < -5%", "p99 > 10%,mean>=+2.5%", "bandwidth <= -.5%", "p99.9 > 1%\niops<0%", "iops < 5", "x < 1%", ", ,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lines string) {
		flags := strings.Split(lines, "\n")
		conds, err := ParseConditions(flags)
		fuzztest.OneLine(t, flags, err)
		for _, c := range conds {
			back, err := ParseCondition(c.Text)
			if err != nil || back != c {
				t.Fatalf("condition %+v reads back as %+v, %v", c, back, err)
			}
		}
	})
}

// FuzzLoad: a file given to report or compare loads as a result (a
// cephbench result, with whatever is in r.hlog, or a network result) or
// gives a one-line error; what loads groups into measurements, compares
// with itself and writes as compare's JSON. Seeds: a network result and
// (testdata/fuzz/FuzzLoad) results with their tick logs.
func FuzzLoad(f *testing.F) {
	h := metrics.NewHistogram()
	h.RecordValue(50_000)
	enc, _ := h.EncodeV2()
	n := netresult.Result{
		Schema: netresult.Schema, Name: "net-forward", Server: "10.0.0.1:5201",
		Start: time.Unix(100, 0), End: time.Unix(102, 0),
		Up:     &netresult.Throughput{Streams: 2, Receiver: netresult.Count{Bytes: 2e9, BitsPerSec: 8e9}, PerSecond: metrics.Stats{Mean: 8e9, Samples: 2}},
		Series: []netresult.Interval{{Start: 0, End: 1, Up: &netresult.IntervalSum{Bytes: 9e8}}},
		RTT:    &netresult.RTT{Latency: metrics.LatencyOf(h), Histogram: string(enc)},
	}
	net, _ := json.Marshal(n)
	f.Add(net, []byte(nil))
	f.Fuzz(func(t *testing.T, js, ticks []byte) {
		dir := fuzztest.Dir(t, map[string][]byte{"r.json": js, "r.hlog": ticks})
		set, err := Load(filepath.Join(dir, "r.json"))
		fuzztest.OneLine(t, js, err)
		if err != nil {
			return
		}
		groups := set.Groups()
		c := Compare(groups, groups, 0.05)
		if _, err := json.Marshal(c); err != nil {
			t.Fatalf("a result that loads compares into JSON that does not write: %v", err)
		}
	})
}

// FuzzLoadHostRun: a host's result and tick log, as cephbench merge reads
// them, load or give a one-line error; a run that loads merges with
// another host's copy of it or gives a one-line error. Seeds
// (testdata/fuzz/FuzzLoadHostRun): results with their tick logs.
func FuzzLoadHostRun(f *testing.F) {
	f.Fuzz(func(t *testing.T, js, ticks []byte) {
		dir := fuzztest.Dir(t, map[string][]byte{"r.json": js, "r.hlog": ticks})
		run, err := LoadHostRun(filepath.Join(dir, "r.json"))
		fuzztest.OneLine(t, js, err)
		if err != nil {
			return
		}
		other, err := LoadHostRun(filepath.Join(dir, "r.json"))
		if err != nil {
			t.Fatal(err)
		}
		other.Name, other.Result.Host.Hostname = "other", other.Result.Host.Hostname+"-other"
		_, _, err = MergeHosts([]HostRun{run, other})
		fuzztest.OneLine(t, js, err)
	})
}
