// Package clustertest is a fake Ceph cluster for tests of what talks to
// one through cluster.Commands: its monitors keep the OSD map's flags and
// the config-key store as real ones do, and answer the other commands as
// a test scripts them.
package clustertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Answer answers a scripted command, the asked-th time (from 1) its
// prefix was sent.
type Answer func(asked int) ([]byte, error)

// Reply is an Answer that always gives body.
func Reply(body string) Answer {
	return func(int) ([]byte, error) { return []byte(body), nil }
}

// Monitor is a cluster's monitors, managers and OSDs, a cluster.Conn.
// Unless scripted, it answers as monitors do osd set and unset,
// config-key set, get, rm and ls, and osd dump (its flags, no OSDs); a
// command neither scripted nor one of those fails. Its methods may be
// called from several goroutines at once.
type Monitor struct {
	mu      sync.Mutex
	flags   map[string]bool
	keys    map[string]string
	answers map[string]Answer
	asked   map[string]int
	closed  int
}

// New returns a cluster whose OSD map has flags set and whose config-key
// store is empty.
func New(flags ...string) *Monitor {
	m := &Monitor{flags: map[string]bool{}, keys: map[string]string{}, answers: map[string]Answer{}, asked: map[string]int{}}
	for _, f := range flags {
		m.flags[f] = true
	}
	return m
}

// Script has m answer the commands with prefix (an OSD's: "osd.N " and
// its prefix) with answer, called without m's lock held, so that it may
// call m's methods. It returns m.
func (m *Monitor) Script(prefix string, answer Answer) *Monitor {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.answers[prefix] = answer
	return m
}

// Mon sends cmd, a JSON command, to the monitors.
func (m *Monitor) Mon(cmd []byte) ([]byte, error) { return m.answer("", cmd) }

// Mgr sends cmd, a JSON command, to the managers.
func (m *Monitor) Mgr(cmd []byte) ([]byte, error) { return m.answer("", cmd) }

// Tell sends cmd, a JSON command, to OSD osd.
func (m *Monitor) Tell(osd int, cmd []byte) ([]byte, error) {
	return m.answer(fmt.Sprintf("osd.%d ", osd), cmd)
}

// Close counts the connection closed.
func (m *Monitor) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed++
}

// Closed is how many times the connection was closed.
func (m *Monitor) Closed() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Asked is how many commands with prefix (an OSD's: "osd.N " and its
// prefix) were sent.
func (m *Monitor) Asked(prefix string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.asked[prefix]
}

// Flags are the OSD map's flags set, sorted.
func (m *Monitor) Flags() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.flags))
}

// Keys is a copy of the config-key store.
func (m *Monitor) Keys() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.keys)
}

// SetKey sets a config key, as an operator would.
func (m *Monitor) SetKey(key, val string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keys[key] = val
}

func (m *Monitor) answer(to string, b []byte) ([]byte, error) {
	var cmd struct{ Prefix, Key, Val string }
	if err := json.Unmarshal(b, &cmd); err != nil {
		return nil, err
	}
	m.mu.Lock()
	prefix := to + cmd.Prefix
	m.asked[prefix]++
	n, scripted := m.asked[prefix], m.answers[prefix]
	m.mu.Unlock()
	if scripted != nil {
		return scripted(n)
	}
	if to != "" {
		return nil, errors.New("no OSD answers " + cmd.Prefix)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.monitors(cmd.Prefix, cmd.Key, cmd.Val)
}

// monitors answers the commands the monitors keep state for.
func (m *Monitor) monitors(prefix, key, val string) ([]byte, error) {
	switch prefix {
	case "osd dump":
		set := slices.Sorted(maps.Keys(m.flags))
		return json.Marshal(map[string]any{"epoch": 1, "flags": strings.Join(set, ","), "osds": []any{}})
	case "osd set":
		m.flags[key] = true
	case "osd unset":
		delete(m.flags, key)
	case "config-key set":
		m.keys[key] = val
	case "config-key get":
		v, ok := m.keys[key]
		if !ok {
			return nil, errors.New("rados: ret=-2, No such file or directory")
		}
		return []byte(v), nil
	case "config-key rm":
		delete(m.keys, key)
	case "config-key ls":
		return json.Marshal(append([]string{}, slices.Sorted(maps.Keys(m.keys))...))
	default:
		return nil, errors.New("unknown command " + prefix)
	}
	return nil, nil
}
