package sshtest

import (
	"testing"

	"github.com/cephbench/cephbench/internal/vethtest"
)

// StartIsolated is Start with each host's sshd in a network namespace that
// the test creates, reached from the test's own namespace through a veth
// pair on a /30 of 10.231.0.0/16 (listening on port 22 there), so that a
// host's link can be cut (Cut) as a pulled cable would be. The namespaces
// and veth pairs are removed when the test ends; the machine's own
// interfaces are left alone. It skips the test when not run as root or
// when ip netns does not work here.
func StartIsolated(t testing.TB, n int) *Fleet {
	t.Helper()
	vethtest.Available(t)
	return start(t, n, true, false)
}

// Cut takes down the host's end of its link, inside its namespace:
// packets between it and the test are dropped from then on, and neither
// side's connections are told. The route to it stays (marked linkdown),
// so nothing is sent elsewhere instead. Only for StartIsolated's hosts.
func (h *Host) Cut(t testing.TB) {
	t.Helper()
	if err := h.isolated(t).CutPeer(); err != nil {
		t.Fatalf("%s: %v", h.Alias, err)
	}
}

// Restore brings a cut link back up; connections that outlived the cut
// carry on. The address a connection tried during the cut was found
// unreachable and would be refused for a while: that is forgotten.
func (h *Host) Restore(t testing.TB) {
	t.Helper()
	if err := h.isolated(t).Restore(); err != nil {
		t.Fatalf("%s: %v", h.Alias, err)
	}
}

// Pids returns the processes in the host's namespace: its sshd, the
// sessions it forked and what they run. Only for StartIsolated's hosts.
func (h *Host) Pids(t testing.TB) []int {
	t.Helper()
	pids, err := h.isolated(t).Pids()
	if err != nil {
		t.Fatalf("%s: %v", h.Alias, err)
	}
	return pids
}

func (h *Host) isolated(t testing.TB) *vethtest.Link {
	t.Helper()
	if h.veth == nil {
		t.Fatalf("%s is not in a namespace of its own: only StartIsolated's hosts have a link to cut", h.Alias)
	}
	return h.veth
}

// isolate creates h's namespace and veth pair, with their addresses, and
// sets h.Addr to the namespace's end; both are removed when t ends.
func (h *Host) isolate(t testing.TB) {
	t.Helper()
	h.veth = vethtest.New(t)
	h.Addr = h.veth.Addr
}
