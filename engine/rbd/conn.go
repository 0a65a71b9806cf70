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
	conn, err := rados.ParseConn("rbd", q, "create")
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
	return t, nil
}
