//go:build ceph

package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
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

// radosConn is a librados connection as a Conn, whose Close shuts it
// down.
type radosConn struct{ conn *rados.Conn }

// NewConn makes conn a Conn: Close shuts it down, so a connection a
// session also uses is given to a watch through Share.
func NewConn(conn *rados.Conn) Conn { return radosConn{conn} }

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
