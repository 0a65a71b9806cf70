// Package rados is the engine for Ceph RADOS pools, scheme "rados":
// rados://POOL, with connection options in the query (conf, id, name,
// keyring, cluster, run-name, hints) and CEPH_CONF / CEPH_ARGS in the
// environment.
//
// Objects are rados bench's: its names, its data and its metadata object,
// so that Ceph's rados bench reads and removes what cephbench writes, and
// the other way round. The data path drives librados aio from C++ (aio.cc,
// a backend of the queue core in internal/io/aioq): completions are
// timestamped in the callback and reaped in batches, so one connection
// keeps any queue depth in flight without an OS thread per op. Writes
// send the caller's memory, with one body for every buffer no read has
// touched (internal/io/aioq/bodies.hpp), so the messenger's CRC of it is
// computed once.
//
// Pool serves rados load-gen: objects the caller names and sizes, created
// exclusively, run as an ObjectSet session (engine.ObjectSet) on the same
// aio queues, and removed by name.
//
// It needs cgo and librados; it is built with the "ceph" build tag (and
// "pacific" for go-ceph on Ceph 16), as `make` does.
package rados
