package loadgen

import (
	"strings"
	"testing"
)

// A bare number is bytes per second, as in Ceph 16; one small enough to
// have been meant as MB/s gets a note, a value with a unit never does.
func TestRateUnitNote(t *testing.T) {
	for _, c := range []struct {
		in    string
		bytes int64
		note  bool
	}{{"20", 20, true}, {"20M", 20 << 20, false}, {"0", 0, false}, {"2097152", 2 << 20, false}, {"512K", 512 << 10, false}} {
		var r Rate
		if err := r.Set(c.in); err != nil {
			t.Fatalf("Set(%q): %v", c.in, err)
		}
		note := r.UnitNote()
		if int64(r.Bytes) != c.bytes || (note != "") != c.note {
			t.Errorf("%q: %d bytes/s, note %q; want %d, a note: %v", c.in, r.Bytes, note, c.bytes, c.note)
		}
		if c.note && !strings.Contains(note, "write "+c.in+"M for that") {
			t.Errorf("%q: note %q does not say how to write MB/s", c.in, note)
		}
	}
	if err := new(Rate).Set("fast"); err == nil {
		t.Error(`Set("fast"): no error`)
	}
}
