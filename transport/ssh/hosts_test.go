package ssh

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/engine"
)

func TestHostsFromTheListOrTheFile(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("good", "# client hosts\nclient1\n\n  root@client2  # the second\r\nclient3.example.com\n")
	for _, c := range []struct {
		list, file string
		want       []string
	}{
		{"", "", nil},
		{"h1", "", []string{"h1"}},
		{"h1, h2,root@h3", "", []string{"h1", "h2", "root@h3"}},
		{"", good, []string{"client1", "root@client2", "client3.example.com"}},
	} {
		got, err := Hosts(c.list, c.file)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Hosts(%q, %q) = %q, %v; want %q", c.list, c.file, got, err, c.want)
		}
	}

	for _, c := range []struct {
		list, file string
		says       string
	}{
		{"h1", good, "give one of them"},
		{"h1,,h2", "", "empty host name"},
		{"h1,", "", "empty host name"},
		{"h1,-oProxyCommand=x", "", "cannot begin with '-'"},
		{"h1,h2,H1", "", "H1 is named twice"},
		{"", file("dup", "a\n# b\nb\nA\n"), "line 4: A is already on line 1"},
		{"", file("words", "a\nb c\n"), "line 2: host \"b c\": a host name is one word"},
		{"", file("option", "-F/etc/passwd\n"), "line 1: host \"-F/etc/passwd\": a host name cannot begin with '-'"},
		{"", file("comma", "a,b\n"), "line 1: host \"a,b\": a host name has no ','"},
		{"h1,h\n2", "", `--hosts "h1,h\n2": host "h\n2": a host name is one word`},
		{"", file("empty", "# nobody\n\n"), "names no host"},
		{"", filepath.Join(dir, "absent"), "no such file"},
	} {
		_, err := Hosts(c.list, c.file)
		if !engine.IsUsage(err) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Hosts(%q, %q): %v; want a one-line usage error saying %q", c.list, c.file, err, c.says)
		}
	}
}
