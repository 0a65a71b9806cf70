package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testdata/watch holds the answers of a sandbox cluster (Ceph 16.2.15, 3
// BlueStore OSDs, CephFS): ceph status healthy (status-clean), while a PG
// deep scrubbed (status-deep-scrub), and, from another sandbox, with an
// OSD stopped (status-osd-down, as testdata/fuzz/FuzzParse/sandbox-osd-down);
// osd dump with every OSD up (osd-dump-clean) and with osd.2 marked down
// (osd-dump-osd-down); osd pool stats and osd perf during a rados bench
// write to pool cbwatch; fs ls.

// script is a cluster that answers each command, by its prefix, with the
// answer its list holds for the sample being taken (the last one after
// the list ends): a file of testdata/watch, "error: ..." for a failed
// command, or "raw: ..." for the answer itself. An OSD's answer is under
// "osd.N perf dump"; a script without "pg ls-by-pool" has pools with no
// PGs, whose OSDs are not asked.
type script struct {
	t       *testing.T
	answers map[string][]string
	sample  int
	mu      sync.Mutex
	sent    map[string]int // commands sent, by prefix
	closed  int
}

func (s *script) Mon(cmd []byte) ([]byte, error) { return s.answer(cmd) }
func (s *script) Mgr(cmd []byte) ([]byte, error) { return s.answer(cmd) }
func (s *script) Tell(osd int, cmd []byte) ([]byte, error) {
	return s.answer(cmd, fmt.Sprintf("osd.%d ", osd))
}

func (s *script) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed++
}

func (s *script) answer(cmd []byte, to ...string) ([]byte, error) {
	var c struct{ Prefix, Format string }
	if err := json.Unmarshal(cmd, &c); err != nil || c.Format != "json" {
		s.t.Errorf("command %s: not a JSON command asking for JSON", cmd)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent == nil {
		s.sent = map[string]int{}
	}
	s.sent[c.Prefix]++
	list := s.answers[strings.Join(to, "")+c.Prefix]
	if len(list) == 0 && c.Prefix == "pg ls-by-pool" {
		list = []string{"raw: []"}
	}
	if len(list) == 0 {
		return nil, errors.New("unknown command")
	}
	a := list[min(s.sample, len(list)-1)]
	switch {
	case a == "enoent":
		return nil, fmt.Errorf("%w: ret=-2", ErrNotFound)
	case strings.HasPrefix(a, "error: "):
		return nil, errors.New(strings.TrimPrefix(a, "error: "))
	case strings.HasPrefix(a, "raw: "):
		return []byte(strings.TrimPrefix(a, "raw: ")), nil
	}
	return readWatchData(s.t, a), nil
}

func readWatchData(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "watch", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// samples takes n samples of s's cluster, one a second, watching pool
// cbwatch.
func (s *script) samples(n int) []Sample {
	sm := newSampler(s, []string{"cbwatch"}, time.Second)
	var out []Sample
	for i := range n {
		s.sample = i
		out = append(out, sm.take(float64(i)))
	}
	return out
}

// healthy answers every command as a healthy cluster does under a write.
func healthy(t *testing.T) *script {
	return &script{t: t, answers: map[string][]string{
		"status": {"status-clean.json"}, "osd dump": {"osd-dump-clean.json"},
		"osd pool stats": {"pool-stats.json"}, "osd perf": {"osd-perf.json"},
	}}
}

func TestASampleHoldsPGStatesPoolRatesAndOSDLatency(t *testing.T) {
	s := healthy(t)
	samples := s.samples(3)
	first := samples[0]
	if first.Health != "HEALTH_OK" || first.PGStates["active+clean"] != 25 || first.Epoch != 14 {
		t.Errorf("status: health %q, PGs %v, epoch %d", first.Health, first.PGStates, first.Epoch)
	}
	if len(first.OSDs) != 3 || !first.OSDs[2].Up || !first.OSDs[2].In {
		t.Errorf("the first sample reads the OSD map: %+v", first.OSDs)
	}
	if samples[1].OSDs != nil || s.sent["osd dump"] != 1 {
		t.Errorf("the OSD map read %d times in 3 samples of one epoch; want once", s.sent["osd dump"])
	}
	if c := first.Client; c == nil || c.WriteBytes != poolWriteBytes || c.WriteOps != poolWriteOps {
		t.Errorf("client I/O of pool cbwatch: %+v; want %v B/s, %v op/s written", c, poolWriteBytes, poolWriteOps)
	}
	if len(first.OSDPerf) != 3 || first.OSDPerf[0].ID != 0 {
		t.Errorf("osd perf: %+v", first.OSDPerf)
	}
	if first.Sent["mon"] != 2 || samples[1].Sent["mon"] != 1 || samples[1].Sent["mgr"] != 2 {
		t.Errorf("commands sent: %v then %v; want status and osd dump, then status alone, and 2 to the manager", first.Sent, samples[1].Sent)
	}
	d := Summarize(samples)
	if !d.AtRest() || d.Samples != 3 || d.IntervalSeconds != 1 {
		t.Errorf("a healthy cluster: %+v", d)
	}
	// The cluster is named once, from the first sample.
	if samples[0].FSID != "6b14ed6d-3993-4840-ac52-e10bed0dc751" || samples[1].FSID != "" {
		t.Errorf("fsid in the samples: %q, %q; want in the first only", samples[0].FSID, samples[1].FSID)
	}
	d.Pools = []string{"cbwatch"}
	if got, want := strings.Join(d.Lines(), "\n"), "cluster at rest during the run (3 samples, every 1s)\nwatched cluster 6b14ed6d-3993-4840-ac52-e10bed0dc751, client I/O of pools cbwatch"; got != want {
		t.Errorf("lines %q; want %q", got, want)
	}
	// 3 status and 1 osd dump over 3 s; to the manager, 2 a sample
	// and the PG map once.
	if d.CommandsPerSecond["mon"] != 1.33 || d.CommandsPerSecond["mgr"] != 2.33 {
		t.Errorf("commands per second %v", d.CommandsPerSecond)
	}
}

// The figures pool-stats.json holds for pool cbwatch.
const poolWriteBytes, poolWriteOps = 230056984, 219

func TestAnOSDStoppedAndStartedIsEventsAtTheirTimes(t *testing.T) {
	s := healthy(t)
	s.answers["status"] = []string{"status-clean.json", "status-clean.json", "status-osd-down.json", "status-osd-down.json", "status-clean.json"}
	s.answers["osd dump"] = []string{"osd-dump-clean.json", "osd-dump-clean.json", "osd-dump-osd-down.json", "osd-dump-osd-down.json", "osd-dump-clean.json"}
	d := Summarize(s.samples(5))
	var got []string
	for _, e := range d.Events {
		got = append(got, e.String())
	}
	want := []string{
		"osd.2 down at 2 s",
		"health check OSD_DOWN raised at 2 s (1 osds down)",
		"health check PG_DEGRADED raised at 2 s (" + downStatus(t).Health.Checks["PG_DEGRADED"].Summary.Message + ")",
		"degraded on 18 PGs from 2 s to 3 s",
		"osd.2 up at 4 s",
		"health check OSD_DOWN cleared at 4 s",
		"health check PG_DEGRADED cleared at 4 s",
	}
	if strings.Join(got, "\n") != strings.Join(sortedLike(want, got), "\n") {
		t.Errorf("events:\n%s\nwant (in any order at one time):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d.AtRest() || !strings.HasPrefix(d.Lines()[0], "cluster NOT AT REST during the run: ") {
		t.Errorf("line %q", d.Lines())
	}
}

func downStatus(t *testing.T) *Status {
	st, err := ParseStatus(readWatchData(t, "status-osd-down.json"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// sortedLike returns want if it holds the same lines as got, got
// otherwise: events at one time come in no promised order.
func sortedLike(want, got []string) []string {
	seen := map[string]int{}
	for _, w := range want {
		seen[w]++
	}
	for _, g := range got {
		seen[g]--
	}
	for _, n := range seen {
		if n != 0 {
			return want
		}
	}
	return got
}

func TestADeepScrubIsASpanWithTheMostPGsSeen(t *testing.T) {
	s := healthy(t)
	s.answers["status"] = []string{"status-clean.json", "status-deep-scrub.json", "status-deep-scrub.json", "error: timed out", "status-deep-scrub.json", "status-clean.json"}
	d := Summarize(s.samples(6))
	if len(d.Events) != 1 {
		t.Fatalf("events %v; want the deep scrub alone", d.Events)
	}
	e := d.Events[0]
	if e.What != "deep scrub" || e.At != 1 || e.Until != 4 || e.PGs != deepScrubbing {
		t.Errorf("event %+v; want deep scrub on %d PGs from 1 s to 4 s (a status not read does not end it)", e, deepScrubbing)
	}
	if len(d.Problems) != 1 || d.Problems[0] != "ceph status: timed out" {
		t.Errorf("problems %q", d.Problems)
	}
}

// PGs deep scrubbing in status-deep-scrub.json.
const deepScrubbing = 1

func TestChecksAboutFlagsAndSchedulesLeaveARunAtRest(t *testing.T) {
	s := healthy(t)
	var st map[string]any
	if err := json.Unmarshal(readWatchData(t, "status-clean.json"), &st); err != nil {
		t.Fatal(err)
	}
	st["health"] = map[string]any{"status": "HEALTH_WARN", "checks": map[string]any{
		"OSDMAP_FLAGS":         map[string]any{"severity": "HEALTH_WARN", "summary": map[string]any{"message": "noscrub flag(s) set"}},
		"PG_NOT_DEEP_SCRUBBED": map[string]any{"severity": "HEALTH_WARN", "summary": map[string]any{"message": "1 pgs not deep-scrubbed in time"}},
	}}
	flagged, _ := json.Marshal(st)
	s.answers["status"] = []string{"status-clean.json", "raw: " + string(flagged), "status-clean.json"}
	if d := Summarize(s.samples(3)); !d.AtRest() {
		t.Errorf("events %v; want none for OSDMAP_FLAGS and PG_NOT_DEEP_SCRUBBED", d.Events)
	}
}

func TestACommandThatFailsIsAProblemNotedOnce(t *testing.T) {
	s := healthy(t)
	s.answers["osd perf"] = []string{"error: (95) Operation not supported"}
	s.answers["osd pool stats"] = []string{"pool-stats.json", "raw: {not json"}
	samples := s.samples(4)
	d := Summarize(samples)
	want := []string{"ceph osd perf: (95) Operation not supported", "ceph osd pool stats: invalid character 'n' looking for beginning of object key string"}
	if strings.Join(d.Problems, "|") != strings.Join(want, "|") {
		t.Errorf("problems %q; want %q", d.Problems, want)
	}
	if samples[3].Client != nil || samples[0].Client == nil {
		t.Errorf("pool rates: %v, then %v; want read, then not", samples[0].Client, samples[3].Client)
	}
	lines := d.Lines()
	if len(lines) != 3 || lines[2] != "the cluster watch could not read: "+strings.Join(want, "; ") || !d.AtRest() {
		t.Errorf("lines %q", lines)
	}
}

func TestEventWording(t *testing.T) {
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{What: "deep scrub", At: 12.04, Until: 31, PGs: 4}, "deep scrub on 4 PGs from 12 s to 31 s"},
		{Event{What: "recovery", At: 7.5, Until: 7.5, PGs: 1}, "recovery on 1 PG at 7.5 s"},
		{Event{What: "osd.2 down", At: 40}, "osd.2 down at 40 s"},
		{Event{What: "health check OSD_DOWN raised", At: 7, Detail: "1 osds down"}, "health check OSD_DOWN raised at 7 s (1 osds down)"},
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
	d := &During{Samples: 20, IntervalSeconds: 1, Events: []Event{{What: "deep scrub", At: 7, Until: 11, PGs: 2}, {What: "osd.2 down", At: 40}}}
	if got := d.Lines()[0]; got != "cluster NOT AT REST during the run: deep scrub on 2 PGs from 7 s to 11 s; osd.2 down at 40 s" {
		t.Errorf("line %q", got)
	}
	if got := (&During{}).Lines()[0]; got != "the cluster could not be watched during the run" {
		t.Errorf("no samples: %q", got)
	}
	if got := (&During{Samples: 3, Unread: 3}).Lines()[0]; got != "the cluster could not be watched during the run" {
		t.Errorf("no status read: %q", got)
	}
	if got := (&During{Samples: 3, Unread: 1, IntervalSeconds: 1}).Lines()[0]; got != "cluster at rest during the run (3 samples, every 1s, 1 of them unread)" {
		t.Errorf("a status not read: %q", got)
	}
}

// A watch samples until stopped, hands no sample to its sink after Stop,
// and closes its connection once, after its last command.
func TestAWatchClosesItsConnectionAfterItsLastCommand(t *testing.T) {
	s := healthy(t)
	var mu sync.Mutex
	var sunk int
	stopped := false
	w := StartWatch(s, []string{"cbwatch"}, 10*time.Millisecond, func(Sample) {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			t.Error("a sample reached the sink after Stop")
		}
		sunk++
	})
	time.Sleep(100 * time.Millisecond)
	d := w.Stop()
	mu.Lock()
	stopped = true
	if d.Samples == 0 || d.Samples != sunk {
		t.Errorf("%d samples, %d sunk", d.Samples, sunk)
	}
	mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed == 1 {
			break
		}
		if closed > 1 || time.Now().After(deadline) {
			t.Fatalf("the connection closed %d times", closed)
		}
	}
}

func TestFSPoolsAreTheFileSystemsMetadataAndDataPools(t *testing.T) {
	fs := readWatchData(t, "fs-ls.json")
	pools, err := FSPools(fs, "")
	if err != nil || strings.Join(pools, ",") != fsPools {
		t.Errorf("pools %v, %v; want %s", pools, err, fsPools)
	}
	if _, err := FSPools(fs, "nosuchfs"); err == nil {
		t.Error("a file system that does not exist has pools")
	}
}

// The pools fs-ls.json names.
const fsPools = "cephfs_metadata,cephfs_data"
