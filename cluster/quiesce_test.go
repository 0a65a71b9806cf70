package cluster

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// monitor keeps the OSD map's flags and the config-key store in memory,
// as the monitors do, and answers the commands a Quiescer sends.
type monitor struct {
	mu    sync.Mutex
	flags map[string]bool
	keys  map[string]string
}

func newMonitor(flags ...string) *monitor {
	m := &monitor{flags: map[string]bool{"sortbitwise": true}, keys: map[string]string{"mgr/dashboard/x": "y"}}
	for _, f := range flags {
		m.flags[f] = true
	}
	return m
}

func (m *monitor) Mgr([]byte) ([]byte, error)       { return nil, errors.New("no manager") }
func (m *monitor) Tell(int, []byte) ([]byte, error) { return nil, errors.New("no OSD") }

func (m *monitor) Mon(b []byte) ([]byte, error) {
	var cmd struct{ Prefix, Key, Val string }
	if err := json.Unmarshal(b, &cmd); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch cmd.Prefix {
	case "osd dump":
		var set []string
		for f := range m.flags {
			set = append(set, f)
		}
		sort.Strings(set)
		return json.Marshal(map[string]any{"epoch": 9, "flags": strings.Join(set, ",")})
	case "osd set":
		m.flags[cmd.Key] = true
	case "osd unset":
		delete(m.flags, cmd.Key)
	case "config-key set":
		m.keys[cmd.Key] = cmd.Val
	case "config-key get":
		v, ok := m.keys[cmd.Key]
		if !ok {
			return nil, errors.New("rados: ret=-2, No such file or directory")
		}
		return []byte(v), nil
	case "config-key rm":
		delete(m.keys, cmd.Key)
	case "config-key ls":
		var keys []string
		for k := range m.keys {
			keys = append(keys, k)
		}
		return json.Marshal(keys)
	default:
		return nil, errors.New("unknown command " + cmd.Prefix)
	}
	return nil, nil
}

func (m *monitor) scrubFlags() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var set []string
	for _, f := range QuiesceFlags {
		if m.flags[f] {
			set = append(set, f)
		}
	}
	return set
}

func (m *monitor) records() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for k := range m.keys {
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

func (p processes) quiescer(m *monitor, host string, pid int) *Quiescer {
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

func wantFlags(t *testing.T, m *monitor, when string, want ...string) {
	t.Helper()
	if got := m.scrubFlags(); !slices.Equal(got, want) {
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
	if recs := m.records(); len(recs) != 1 || !strings.HasPrefix(recs[0], "cephbench/quiesce/h1/100/") {
		t.Errorf("records during the run: %v", recs)
	}
	if err := r.Restore(); err != nil {
		t.Fatal(err)
	}
	wantFlags(t, m, "after the run")
	if recs := m.records(); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
	if m.keys["mgr/dashboard/x"] != "y" {
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
		if recs := m.records(); len(recs) != 0 {
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
	if recs := m.records(); len(recs) != 0 {
		t.Errorf("records left: %v (killed run's: %s)", recs, killed.key)
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
	if recs := m.records(); len(recs) != 2 {
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
	if recs := m.records(); !slices.Equal(recs, []string{other.key}) {
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
	if recs := m.records(); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

// refuse is a monitor that refuses to set one flag.
type refuse struct {
	*monitor
	flag string
}

func (r refuse) Mon(b []byte) ([]byte, error) {
	if strings.Contains(string(b), `"osd set"`) && strings.Contains(string(b), `"`+r.flag+`"`) {
		return nil, errors.New("rados: ret=-13, Permission denied")
	}
	return r.monitor.Mon(b)
}

func TestProcessAliveTellsAReusedPID(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if !processAlive(os.Getpid(), time.Now()) {
		t.Error("this process is not alive")
	}
	if processAlive(os.Getpid(), time.Now().Add(-24*time.Hour*365*30)) {
		t.Error("this process recorded itself before it began")
	}
	if processAlive(1<<30, time.Now()) {
		t.Error("a PID above pid_max is alive")
	}
}
