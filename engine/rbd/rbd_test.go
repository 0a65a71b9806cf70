//go:build ceph

package rbd_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ceph/go-ceph/rados"
	"github.com/ceph/go-ceph/rbd"

	"github.com/cephbench/cephbench/engine/enginetest"
	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/spec"
)

// newPool makes an RBD pool that is removed when the test ends, and
// returns its name and an I/O context on it.
func newPool(t *testing.T, conn *rados.Conn) (string, *rados.IOContext) {
	t.Helper()
	name := cephtest.Pool(t, conn, "cbrbd")
	ioctx, err := conn.OpenIOContext(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ioctx.Destroy)
	if err := rbd.PoolInit(ioctx, true); err != nil {
		t.Fatalf("rbd pool init %s: %v", name, err)
	}
	return name, ioctx
}

func images(t *testing.T, ioctx *rados.IOContext) []string {
	t.Helper()
	names, err := rbd.GetImageNames(ioctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func TestConformance(t *testing.T) {
	conn := cephtest.Cluster(t)
	pools := map[string]*rados.IOContext{}
	enginetest.Run(t, enginetest.Config{
		NewTarget: func(t *testing.T) spec.Target {
			name, ioctx := newPool(t, conn)
			pools[name] = ioctx
			return spec.Target{Scheme: "rbd", Location: name + "/bench?create=true"}
		},
		Persistent: true,
		Leftovers: func(t *testing.T, target spec.Target) []string {
			return images(t, pools[poolOf(target)])
		},
		Plant: func(t *testing.T, target spec.Target) string {
			if err := rbd.CreateImage(pools[poolOf(target)], "precious-image", 1<<20, rbd.NewRbdImageOptions()); err != nil {
				t.Fatal(err)
			}
			return "precious-image"
		},
		BadTarget: func(t *testing.T) spec.Target {
			return spec.Target{Scheme: "rbd", Location: "no-such-pool/bench?create=true"}
		},
	})
}

func poolOf(t spec.Target) string {
	pool, _, _ := strings.Cut(t.Location, "/")
	return pool
}
