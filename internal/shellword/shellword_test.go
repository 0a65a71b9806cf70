package shellword

import (
	"os/exec"
	"strings"
	"testing"
)

// Every word comes back from a real shell as it went in, and plain words
// stay readable.
func TestJoinSurvivesAShell(t *testing.T) {
	words := []string{"bench", "--target", "rados://pool?conf=/etc/c.conf&id=admin", "", "it's", "$HOME", "a b", "*", "-x", "line\nbreak"}
	out, err := exec.Command("sh", "-c", `printf '%s\0' `+Join(words)).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if strings.Join(got, "|") != strings.Join(words, "|") {
		t.Errorf("the shell read %q; want %q", got, words)
	}
	if q := Quote("cephbench-data/4M:x@y"); q != "cephbench-data/4M:x@y" {
		t.Errorf("a plain word was quoted: %s", q)
	}
}
