package multihost

import (
	"context"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/spec"
)

// A job whose targets the hosts cannot share as asked (a directory in
// regions) is refused before any host is reached: the host here does not
// exist, and the error is the job's, not ssh's.
func TestACommandRefusesAnUnshareableJobBeforeReachingItsHosts(t *testing.T) {
	w := nullWorkload(0)
	w.Target = spec.Target{Scheme: "dirobj", Location: t.TempDir()}
	c := Command{Hosts: []string{"no-such-host.invalid"}, Remote: "cephbench", SharedTarget: true}
	err := c.Run(context.Background(), benchJob(w), frontend.IO{})
	if !engine.IsUsage(err) || !strings.Contains(err.Error(), "dirobj") {
		t.Errorf("a directory shared in regions: %v; want a usage error naming its engine", err)
	}
}
