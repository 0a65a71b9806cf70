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

// Client is a connection to m whose commands each wait, before they are
// sent, until before returns: a test that blocks in before pauses the
// client between two commands and lets other clients go on, to drive
// several clients through one interleaving of their commands.
type Client struct {
	m      *Monitor
	before func(cmd string)
}

// Client returns a connection to m that calls before with each command
// it is about to send, as its prefix and key, space-separated.
func (m *Monitor) Client(before func(cmd string)) *Client {
	return &Client{m: m, before: before}
}

// Mon sends cmd, a JSON command, to the monitors, once before returns.
func (c *Client) Mon(cmd []byte) ([]byte, error) {
	c.before(describe(cmd))
	return c.m.Mon(cmd)
}

// Mgr sends cmd, a JSON command, to the managers, once before returns.
func (c *Client) Mgr(cmd []byte) ([]byte, error) {
	c.before(describe(cmd))
	return c.m.Mgr(cmd)
}

// Tell sends cmd, a JSON command, to OSD osd, once before returns.
func (c *Client) Tell(osd int, cmd []byte) ([]byte, error) {
	c.before(fmt.Sprintf("osd.%d %s", osd, describe(cmd)))
	return c.m.Tell(osd, cmd)
}

// Close counts m's connection closed.
func (c *Client) Close() { c.m.Close() }

// describe is a JSON command's prefix and key; an undecodable command
// is itself, for m to refuse.
func describe(b []byte) string {
	var cmd struct{ Prefix, Key string }
	if err := json.Unmarshal(b, &cmd); err != nil {
		return string(b)
	}
	return strings.TrimSpace(cmd.Prefix + " " + cmd.Key)
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
