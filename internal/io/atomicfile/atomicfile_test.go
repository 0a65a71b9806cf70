package atomicfile

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteJSONWritesAllOrNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	path := filepath.Join(dir, "r.json")
	if err := WriteJSON(path, map[string]int{"ops": 3}); err != nil {
		t.Fatal(err)
	}
	var back map[string]int
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &back) != nil || back["ops"] != 3 {
		t.Fatalf("read back %v (%v)", back, err)
	}
	// A value that cannot be encoded leaves the earlier file as it was,
	// and no temporary file beside it.
	if err := WriteJSON(path, math.NaN()); err == nil {
		t.Fatal("encoding NaN succeeded")
	}
	if b, _ := os.ReadFile(path); json.Unmarshal(b, &back) != nil || back["ops"] != 3 {
		t.Errorf("a failed write changed the file: %s", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d files; want the result alone", len(entries))
	}
}
