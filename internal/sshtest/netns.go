package sshtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An isolated host's namespace is netnsPrefix and a number k below
// subnets, unique on the machine while it exists (ip netns add refuses a
// name taken, which makes the number a lock); the host end of its veth
// pair is linkPrefix and k, and its /30 is the k-th of 10.231.0.0/16: the
// host end .1, the namespace's end (peerLink) .2.
const (
	netnsPrefix = "cephbench-sshtest-"
	linkPrefix  = "cbssh"
	peerLink    = "veth0"
	subnets     = 1 << 14
	// How many taken numbers are skipped before giving up, and how long
	// one ip command may take.
	isolateTries = 64
	ipTimeout    = 10 * time.Second
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
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("no ip command (iproute2): %v", err)
	}
	probe := fmt.Sprintf("%sprobe-%d", netnsPrefix, os.Getpid())
	if out, err := ip("netns", "add", probe); err != nil {
		t.Skipf("ip netns does not work here: %s", out)
	}
	if out, err := ip("netns", "del", probe); err != nil {
		t.Fatalf("removing namespace %s: %s", probe, out)
	}
	return start(t, n, true)
}

// Cut takes down the host's end of its link, inside its namespace:
// packets between it and the test are dropped from then on, and neither
// side's connections are told. The route to it stays (marked linkdown),
// so nothing is sent elsewhere instead. Only for StartIsolated's hosts.
func (h *Host) Cut(t testing.TB) {
	t.Helper()
	h.setLink(t, "down")
}

// Restore brings a cut link back up; connections that outlived the cut
// carry on. The address a connection tried during the cut was found
// unreachable and would be refused for a while: that is forgotten.
func (h *Host) Restore(t testing.TB) {
	t.Helper()
	h.setLink(t, "up")
	if out, err := ip("neigh", "flush", "dev", h.link); err != nil {
		t.Fatalf("%s: forgetting its neighbours: %s", h.Alias, out)
	}
}

func (h *Host) setLink(t testing.TB, state string) {
	t.Helper()
	if h.netns == "" {
		t.Fatalf("%s is not in a namespace of its own: only StartIsolated's hosts have a link to cut", h.Alias)
	}
	if out, err := ip("-n", h.netns, "link", "set", peerLink, state); err != nil {
		t.Fatalf("%s: link %s: %s", h.Alias, state, out)
	}
}

// Pids returns the processes in the host's namespace: its sshd, the
// sessions it forked and what they run. Only for StartIsolated's hosts.
func (h *Host) Pids(t testing.TB) []int {
	t.Helper()
	if h.netns == "" {
		t.Fatalf("%s is not in a namespace of its own", h.Alias)
	}
	pids, err := namespacePids(h.netns)
	if err != nil {
		t.Fatalf("%s: %v", h.Alias, err)
	}
	return pids
}

func namespacePids(ns string) ([]int, error) {
	out, err := ip("netns", "pids", ns)
	if err != nil {
		return nil, fmt.Errorf("ip netns pids %s: %s", ns, out)
	}
	var pids []int
	for _, f := range strings.Fields(out) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("ip netns pids %s: %q", ns, out)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// isolate creates h's namespace and veth pair, with their addresses, and
// sets h.Addr to the namespace's end; both are removed when t ends.
func (h *Host) isolate(t testing.TB) {
	t.Helper()
	for range isolateTries {
		k := rand.IntN(subnets)
		ns := fmt.Sprintf("%s%d", netnsPrefix, k)
		if out, err := ip("netns", "add", ns); err != nil {
			if strings.Contains(out, "File exists") {
				continue // another test's
			}
			t.Fatalf("%s: ip netns add: %s", h.Alias, out)
		}
		t.Cleanup(func() {
			// Sessions whose client went while the link was cut would
			// linger until TCP gives up: everything the namespace still
			// runs was started by the test.
			pids, _ := namespacePids(ns)
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			if out, err := ip("netns", "del", ns); err != nil {
				t.Errorf("removing namespace %s: %s", ns, out)
			}
		})
		link := fmt.Sprintf("%s%d", linkPrefix, k)
		if out, err := ip("link", "add", link, "type", "veth", "peer", "name", peerLink, "netns", ns); err != nil {
			if strings.Contains(out, "File exists") {
				continue // left by a test that was killed; its namespace went
			}
			t.Fatalf("%s: creating veth %s: %s", h.Alias, link, out)
		}
		t.Cleanup(func() {
			// Gone already if the namespace went first; ip then says so.
			_, _ = ip("link", "del", link)
		})
		base := netip.AddrFrom4([4]byte{10, 231, byte(k >> 6), byte(k&63) << 2})
		ours, theirs := base.Next(), base.Next().Next()
		for _, args := range [][]string{
			{"addr", "add", ours.String() + "/30", "dev", link},
			{"link", "set", link, "up"},
			{"-n", ns, "addr", "add", theirs.String() + "/30", "dev", peerLink},
			{"-n", ns, "link", "set", peerLink, "up"},
			{"-n", ns, "link", "set", "lo", "up"},
		} {
			if out, err := ip(args...); err != nil {
				t.Fatalf("%s: ip %s: %s", h.Alias, strings.Join(args, " "), out)
			}
		}
		h.netns, h.link, h.Addr = ns, link, theirs.String()
		return
	}
	t.Fatalf("%s: no free namespace number in %d tries", h.Alias, isolateTries)
}

// ip runs ip with args and returns what it said, on one line.
func ip(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	said := strings.Join(strings.Fields(string(out)), " ")
	if err != nil && said == "" {
		said = err.Error()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		said = "timed out: " + said
	}
	return said, err
}
