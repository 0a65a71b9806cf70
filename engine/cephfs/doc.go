// Package cephfs is the engine for CephFS through libcephfs, with no kernel
// or FUSE mount, scheme "cephfs": cephfs://[FS]/PATH (the default file
// system when FS is empty), with the rados engine's connection options in
// the query (conf, id, name, keyring, cluster) and CEPH_CONF / CEPH_ARGS in
// the environment.
//
// PATH is a directory, created if missing; each worker has its own file in
// it, cephbench.N.dat, as with the file engine on a directory. Files
// cephbench creates are laid out with verifiable data, marked with the
// user.cephbench extended attribute, and removed afterwards with the
// directories it made, unless Keep. A file it did not create is read but
// never written without Force. Direct opens them with O_DIRECT, which
// makes libcephfs bypass its object cache.
//
// It needs cgo and libcephfs; it is built with the "ceph" build tag (and
// "pacific" for go-ceph on Ceph 16), as `make` does.
package cephfs
