//go:build ceph

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cephbench/cephbench/internal/cephtest"
)

// Runs on two client hosts saving to one network folder (a CephFS that
// each mounts with its own ceph-fuse client) keep every result.
func TestRunsOnTwoClientsOfOneNetworkFolderSaveEveryResult(t *testing.T) {
	_, bin := build(t)
	name := fmt.Sprintf("cbresults-%d", rand.Uint32())
	a, b := filepath.Join(cephtest.FuseMount(t), name), filepath.Join(cephtest.FuseMount(t), name)
	t.Cleanup(func() { _ = os.RemoveAll(a) })
	runsAtOnce(t, bin, []string{a, b}, 20)
}
