package writeahead

import (
	"testing"
	"time"
)

func TestRecordRoundTrip(t *testing.T) {
	r := Record{Stem: "benchmark_data_h_12_object", Metadata: "benchmark_last_metadata_h2", CreatedBucket: true,
		Host: "h", PID: 12, Started: time.Unix(1_800_000_000, 5).UTC()}
	if !IsName(r.Name()) {
		t.Fatalf("IsName(%q) = false", r.Name())
	}
	got, err := Decode(r.Name(), r.Encode())
	if err != nil || got != r {
		t.Fatalf("Decode(Encode(%+v)) = %+v, %v", r, got, err)
	}
}

// A record of cephbench before 2026-12 names no process: it still reads,
// with none.
func TestOldRecordReads(t *testing.T) {
	name := "cephbench_writing_benchmark_data_h_12_object"
	r, err := Decode(name, []byte(`{"stem":"benchmark_data_h_12_object","created_dir":true}`))
	if err != nil || r != (Record{Stem: "benchmark_data_h_12_object", CreatedDir: true}) {
		t.Fatalf("Decode of an old record = %+v, %v", r, err)
	}
}

// A record is acted on only if it names objects cephbench writes, under
// the name it is stored as: a user's object named like a record, or a
// record copied under another name, removes nothing.
func TestDecodeRefusesWhatIsNotARecord(t *testing.T) {
	for _, c := range []struct{ name, data string }{
		{"cephbench_writing_benchmark_data_h_1_object", "not json"},
		{"cephbench_writing_benchmark_data_h_1_object", `{"stem":"benchmark_data_h_2_object"}`},
		{"cephbench_writing_notes", `{"stem":"notes"}`},
		{"cephbench_writing_benchmark_data_", `{"stem":"benchmark_data_"}`},
		{"cephbench_writing_benchmark_data_a/b", `{"stem":"benchmark_data_a/b"}`},
	} {
		if r, err := Decode(c.name, []byte(c.data)); err == nil {
			t.Errorf("Decode(%q, %q) = %+v; want an error", c.name, c.data, r)
		}
	}
	for _, name := range []string{"cephbench_writing_", "cephbench_writing_notes", "benchmark_data_h_1_object0"} {
		if IsName(name) {
			t.Errorf("IsName(%q) = true", name)
		}
	}
}

// A record owns its stem followed by a number, and nothing else: not
// another process's objects whose pid starts with the same digits, nor a
// user's copy.
func TestOwnsOnlyItsNumberedObjects(t *testing.T) {
	r := Record{Stem: "benchmark_data_h_12_object"}
	for name, want := range map[string]bool{
		"benchmark_data_h_12_object0":     true,
		"benchmark_data_h_12_object417":   true,
		"benchmark_data_h_12_object":      false,
		"benchmark_data_h_123_object0":    false,
		"benchmark_data_h_12_object1.bak": false,
		"benchmark_data_other":            false,
	} {
		if got := r.Owns(name); got != want {
			t.Errorf("Owns(%q) = %v, want %v", name, got, want)
		}
	}
}
