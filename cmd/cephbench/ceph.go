//go:build ceph

package main

// The Ceph engines, in a build with Ceph's libraries (make, or
// go build -tags ceph,pacific).
import (
	_ "github.com/cephbench/cephbench/engine/cephfs"
	_ "github.com/cephbench/cephbench/engine/rados"
	_ "github.com/cephbench/cephbench/engine/rbd"
)
