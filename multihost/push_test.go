package multihost

import (
	"os"
	"path/filepath"
	"testing"
)

// The cached copy is used only when its checksum is this binary's; a copy
// of another checksum, even one saying this version, or none, is
// replaced. A remote program of this version is used as it is.
func TestProgramChoosesByChecksum(t *testing.T) {
	const remote, cached = "/usr/bin/cephbench", "/home/u/.cache/cephbench/v/cephbench"
	const sum = "5e2b"
	for _, c := range []struct {
		name, remoteSays, state string
		program                 string
		push                    bool
	}{
		{"remote is this version", versionLine(), "absent", remote, false},
		{"same checksum", "", "present " + sum, cached, false},
		{"same checksum, remote another version", "cephbench version 0.0.1", "present " + sum, cached, false},
		{"another checksum", "", "present 9f00", cached, true},
		{"no sha256sum on the host", "", "present ", cached, true},
		{"no copy", "", "absent", cached, true},
	} {
		program, push := choose(remote, cached, c.remoteSays, c.state, sum)
		if program != c.program || push != c.push {
			t.Errorf("%s: %s, push %v; want %s, push %v", c.name, program, push, c.program, c.push)
		}
	}
}

// fileSum is what sha256sum prints for the file.
func TestFileSumIsSha256sums(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(path, []byte("abc"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := fileSum(path)
	if want := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; err != nil || got != want {
		t.Errorf("fileSum: %s, %v; want %s", got, err, want)
	}
}
