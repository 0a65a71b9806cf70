package result

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/fuzztest"
)

// FuzzLoad: a result file r.json, with whatever is in r.hlog beside it,
// loads or gives a one-line error; a result that loads saves and loads
// back the same. Seeds (testdata/fuzz/FuzzLoad): results of cephbench
// bench and of a plan's step, with their tick logs.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"schema":"cephbench.result/v1","ops":{},"errors":{},"series":[{"t":1,"dur":1,"kinds":{}}]}`), []byte(nil))
	f.Add([]byte(`{"schema":"cephbench.result/v1","tick_log":"../../../../../../dev/zero"}`), []byte(nil))
	f.Fuzz(func(t *testing.T, js, ticks []byte) {
		dir := fuzztest.Dir(t, map[string][]byte{"r.json": js, "r.hlog": ticks})
		r, err := Load(filepath.Join(dir, "r.json"))
		fuzztest.OneLine(t, js, err)
		if err != nil {
			return
		}
		back := filepath.Join(dir, "back.json")
		if err := r.Save(back); err != nil {
			t.Fatalf("a result that loads does not save: %v", err)
		}
		again, err := Load(back)
		if err != nil {
			t.Fatalf("a result saved as it loaded does not load: %v", err)
		}
		if a, b := asJSON(t, r), asJSON(t, again); a != b {
			t.Fatalf("a result saved and loaded back changed:\n%s\nbecame\n%s", a, b)
		}
	})
}

func asJSON(t *testing.T, r *Result) string {
	t.Helper()
	b, err := json.Marshal(embedded{Result: r, Series: r.Series})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzReadIntervals: a tick log reads into intervals or a one-line error;
// intervals that read are written back into a tick log that reads the
// same. Seeds (testdata/fuzz/FuzzReadIntervals): tick logs of cephbench
// bench and of a plan's step.
func FuzzReadIntervals(f *testing.F) {
	f.Add([]byte("#tick t=1 dur=1 kinds=0\n"))
	f.Add([]byte("#tick t=NaN dur=Inf kinds=0\n#tick t=1 dur=1 kinds=0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := fuzztest.WriteFile(t, "r.hlog", b)
		intervals, err := ReadIntervals(path)
		fuzztest.OneLine(t, b, err)
		if err != nil {
			return
		}
		back := filepath.Join(filepath.Dir(path), "back.json")
		r := &Result{Schema: Schema, Start: time.Unix(1796166966, 0)}
		saved, err := r.SaveNew(back, intervals, nil)
		if err != nil {
			t.Fatalf("intervals that read do not write: %v", err)
		}
		again, err := Load(saved)
		if err != nil {
			t.Fatalf("intervals written back do not read: %v", err)
		}
		for i := range intervals {
			if i >= len(again.Series) || !reflect.DeepEqual(intervals[i].Second, again.Series[i]) {
				t.Fatalf("interval %d written back changed (%d intervals, %d back)", i, len(intervals), len(again.Series))
			}
		}
	})
}

// FuzzLoadManifest: a results folder's manifest loads or gives a one-line
// error; one that loads saves and loads back the same. Seed
// (testdata/fuzz/FuzzLoadManifest): a plan run's manifest.
func FuzzLoadManifest(f *testing.F) {
	f.Add([]byte(`{"schema":"cephbench.manifest/v1","plan":"quick","status":"done"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := filepath.Dir(fuzztest.WriteFile(t, ManifestFile, b))
		m, err := LoadManifest(dir)
		fuzztest.OneLine(t, b, err)
		if err != nil {
			return
		}
		back := t.TempDir()
		if err := m.Save(back); err != nil {
			t.Fatalf("a manifest that loads does not save: %v", err)
		}
		again, err := LoadManifest(back)
		if err != nil {
			t.Fatalf("a manifest saved as it loaded does not load: %v", err)
		}
		a, _ := json.Marshal(m)
		z, _ := json.Marshal(again)
		if string(a) != string(z) {
			t.Fatalf("a manifest saved and loaded back changed:\n%s\nbecame\n%s", a, z)
		}
	})
}

// A result names its tick log beside it: a mangled name that leads
// elsewhere, such as to a device that never ends, is refused, not read.
func TestATickLogIsAFileBesideTheResult(t *testing.T) {
	for _, name := range []string{"../../../../../../dev/zero", "/dev/zero", "sub/r.hlog", ".."} {
		js := []byte(`{"schema":"cephbench.result/v1","tick_log":"` + name + `"}`)
		_, err := Load(fuzztest.WriteFile(t, "r.json", js))
		if err == nil || !strings.Contains(err.Error(), "is not a file name") {
			t.Errorf("tick log %q: %v; want it refused", name, err)
		}
	}
}

// Seconds a JSON document cannot hold (NaN, Inf) or a negative length
// are refused with their line.
func TestATickLogOfSecondsThatAreNotIsRefused(t *testing.T) {
	for _, line := range []string{"#tick t=NaN dur=1 kinds=0", "#tick t=1 dur=Inf kinds=0", "#tick t=1 dur=-1 kinds=0"} {
		_, err := ReadIntervals(fuzztest.WriteFile(t, "r.hlog", []byte("#tick t=0.5 dur=0.5 kinds=0\n"+line+"\n")))
		if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "are not seconds") {
			t.Errorf("%s: %v; want it refused", line, err)
		}
	}
}
