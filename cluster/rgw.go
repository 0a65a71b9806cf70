package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNotFound is wrapped by a Conn's command errors when the cluster
// answered that what the command names (a pool) does not exist: ENOENT.
var ErrNotFound = errors.New("not found")

// RGWPools names the pools the objects of the RGW zones on a cluster go
// to, from `osd pool ls detail -f json`: for each zone (ZONE of a pool
// ZONE.rgw.* whose application is rgw), ZONE.rgw.buckets.data and
// ZONE.rgw.buckets.index, in name order. They are named whether they
// exist yet or not: RGW makes them with a zone's first bucket and first
// object, which may be the run's own. A cluster without RGW pools yields
// none.
func RGWPools(poolsDetail []byte) ([]string, error) {
	var pools []struct {
		Name string                     `json:"pool_name"`
		Apps map[string]json.RawMessage `json:"application_metadata"`
	}
	if err := json.Unmarshal(poolsDetail, &pools); err != nil {
		return nil, fmt.Errorf("ceph osd pool ls detail: %w", err)
	}
	var out []string
	for _, p := range pools {
		zone, _, ok := strings.Cut(p.Name, ".rgw.")
		if _, rgw := p.Apps["rgw"]; !ok || !rgw || zone == "" {
			continue
		}
		for _, name := range []string{zone + ".rgw.buckets.data", zone + ".rgw.buckets.index"} {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// FindConfig says where librados finds this host's Ceph configuration
// for the cluster named "ceph", as `ceph` would: CEPH_CONF, CEPH_ARGS
// (which may name a file or the monitors), then ceph.conf in /etc/ceph,
// ~/.ceph and the working directory; false when there is none. getenv
// reads the environment and exists tells whether a file exists.
func FindConfig(getenv func(string) string, exists func(string) bool) (string, bool) {
	if c := getenv("CEPH_CONF"); c != "" {
		return "CEPH_CONF=" + c, true
	}
	if a := strings.TrimSpace(getenv("CEPH_ARGS")); a != "" {
		return "CEPH_ARGS=" + a, true
	}
	places := []string{"/etc/ceph/ceph.conf"}
	if home := getenv("HOME"); home != "" {
		places = append(places, filepath.Join(home, ".ceph", "ceph.conf"))
	}
	for _, p := range append(places, "ceph.conf") {
		if exists(p) {
			return p, true
		}
	}
	return "", false
}
