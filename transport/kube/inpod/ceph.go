package inpod

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteCephConfig writes, in dir, the ceph.conf and keyring that let
// client id reach the cluster whose monitors Rook lists in its
// rook-ceph-mon-endpoints ConfigMap ("a=10.0.0.1:6789,b=..."), as Rook's
// toolbox does: the monitors' addresses and the client's key, which
// comes from the Secret Rook's CephClient makes. It returns the
// ceph.conf's path.
func WriteCephConfig(dir, monEndpoints, id, key string) (string, error) {
	var mons []string
	for entry := range strings.SplitSeq(strings.TrimSpace(monEndpoints), ",") {
		if _, addr, ok := strings.Cut(entry, "="); ok {
			entry = addr
		}
		if entry = strings.TrimSpace(entry); entry != "" {
			mons = append(mons, entry)
		}
	}
	switch {
	case len(mons) == 0:
		return "", fmt.Errorf("no monitor in Rook's mon endpoints %q", monEndpoints)
	case id == "" || strings.ContainsAny(id, "[]\n"):
		return "", fmt.Errorf("ceph client id %q: want a CephClient's name", id)
	case strings.TrimSpace(key) == "":
		return "", fmt.Errorf("client.%s has no key: its Secret's %s is empty", id, id)
	}
	keyring := filepath.Join(dir, "keyring")
	conf := filepath.Join(dir, "ceph.conf")
	if err := os.WriteFile(keyring, fmt.Appendf(nil, "[client.%s]\n\tkey = %s\n", id, strings.TrimSpace(key)), 0o600); err != nil {
		return "", err
	}
	body := fmt.Sprintf("[global]\n\tmon_host = %s\n\tkeyring = %s\n\tlog_file = /dev/null\n", strings.Join(mons, ","), keyring)
	return conf, os.WriteFile(conf, []byte(body), 0o644)
}
