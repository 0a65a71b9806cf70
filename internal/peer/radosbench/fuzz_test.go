package radosbench

import (
	"bytes"
	"testing"

	"github.com/cephbench/cephbench/internal/fuzztest"
)

// FuzzDecodeMetadata: a rados bench metadata object's bytes are metadata
// or a one-line error; metadata that decodes has objects to name and encodes back
// into the bytes it was read from (op size included).
func FuzzDecodeMetadata(f *testing.F) {
	f.Add(Metadata{ObjectSize: 4 << 20, Ops: 16, PID: 4242, OpSize: 4 << 20}.Encode())
	f.Add(Metadata{ObjectSize: 4 << 20, Ops: 100, PID: 1, OpSize: 1 << 20}.Encode()[:16])
	f.Add([]byte("short"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMetadata(b)
		fuzztest.OneLine(t, b, err)
		if err != nil {
			return
		}
		if m.Objects() < 0 || m.Ops > 0 && m.Objects() == 0 {
			t.Fatalf("%+v: %d objects", m, m.Objects())
		}
		n := 16 // an old writer's, without the op size
		if len(b) >= 24 {
			n = 24
		}
		if !bytes.Equal(m.Encode()[:n], b[:n]) {
			t.Fatalf("%+v encodes as %x, not %x", m, m.Encode(), b[:n])
		}
	})
}
