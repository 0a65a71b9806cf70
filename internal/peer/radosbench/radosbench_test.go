package radosbench

import (
	"bytes"
	"strings"
	"testing"
)

func TestMetadataRoundTripAndLayout(t *testing.T) {
	m := Metadata{ObjectSize: 4 << 20, Ops: 100, PID: 4242, OpSize: 1 << 20}
	b := m.Encode()
	// u64 object size, i32 ops, i32 pid, u64 op size, little endian.
	want := []byte{0, 0, 0x40, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0x92, 0x10, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0}
	if !bytes.Equal(b, want) {
		t.Fatalf("encoded % x\nwant    % x", b, want)
	}
	back, err := DecodeMetadata(b)
	if err != nil || back != m {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	if m.Objects() != 25 {
		t.Errorf("100 ops of 1M into 4M objects make %d objects, want 25", m.Objects())
	}
	old, err := DecodeMetadata(b[:16])
	if err != nil || old.OpSize != old.ObjectSize {
		t.Errorf("metadata without op size: %+v, %v", old, err)
	}
	for _, bad := range [][]byte{nil, b[:10], make([]byte, 24)} {
		if _, err := DecodeMetadata(bad); err == nil {
			t.Errorf("decoded garbage % x", bad)
		}
	}
}

func TestFillIsRadosBenchData(t *testing.T) {
	buf := make([]byte, 4096)
	Fill(buf, 7)
	text := "I'm the                7th op!"
	if !strings.HasPrefix(string(buf), text+"\x00zzz") || buf[4095] != 'z' {
		t.Fatalf("buffer starts %q", buf[:40])
	}
	if !Check(buf, 7) || Check(buf, 8) {
		t.Error("Check does not tell op 7's data from op 8's")
	}
	buf[3000] = 'y'
	if Check(buf, 7) {
		t.Error("Check missed a changed byte")
	}
	small := make([]byte, 10)
	Fill(small, 7)
	if string(small) != "I'm the  \x00" {
		t.Errorf("a 10-byte op holds %q; snprintf truncates to 9 bytes and a NUL", small)
	}
}

func TestNames(t *testing.T) {
	p := ObjectPrefix(99)
	if !strings.HasPrefix(p, "benchmark_data_") || !strings.HasSuffix(p, "_99") {
		t.Errorf("prefix %q", p)
	}
	name := ObjectName(p, 12)
	if n, ok := ObjectNumber(name, p); !ok || n != 12 {
		t.Errorf("ObjectNumber(%q) = %d, %v", name, n, ok)
	}
	for _, bad := range []string{p + "_object", p + "_objectx", "other_object1", p + "_object-1"} {
		if _, ok := ObjectNumber(bad, p); ok {
			t.Errorf("%q parsed as an object of %q", bad, p)
		}
	}
}
