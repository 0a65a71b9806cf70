//go:build ceph

package cephfs_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/ceph/go-ceph/cephfs"

	"github.com/cephbench/cephbench/engine/enginetest"
	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/spec"
)

// list names the entries of dir, none if it does not exist.
func list(t *testing.T, m *cephfs.MountInfo, dir string) []string {
	t.Helper()
	d, err := m.OpenDir(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	var names []string
	for {
		e, err := d.ReadDir()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Name() != "." && e.Name() != ".." {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// removeAll removes dir and what it holds, for the test's cleanup.
func removeAll(m *cephfs.MountInfo, dir string) {
	d, err := m.OpenDir(dir)
	if err != nil {
		return
	}
	for {
		e, err := d.ReadDir()
		if err != nil || e == nil {
			break
		}
		if e.Name() != "." && e.Name() != ".." {
			_ = m.Unlink(dir + "/" + e.Name())
		}
	}
	d.Close()
	_ = m.RemoveDir(dir)
}

func TestConformance(t *testing.T) {
	m := cephtest.MountCephFS(t)
	enginetest.Run(t, enginetest.Config{
		NewTarget: func(t *testing.T) spec.Target {
			dir := fmt.Sprintf("/cbtest-%d", rand.Uint32())
			t.Cleanup(func() { removeAll(m, dir) })
			return spec.Target{Scheme: "cephfs", Location: dir}
		},
		Persistent: true,
		Leftovers: func(t *testing.T, target spec.Target) []string {
			return list(t, m, target.Location)
		},
		Plant: func(t *testing.T, target spec.Target) string {
			if err := m.MakeDirs(target.Location, 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := m.Open(target.Location+"/precious.txt", os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte("not a benchmark's")); err != nil {
				t.Fatal(err)
			}
			f.Close()
			return "precious.txt"
		},
		BadTarget: func(t *testing.T) spec.Target {
			return spec.Target{Scheme: "cephfs", Location: "no-such-fs/bench"}
		},
	})
}
