//go:build ceph

package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ceph/go-ceph/rados"
)

// Collect asks the monitors for the snapshot's commands over conn. It is
// safe to call while I/O runs on the same connection.
func Collect(conn *rados.Conn) (*Snapshot, error) {
	var o Outputs
	for _, c := range []struct {
		out *[]byte
		cmd map[string]string
	}{
		{&o.Status, map[string]string{"prefix": "status"}},
		{&o.DF, map[string]string{"prefix": "df"}},
		{&o.PoolsDetail, map[string]string{"prefix": "osd pool ls", "detail": "detail"}},
		{&o.OSDTree, map[string]string{"prefix": "osd tree"}},
		{&o.Versions, map[string]string{"prefix": "versions"}},
	} {
		c.cmd["format"] = "json"
		args, err := json.Marshal(c.cmd)
		if err != nil {
			return nil, err
		}
		buf, info, err := conn.MonCommand(args)
		if err != nil {
			return nil, fmt.Errorf("ceph %s: %v %s", c.cmd["prefix"], err, info)
		}
		*c.out = buf
	}
	return Parse(o, time.Now())
}

// radosConn is a watch's connection: its own, shut down once the watch's
// last command returned.
type radosConn struct{ conn *rados.Conn }

// NewConn makes conn, a connection made for a watch alone, its Conn.
func NewConn(conn *rados.Conn) Conn { return radosConn{conn} }

// Shared is a connection that a session and the watch of its run share,
// so that a run connects once: connecting costs a client tens of
// milliseconds of CPU (threads, authentication, the cluster's maps). Each
// holder releases its hold once, and the last shuts the connection down,
// so a watch's command still in flight when the session closes runs on.
// Safe for concurrent use.
type Shared struct {
	conn  *rados.Conn
	holds atomic.Int32
}

// Share makes conn shared, with one hold: its opener's.
func Share(conn *rados.Conn) *Shared {
	s := &Shared{conn: conn}
	s.holds.Store(1)
	return s
}

// Hold takes another hold on the connection, as a watch's Conn whose
// Close releases it. Only a holder may call it.
func (s *Shared) Hold() Conn {
	s.holds.Add(1)
	return sharedConn{radosConn{s.conn}, s}
}

// Release drops a hold; the last shuts the connection down.
func (s *Shared) Release() {
	if s.holds.Add(-1) == 0 {
		s.conn.Shutdown()
	}
}

// sharedConn is a watch's hold on a Shared connection.
type sharedConn struct {
	radosConn
	shared *Shared
}

func (c sharedConn) Close() { c.shared.Release() }

func (c radosConn) Mon(cmd []byte) ([]byte, error) {
	buf, info, err := c.conn.MonCommand(cmd)
	return answer(buf, info, err)
}

func (c radosConn) Mgr(cmd []byte) ([]byte, error) {
	buf, info, err := c.conn.MgrCommand([][]byte{cmd})
	return answer(buf, info, err)
}

func (c radosConn) Tell(osd int, cmd []byte) ([]byte, error) {
	buf, info, err := c.conn.OsdCommand(osd, [][]byte{cmd})
	return answer(buf, info, err)
}

func (c radosConn) Close() { c.conn.Shutdown() }

func answer(buf []byte, info string, err error) ([]byte, error) {
	switch {
	case errors.Is(err, rados.ErrNotFound):
		return nil, fmt.Errorf("%w: %v %s", ErrNotFound, err, info)
	case err != nil:
		return nil, fmt.Errorf("%v %s", err, info)
	}
	return buf, nil
}
