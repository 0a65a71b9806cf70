package aggregate

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/internal/fuzztest"
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
	f.Add([]byte(`{"schema":"cephbench.net/v1","name":"net-forward","server":"10.0.0.1:5201","params":{"streams":2,"duration":"2s"},`+
		`"start":"1970-01-01T00:01:40Z","end":"1970-01-01T00:01:42Z","up":{"streams":2,"receiver":{"bytes":2000000000,"bits_per_sec":8000000000},`+
		`"bits_per_sec_per_second":{"mean":8000000000,"min":7200000000,"max":8800000000,"samples":2}},"series":[{"start":0,"end":1,"up":{"bytes":900000000}}]}`), []byte(nil))
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
