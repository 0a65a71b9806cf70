package ssh

import (
	"strings"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/fuzztest"
)

// FuzzHosts: --hosts and a --hostfile's content are hosts or a one-line
// usage error; every host is one word ssh takes as a destination, each
// named once, and the same list given as --hosts names the same hosts.
func FuzzHosts(f *testing.F) {
	f.Add("client-1,client-2, user@10.0.0.3", []byte("# clients\nclient-1\nclient-2  # rack 2\n\nuser@10.0.0.3\n"))
	f.Add("a,A", []byte("-oProxyCommand=x\n"))
	f.Add("", []byte("a b\n"))
	f.Fuzz(func(t *testing.T, list string, file []byte) {
		fromList, err := Hosts(list, "")
		checkHosts(t, list, fromList, err)
		path := fuzztest.WriteFile(t, "hosts", file)
		fromFile, err := Hosts("", path)
		checkHosts(t, file, fromFile, err)
		if err != nil {
			return
		}
		again, err := Hosts(strings.Join(fromFile, ","), "")
		if err != nil || strings.Join(again, ",") != strings.Join(fromFile, ",") {
			t.Fatalf("hosts %q of a file, as --hosts, are %q, %v", fromFile, again, err)
		}
	})
}

func checkHosts(t *testing.T, input any, hosts []string, err error) {
	t.Helper()
	fuzztest.Refused(t, input, err, engine.IsUsage)
	seen := map[string]bool{}
	for _, h := range hosts {
		if checkHost(h) != nil || seen[strings.ToLower(h)] || strings.Contains(h, ",") {
			t.Fatalf("input %q: host %q", input, h)
		}
		seen[strings.ToLower(h)] = true
	}
}
