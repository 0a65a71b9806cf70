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
	t := Target{Image: image}
	if v, ok := q["create"]; ok {
		if t.Create, err = strconv.ParseBool(v[len(v)-1]); err != nil {
			return Target{}, engine.Usagef("rbd target: create=%q: want true or false", v[len(v)-1])
		}
		q.Del("create")
	}
	for key := range q {
		switch key {
		case "conf", "id", "name", "keyring", "cluster":
		default:
			return Target{}, engine.Usagef("rbd target: unknown option %q (known: conf, id, name, keyring, cluster, create)", key)
		}
	}
	conn := pool
	if len(q) > 0 {
		conn += "?" + q.Encode()
	}
	t.Conn, err = rados.ParseTarget(conn)
	return t, err
}
