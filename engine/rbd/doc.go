// Package rbd is the engine for Ceph RBD images, scheme "rbd":
// rbd://POOL/IMAGE, with the rados engine's connection options in the query
// (conf, id, name, keyring, cluster) and CEPH_CONF / CEPH_ARGS in the
// environment, plus create=true to create the image, of the workload's
// size, when it does not exist.
//
// It writes to an existing image, as rbd bench does, except one in use (it
// has watchers: mapped, or open in another client) or one that carries a
// filesystem or partition signature at its start; Force overrides both. It
// removes only images it created, unless Keep, and never resizes an image.
// An image it creates is laid out whole with verifiable data first (a
// never-written extent would be answered without touching an OSD), and
// verified reads are only of images it created.
// librbd's cache is on and in writeback from the first write, as the rbd
// tool and fio's rbd engine run it; Direct turns it off (fio's direct=1),
// so that every op reaches the OSDs.
//
// The data path drives librbd aio from C++ (backend.cc, a backend of the
// queue core in internal/io/aioq), so one image handle keeps any queue depth
// in flight without an OS thread per op, and writes hand librbd a body
// copied once rather than a copy per op (internal/io/aioq/bodies.hpp).
//
// It needs cgo, librados and librbd; it is built with the "ceph" build tag
// (and "pacific" for go-ceph on Ceph 16), as `make` does.
package rbd
