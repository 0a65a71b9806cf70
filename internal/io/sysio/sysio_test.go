package sysio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestReadWriteFull(t *testing.T) {
	for _, raw := range []bool{false, true} {
		f, err := os.Create(filepath.Join(t.TempDir(), "f"))
		if err != nil {
			t.Fatal(err)
		}
		fd := int(f.Fd())
		data := bytes.Repeat([]byte("cephbench"), 1000)
		if err := PwriteFull(fd, data, 4096, raw); err != nil {
			t.Fatalf("raw=%v write: %v", raw, err)
		}
		back := make([]byte, len(data))
		if err := PreadFull(fd, back, 4096, raw); err != nil || !bytes.Equal(back, data) {
			t.Fatalf("raw=%v read back: %v, equal %v", raw, err, bytes.Equal(back, data))
		}
		if err := PreadFull(fd, make([]byte, 100), 4096+int64(len(data))-50, raw); !errors.Is(err, io.EOF) {
			t.Errorf("raw=%v read past the end: %v; want io.EOF", raw, err)
		}
		if err := PreadFull(-1, back, 0, raw); err == nil {
			t.Errorf("raw=%v read of a bad descriptor succeeded", raw)
		}
		f.Close()
	}
}
