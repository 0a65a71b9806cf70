//go:build ceph

package rbd

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/rados"
)

// Target is a parsed rbd:// location.
type Target struct {
	Conn   rados.Target // the connection options; Conn.Pool is the image's pool
	Image  string
	Create bool // create the image when it does not exist
	// Region and Regions, when Regions is set, confine the I/O to the
	// Region-th (from 0) of Regions equal parts of the image, in whole
	// blocks: one host's part of an image hosts share.
	Region, Regions int
}

// ParseTarget parses "POOL/IMAGE?conf=...&id=...&name=...&keyring=...&cluster=...&create=true".
func ParseTarget(location string) (Target, error) {
	path, query, _ := strings.Cut(location, "?")
	pool, image, ok := strings.Cut(strings.Trim(path, "/"), "/")
	if !ok || pool == "" || image == "" || strings.Contains(image, "/") {
		return Target{}, engine.Usagef("rbd target %q: want rbd://POOL/IMAGE", location)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return Target{}, engine.Usagef("rbd target %q: %v", location, err)
	}
	conn, err := rados.ParseConn("rbd", q, "create", "region")
	if err != nil {
		return Target{}, err
	}
	conn.Pool = pool
	t := Target{Conn: conn, Image: image}
	if q.Has("create") {
		if t.Create, err = strconv.ParseBool(q.Get("create")); err != nil {
			return Target{}, engine.Usagef("rbd target: create=%q: want true or false", q.Get("create"))
		}
	}
	if q.Has("region") {
		k, n, ok := strings.Cut(q.Get("region"), "/")
		t.Region, err = strconv.Atoi(k)
		if ok && err == nil {
			t.Regions, err = strconv.Atoi(n)
		}
		if !ok || err != nil || t.Regions < 1 || t.Region < 0 || t.Region >= t.Regions {
			return Target{}, engine.Usagef("rbd target: region=%q: want K/N, the K-th (from 0) of N parts of the image", q.Get("region"))
		}
		if t.Create {
			return Target{}, engine.Usagef("rbd target: region= is a part of an image that exists: it cannot be created (create=true)")
		}
	}
	return t, nil
}
