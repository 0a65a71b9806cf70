//go:build ceph

package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/internal/peer/cephtext/cephtexttest"
)

// watchLines are the cluster watch's first lines in a summary of rados
// bench's or rbd bench's.
var watchLines = regexp.MustCompile(`(?m)^Cluster at rest: +.*\nWatched cluster: +\S`)

// CBT reads rados bench's summary by splitting each line from "Total time
// run" on at its one colon: every line of cephbench's, the cluster
// watch's included, keeps to that, for write, seq and rand; and so does
// every line rbd bench's summary adds to rbd bench's own.
func TestCephSummariesWatchedAreKeyValueLines(t *testing.T) {
	results := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		code, out, errOut := cephbench(t, context.Background(), append(args, "--results", results, "--cluster-interval", "1s")...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
		}
		if !watchLines.MatchString(out) {
			t.Errorf("%s: no lines of the cluster watch's:\n%s", strings.Join(args, " "), out)
		}
		return out
	}
	pool := cephPool(t)
	for _, mode := range []string{"write", "seq", "rand"} {
		out := run("rados", "bench", "-p", pool, "3", mode, "-b", "64K", "-t", "4", "--no-cleanup")
		if err := cephtexttest.KeyValueSummary(out, "Total time run"); err != nil {
			t.Errorf("rados bench %s: %v", mode, err)
		}
	}
	rbdPool := poolFor(t, "rbd")
	for _, args := range [][]string{
		{"--io-type", "write", "--create", "--size", "16M", "--keep"},
		{"--io-type", "readwrite", "--rw-mix-read", "70", "--io-pattern", "rand"},
	} {
		out := run(append([]string{"rbd", "bench", "-p", rbdPool, "img", "--io-total", "8M"}, args...)...)
		if err := cephtexttest.KeyValueSummary(out, "elapsed: ", "elapsed: ", "read_ops: ", "write_ops: "); err != nil {
			t.Errorf("rbd bench %s: %v", strings.Join(args, " "), err)
		}
	}
}
