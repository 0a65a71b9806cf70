//go:build ceph

package rados

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ceph/go-ceph/rados"

	"github.com/cephbench/cephbench/engine"
)

// Target is a parsed rados:// location.
type Target struct {
	Pool    string
	RunName string // the metadata object's name; "" means rados bench's default
	Conf    string // ceph.conf path; "" means CEPH_CONF or the default search
	User    string // client id without "client." ("admin")
	Name    string // full entity name ("client.admin"); overrides User
	Keyring string
	Cluster string
	// NoHints leaves out the allocation hint rados bench sends with every
	// write (object size, write size, sequential, append-only,
	// immutable), which BlueStore uses to lay objects out.
	NoHints bool
	// Options are further Ceph options, set before connecting: some take
	// effect only then.
	Options map[string]string
}

// ParseTarget parses "POOL?conf=...&id=...&name=...&keyring=...&cluster=...&run-name=...&hints=false".
func ParseTarget(location string) (Target, error) {
	pool, query, _ := strings.Cut(location, "?")
	pool = strings.TrimSuffix(pool, "/")
	if pool == "" {
		return Target{}, engine.Usagef("rados target: no pool given (want rados://POOL)")
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return Target{}, engine.Usagef("rados target %q: %v", location, err)
	}
	t, err := ParseConn("rados", q, "run-name", "hints")
	if err != nil {
		return Target{}, err
	}
	t.Pool = pool
	if q.Has("run-name") {
		t.RunName = q.Get("run-name")
	}
	if q.Has("hints") {
		hints, err := strconv.ParseBool(q.Get("hints"))
		if err != nil {
			return Target{}, engine.Usagef("rados target: hints=%q: want true or false", q.Get("hints"))
		}
		t.NoHints = !hints
	}
	return t, nil
}

// ParseConn reads the connection options every Ceph target's query takes
// (conf, id, name, keyring, cluster) into a Target without a pool. The
// scheme's own options, named in own, are left for the caller; any other
// option is a usage error naming them all.
func ParseConn(scheme string, q url.Values, own ...string) (Target, error) {
	var t Target
	for key, vals := range q {
		v := vals[len(vals)-1]
		switch key {
		case "conf":
			t.Conf = v
		case "id":
			t.User = v
		case "name":
			t.Name = v
		case "keyring":
			t.Keyring = v
		case "cluster":
			t.Cluster = v
		default:
			if !slices.Contains(own, key) {
				known := append([]string{"conf", "id", "name", "keyring", "cluster"}, own...)
				return Target{}, engine.Usagef("%s target: unknown option %q (known: %s)", scheme, key, strings.Join(known, ", "))
			}
		}
	}
	return t, nil
}

// DefaultOpTimeout is librados' client-side op timeout when the workload
// sets none: an op on a pool that filled up, or on PGs that lost every
// OSD, then fails with ETIMEDOUT and is counted, instead of holding the
// run's end forever. It is twice the age at which Ceph reports slow ops.
const DefaultOpTimeout = 60 * time.Second

// Connect opens a connection to the cluster the target names, with
// opTimeout as librados' client-side op timeout (0: DefaultOpTimeout).
// Connecting gives up after connectTimeout.
func Connect(t Target, opTimeout time.Duration) (*rados.Conn, error) {
	var conn *rados.Conn
	var err error
	switch {
	case t.Name != "":
		cluster := t.Cluster
		if cluster == "" {
			cluster = "ceph"
		}
		conn, err = rados.NewConnWithClusterAndUser(cluster, t.Name)
	case t.User != "":
		conn, err = rados.NewConnWithUser(t.User)
	default:
		conn, err = rados.NewConn()
	}
	if err != nil {
		return nil, fmt.Errorf("ceph client: %w", err)
	}
	if t.Conf != "" {
		err = conn.ReadConfigFile(t.Conf)
	} else {
		err = conn.ReadDefaultConfigFile()
	}
	if err != nil {
		conn.Shutdown()
		return nil, engine.Usagef("reading the Ceph configuration (%s): %v", confName(t), err)
	}
	if err := conn.ParseDefaultConfigEnv(); err != nil {
		conn.Shutdown()
		return nil, engine.Usagef("CEPH_ARGS: %v", err)
	}
	opts := map[string]string{
		"client_mount_timeout": strconv.Itoa(int(connectTimeout.Seconds())),
		"rados_mon_op_timeout": strconv.Itoa(int(connectTimeout.Seconds())),
	}
	if opTimeout <= 0 {
		opTimeout = DefaultOpTimeout
	}
	opts["rados_osd_op_timeout"] = strconv.FormatFloat(opTimeout.Seconds(), 'f', -1, 64)
	if t.Keyring != "" {
		opts["keyring"] = t.Keyring
	}
	for k, v := range t.Options {
		opts[k] = v
	}
	for k, v := range opts {
		if err := conn.SetConfigOption(k, v); err != nil {
			conn.Shutdown()
			return nil, fmt.Errorf("ceph option %s=%s: %w", k, v, err)
		}
	}
	if err := conn.Connect(); err != nil {
		conn.Shutdown()
		return nil, fmt.Errorf("connecting to the Ceph cluster (%s): %w", confName(t), err)
	}
	return conn, nil
}

// connectTimeout bounds how long a missing or dead cluster can hold a run
// before it fails with a message.
const connectTimeout = 15 * time.Second

func confName(t Target) string {
	if t.Conf != "" {
		return t.Conf
	}
	return "CEPH_CONF or /etc/ceph/ceph.conf"
}

// ErrnoOf turns a go-ceph error into the syscall.Errno it carries, so
// results count failures by errno name (EIO, ETIMEDOUT, ENOSPC ...); an
// error without one is returned as it is.
func ErrnoOf(err error) error {
	if e := Errno(err); e != 0 {
		return e
	}
	return err
}

// Errno is the errno a go-ceph error carries (go-ceph's errors hold the
// negative return code of the C call), or 0 if it carries none.
func Errno(err error) syscall.Errno {
	var coded interface{ ErrorCode() int }
	if errors.As(err, &coded) {
		code := coded.ErrorCode()
		if code < 0 {
			code = -code
		}
		return syscall.Errno(code)
	}
	return 0
}
