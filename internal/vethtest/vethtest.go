// Package vethtest gives a test network namespaces of its own, each
// reached from the test's namespace through a veth pair whose link the
// test can cut as a pulled cable would be, and removes them when the test
// ends. It needs root and iproute2; Available skips a test without them.
package vethtest

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

// A namespace is netnsPrefix and a number k below subnets, unique on the
// machine while it exists (ip netns add refuses a name taken, which makes
// the number a lock); the test's end of its veth pair is linkPrefix and
// k, and its /30 is the k-th of 10.231.0.0/16: the test's end .1, the
// namespace's end (PeerLink) .2.
const (
	netnsPrefix = "cephbench-netns-"
	linkPrefix  = "cbveth"
	// PeerLink is the name of the namespace's end of the pair, inside it.
	PeerLink = "veth0"
	subnets  = 1 << 14
	// How many taken numbers are skipped before giving up, and how long
	// one ip command may take.
	tries     = 64
	ipTimeout = 10 * time.Second
)

// Link is a network namespace and the veth pair that reaches it.
type Link struct {
	Netns    string // the namespace, for ip netns exec
	HostLink string // the test's end of the pair, in the test's namespace
	HostAddr string // the test's end's address
	Addr     string // the namespace's end's address
}

// Available skips t unless it runs as root with an ip command whose
// netns works here.
func Available(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("no ip command (iproute2): %v", err)
	}
	probe := fmt.Sprintf("%sprobe-%d", netnsPrefix, os.Getpid())
	if out, err := IP("netns", "add", probe); err != nil {
		t.Skipf("ip netns does not work here: %s", out)
	}
	if out, err := IP("netns", "del", probe); err != nil {
		t.Fatalf("removing namespace %s: %s", probe, out)
	}
}

// New creates a namespace with its loopback up and a veth pair to it on
// a /30 of 10.231.0.0/16, both ends up. When t ends, whatever still runs
// in the namespace is killed (the test started it all) and the namespace
// and the pair are removed. The machine's own interfaces are left alone.
func New(t testing.TB) *Link {
	t.Helper()
	for range tries {
		k := rand.IntN(subnets)
		ns := fmt.Sprintf("%s%d", netnsPrefix, k)
		if out, err := IP("netns", "add", ns); err != nil {
			if strings.Contains(out, "File exists") {
				continue // another test's
			}
			t.Fatalf("ip netns add: %s", out)
		}
		t.Cleanup(func() {
			// Processes whose peer went while the link was cut would
			// linger until TCP gives up.
			pids, _ := pidsIn(ns)
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			if out, err := IP("netns", "del", ns); err != nil {
				t.Errorf("removing namespace %s: %s", ns, out)
			}
		})
		link := fmt.Sprintf("%s%d", linkPrefix, k)
		if out, err := IP("link", "add", link, "type", "veth", "peer", "name", PeerLink, "netns", ns); err != nil {
			if strings.Contains(out, "File exists") {
				continue // left by a test that was killed; its namespace went
			}
			t.Fatalf("creating veth %s: %s", link, out)
		}
		t.Cleanup(func() {
			// Gone already if the namespace went first; ip then says so.
			_, _ = IP("link", "del", link)
		})
		base := netip.AddrFrom4([4]byte{10, 231, byte(k >> 6), byte(k&63) << 2})
		ours, theirs := base.Next(), base.Next().Next()
		for _, args := range [][]string{
			{"addr", "add", ours.String() + "/30", "dev", link},
			{"link", "set", link, "up"},
			{"-n", ns, "addr", "add", theirs.String() + "/30", "dev", PeerLink},
			{"-n", ns, "link", "set", PeerLink, "up"},
			{"-n", ns, "link", "set", "lo", "up"},
		} {
			if out, err := IP(args...); err != nil {
				t.Fatalf("ip %s: %s", strings.Join(args, " "), out)
			}
		}
		return &Link{Netns: ns, HostLink: link, HostAddr: ours.String(), Addr: theirs.String()}
	}
	t.Fatalf("no free namespace number in %d tries", tries)
	return nil
}

// CutPeer takes down the namespace's end of the link: packets between the
// namespace and the test are dropped from then on, and neither side's
// connections are told. The namespace's address goes with its end, so
// what runs inside cannot reach it either. The test's route stays (marked
// linkdown), so nothing is sent elsewhere instead.
func (l *Link) CutPeer() error { return l.set("-n", l.Netns, "link", "set", PeerLink, "down") }

// CutHost takes down the test's end of the link: the test's namespace
// loses its route to the namespace, whose own end stays up with its
// address, so that what runs inside still reaches itself at Addr.
func (l *Link) CutHost() error { return l.set("link", "set", l.HostLink, "down") }

// Restore brings both ends of a cut link back up. Connections that
// outlived the cut carry on; the neighbour an address tried during the
// cut was found unreachable, which is forgotten.
func (l *Link) Restore() error {
	if err := errors.Join(l.set("link", "set", l.HostLink, "up"), l.set("-n", l.Netns, "link", "set", PeerLink, "up")); err != nil {
		return err
	}
	return l.set("neigh", "flush", "dev", l.HostLink)
}

func (l *Link) set(args ...string) error {
	if out, err := IP(args...); err != nil {
		return fmt.Errorf("ip %s: %s", strings.Join(args, " "), out)
	}
	return nil
}

// Pids returns the processes in the namespace.
func (l *Link) Pids() ([]int, error) { return pidsIn(l.Netns) }

func pidsIn(ns string) ([]int, error) {
	out, err := IP("netns", "pids", ns)
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

// IP runs ip with args and returns what it said, on one line; it gives up
// after 10 seconds.
func IP(args ...string) (string, error) {
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
