package cmdline

import (
	"slices"
	"strings"
	"testing"
)

// Report 003's iperf command lines, and iperf3's usual options, become
// cephbench net's.
func TestIperfCommandLines(t *testing.T) {
	for _, c := range []struct{ iperf, net string }{
		{"-s -p 6900", "net server -p 6900"},
		{"-c node3 -p 6900", "net client node3 -p 6900"},
		{"-s -B 127.0.0.1 -p6900 -1", "net server --listen 127.0.0.1 -p 6900 --once"},
		{"--client=node3 --port=6900 -t 30 -P 4 -R -l 1M -i 1 -J", "net client node3 --port 6900 -t 30 -P 4 -R -l 1M --format json"},
		{"-c node3 -d", "net client node3 --bidir"},
	} {
		got, err := Iperf(strings.Fields(c.iperf))
		if err != nil || !slices.Equal(got, strings.Fields(c.net)) {
			t.Errorf("iperf %s: %q, %v; want %s", c.iperf, got, err, c.net)
		}
	}
	for _, c := range []struct{ iperf, want string }{
		{"-p 6900", "give -s (server) or -c HOST"},
		{"-s -c node3", "choose one"},
		{"-c node3 -u", `"-u" is not supported`},
		{"-c node3 -i 2", "every second"},
		{"-c", "needs a value"},
	} {
		if _, err := Iperf(strings.Fields(c.iperf)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("iperf %s: %v; want an error saying %q", c.iperf, err, c.want)
		}
	}
}
