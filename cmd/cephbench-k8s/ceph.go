//go:build ceph

package main

// The Ceph engines, whose targets a job's share is made for.
import (
	_ "github.com/cephbench/cephbench/engine/cephfs"
	_ "github.com/cephbench/cephbench/engine/rados"
	_ "github.com/cephbench/cephbench/engine/rbd"
)
