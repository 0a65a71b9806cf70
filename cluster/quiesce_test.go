package cluster

import (
	"errors"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/cluster/clustertest"
)

// newMonitor is a cluster with the flags an operator set (and
// sortbitwise) and a config key of another module's.
func newMonitor(flags ...string) *clustertest.Monitor {
	m := clustertest.New(append([]string{"sortbitwise"}, flags...)...)
	m.SetKey("mgr/dashboard/x", "y")
	return m
}

// scrubFlags are the scrub flags m's OSD map has set.
func scrubFlags(m *clustertest.Monitor) []string {
	var set []string
	for _, f := range QuiesceFlags {
		if slices.Contains(m.Flags(), f) {
			set = append(set, f)
		}
	}
	return set
}

// records are the config keys of m that record a run's flags, sorted.
func records(m *clustertest.Monitor) []string {
	var keys []string
	for k := range m.Keys() {
		if strings.HasPrefix(k, quiescePrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// processes stands for the processes of the hosts: a run's process is
// alive until killed.
type processes map[int]bool

func (p processes) quiescer(m Commands, host string, pid int) *Quiescer {
	p[pid] = true
	return &Quiescer{cmds: m, host: host, pid: pid, now: time.Now,
		alive: func(pid int, _ time.Time) bool { return p[pid] }}
}

func mustQuiesce(t *testing.T, q *Quiescer) *Quiesce {
	t.Helper()
	r, err := q.Quiesce()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantFlags(t *testing.T, m *clustertest.Monitor, when string, want ...string) {
	t.Helper()
	if got := scrubFlags(m); !slices.Equal(got, want) {
		t.Errorf("%s: scrub flags %v, want %v", when, got, want)
	}
}

func TestQuiesceSetsTheFlagsForTheRunAndClearsThem(t *testing.T) {
	m, procs := newMonitor(), processes{}
	r := mustQuiesce(t, procs.quiescer(m, "h1", 100))
	wantFlags(t, m, "during the run", "noscrub", "nodeep-scrub")
	if got := r.Quiesced.Line(); got != "--quiesce set noscrub, nodeep-scrub for the run" {
		t.Errorf("line %q", got)
	}
	if recs := records(m); len(recs) != 1 || !strings.HasPrefix(recs[0], "cephbench/quiesce/h1/100/") {
		t.Errorf("records during the run: %v", recs)
	}
	if err := r.Restore(); err != nil {
		t.Fatal(err)
	}
	wantFlags(t, m, "after the run")
	if recs := records(m); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
	if m.Keys()["mgr/dashboard/x"] != "y" {
		t.Error("another config key was touched")
	}
}

func TestAnOperatorsFlagStays(t *testing.T) {
	m, procs := newMonitor("noscrub"), processes{}
	r := mustQuiesce(t, procs.quiescer(m, "h1", 100))
	if r.Set[0] != "nodeep-scrub" || len(r.Set) != 1 || r.AlreadySet[0] != "noscrub" {
		t.Errorf("quiesced %+v", r.Quiesced)
	}
	if got := r.Quiesced.Line(); got != "--quiesce set nodeep-scrub for the run (noscrub was already set)" {
		t.Errorf("line %q", got)
	}
	if err := r.Restore(); err != nil {
		t.Fatal(err)
	}
	wantFlags(t, m, "after the run", "noscrub")

	m = newMonitor("noscrub", "nodeep-scrub")
	r = mustQuiesce(t, procs.quiescer(m, "h1", 101))
	if got := r.Quiesced.Line(); got != "--quiesce: noscrub, nodeep-scrub were already set" {
		t.Errorf("line %q", got)
	}
	if err := r.Restore(); err != nil {
		t.Fatal(err)
	}
	wantFlags(t, m, "after a run that found both set", "noscrub", "nodeep-scrub")
}

// The first run to start sets the flags; when it ends first, the second
// run, still running, keeps them, and clears them when it ends.
func TestTheLastRunClearsTheFlags(t *testing.T) {
	for _, hosts := range [][2]string{{"h1", "h1"}, {"h1", "h2"}} {
		m, procs := newMonitor(), processes{}
		first := mustQuiesce(t, procs.quiescer(m, hosts[0], 100))
		second := mustQuiesce(t, procs.quiescer(m, hosts[1], 200))
		if len(second.Set) != 0 {
			t.Errorf("%v: the second run set %v", hosts, second.Set)
		}
		if err := first.Restore(); err != nil {
			t.Fatal(err)
		}
		wantFlags(t, m, "after the first run, the second still running", "noscrub", "nodeep-scrub")
		if err := second.Restore(); err != nil {
			t.Fatal(err)
		}
		wantFlags(t, m, "after both runs")
		if recs := records(m); len(recs) != 0 {
			t.Errorf("%v: records left: %v", hosts, recs)
		}
	}
}

func TestReleaseDeadClearsOnlyAKilledRunOfThisHost(t *testing.T) {
	m, procs := newMonitor(), processes{}
	killed := mustQuiesce(t, procs.quiescer(m, "h1", 100))
	procs[100] = false
	cleanup := procs.quiescer(m, "h1", 300)
	if n, err := cleanup.ReleaseDead(); n != 1 || err != nil {
		t.Fatalf("released %d, %v", n, err)
	}
	wantFlags(t, m, "after cleanup")
	if recs := records(m); len(recs) != 0 {
		t.Errorf("records left: %v (killed run's: %s)", recs, killed.key)
	}
}

// A run killed after it set a flag but before it marked it set again
// (a drop of another run's may have removed the first mark) leaves the
// flag marked: cleanup clears it.
func TestReleaseDeadClearsTheFlagOfARunKilledAsItSetIt(t *testing.T) {
	m, procs := newMonitor(), processes{}
	killed := procs.quiescer(m, "h1", 100)
	set := false
	killed.cmds = m.Client(func(cmd string) {
		if set && cmd == "config-key set "+flagPrefix+"noscrub" {
			runtime.Goexit()
		}
		set = set || cmd == "osd set noscrub"
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = killed.Quiesce()
	}()
	<-done
	procs[100] = false
	wantFlags(t, m, "after the kill", "noscrub")
	if n, err := procs.quiescer(m, "h1", 300).ReleaseDead(); n != 1 || err != nil {
		t.Fatalf("released %d, %v", n, err)
	}
	wantFlags(t, m, "after cleanup")
	for k := range m.Keys() {
		if strings.HasPrefix(k, "cephbench/") {
			t.Errorf("key %s left", k)
		}
	}
}

func TestReleaseDeadLeavesLiveRunsAndOtherHosts(t *testing.T) {
	m, procs := newMonitor(), processes{}
	live := mustQuiesce(t, procs.quiescer(m, "h1", 100))
	other := mustQuiesce(t, procs.quiescer(m, "h2", 100))
	if n, err := procs.quiescer(m, "h1", 300).ReleaseDead(); n != 0 || err != nil {
		t.Fatalf("released %d, %v", n, err)
	}
	wantFlags(t, m, "after cleanup beside live runs", "noscrub", "nodeep-scrub")
	if recs := records(m); len(recs) != 2 {
		t.Errorf("records %v, want the live run's and the other host's", recs)
	}

	// A killed run beside the other host's: its flags go to that run,
	// which clears them when it ends (h1 cannot tell whether h2's PID
	// 100 runs, and takes it to).
	procs[100] = false
	if n, err := procs.quiescer(m, "h1", 300).ReleaseDead(); n != 1 || err != nil {
		t.Fatalf("released %d, %v", n, err)
	}
	wantFlags(t, m, "after the killed run's release", "noscrub", "nodeep-scrub")
	if recs := records(m); !slices.Equal(recs, []string{other.key}) {
		t.Errorf("records %v, want %s (not %s)", recs, other.key, live.key)
	}
	if err := other.Restore(); err != nil {
		t.Fatal(err)
	}
	wantFlags(t, m, "after the other host's run")
}

func TestQuiesceUndoesWhatItDidWhenAFlagCannotBeSet(t *testing.T) {
	m := newMonitor()
	q := &Quiescer{cmds: refuse{m, "nodeep-scrub"}, host: "h1", pid: 1, now: time.Now, alive: func(int, time.Time) bool { return true }}
	if _, err := q.Quiesce(); err == nil || !strings.Contains(err.Error(), "osd set nodeep-scrub") {
		t.Fatalf("error %v, want one naming osd set nodeep-scrub", err)
	}
	wantFlags(t, m, "after the failure")
	if recs := records(m); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

// refuse is a monitor that refuses to set one flag.
type refuse struct {
	*clustertest.Monitor
	flag string
}

func (r refuse) Mon(b []byte) ([]byte, error) {
	if strings.Contains(string(b), `"osd set"`) && strings.Contains(string(b), `"`+r.flag+`"`) {
		return nil, errors.New("rados: ret=-13, Permission denied")
	}
	return r.Monitor.Mon(b)
}
