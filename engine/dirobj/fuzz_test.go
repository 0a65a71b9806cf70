package dirobj

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cephbench/cephbench/internal/fuzztest"
)

// FuzzReadMetadata: whatever a kept write's metadata file holds, metadata
// naming objects in the directory or a one-line error naming the file;
// metadata that reads writes back as itself.
func FuzzReadMetadata(f *testing.F) {
	f.Add([]byte(`{"prefix":"benchmark_data_vm_4242","objects":16,"object_size":4194304,"op_size":4194304}` + "\n"))
	f.Add([]byte(`{"prefix":"../etc","objects":1,"object_size":1,"op_size":1}`))
	f.Add([]byte("{\"prefix\":\"\",\n\"objects\":-1}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := filepath.Dir(fuzztest.WriteFile(t, MetadataName, b))
		m, ok, err := ReadMetadata(dir)
		fuzztest.OneLine(t, b, err)
		if !ok {
			return
		}
		back, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		again, ok, err := ReadMetadata(filepath.Dir(fuzztest.WriteFile(t, MetadataName, back)))
		if !ok || err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("metadata %+v written back reads as %+v, %v", m, again, err)
		}
	})
}
