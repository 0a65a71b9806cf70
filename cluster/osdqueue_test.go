package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// perfDump is an OSD's answer to perf dump for op_before_dequeue_op_lat.
func perfDump(count int, sum float64) string {
	return fmt.Sprintf(`raw: {"osd":{"op_before_dequeue_op_lat":{"avgcount":%d,"sum":%g,"avgtime":0}}}`, count, sum)
}

// The OSDs of the watched pool are found in the PG map once; each
// sample then holds each one's mean queue latency since the sample
// before: osd.1 waited 20 ms an op, the others 0.5 ms; osd.3, of
// another pool, is not asked.
func TestASampleHoldsTheQueueLatencyOfThePoolsOSDs(t *testing.T) {
	s := healthy(t)
	s.answers["pg ls-by-pool"] = []string{`raw: {"pg_ready":true,"pg_stats":[{"pgid":"1.0","acting":[0,1]},{"pgid":"1.1","acting":[1,2]}]}`}
	s.answers["osd.0 perf dump"] = []string{perfDump(100, 1), perfDump(300, 1.1), perfDump(300, 1.1)}
	s.answers["osd.1 perf dump"] = []string{perfDump(100, 1), perfDump(300, 5), perfDump(500, 9)}
	s.answers["osd.2 perf dump"] = []string{perfDump(100, 1), perfDump(300, 1.1), perfDump(500, 1.2)}
	samples := s.samples(3)
	if len(samples[0].OSDQueue) != 0 {
		t.Errorf("the first sample has no counters to compare with: %+v", samples[0].OSDQueue)
	}
	got := fmt.Sprint(samples[1].OSDQueue, samples[2].OSDQueue)
	if want := "[{0 0.5} {1 20} {2 0.5}] [{1 20} {2 0.5}]"; got != want {
		t.Errorf("queue latency %s; want %s (osd.0 had no op in the last second)", got, want)
	}
	if s.sent["pg ls-by-pool"] != 1 || s.sent["perf dump"] != 9 || samples[2].Sent["osd"] != 3 {
		t.Errorf("sent %v, last sample %v; want the PG map once and 3 OSDs a sample", s.sent, samples[2].Sent)
	}
	if d := Summarize(samples); d.CommandsPerSecond["osd"] != 3 || len(d.Problems) != 0 {
		t.Errorf("commands per second %v, problems %q", d.CommandsPerSecond, d.Problems)
	}
}

// On a pool of 40 OSDs, a sample asks 32 of them, those with the most
// PGs first, then the others and the first again.
func TestOSDsAreAskedInTurn32ASample(t *testing.T) {
	s := healthy(t)
	var pgs []string
	for id := range 40 {
		pgs = append(pgs, fmt.Sprintf(`{"acting":[%d]}`, id))
	}
	pgs = append(pgs, `{"acting":[39]}`) // osd.39 holds 2 PGs: asked first
	s.answers["pg ls-by-pool"] = []string{"raw: [" + strings.Join(pgs, ",") + "]"}
	for id := range 40 {
		s.answers[fmt.Sprintf("osd.%d perf dump", id)] = []string{perfDump(10, 0.01)}
	}
	sm := newSampler(s, []string{"cbwatch"}, time.Second)
	osds, _ := sm.poolOSDs(&Sample{Sent: map[string]int{}})
	if len(osds) != 40 || osds[0] != 39 || osds[1] != 0 {
		t.Fatalf("OSDs in turn: %v", osds)
	}
	var sent []int
	for i := range 3 {
		sent = append(sent, sm.take(float64(i)).Sent["osd"])
	}
	if fmt.Sprint(sent) != "[32 32 32]" || len(sm.queues.last) != 40 {
		t.Errorf("OSDs asked a sample %v, OSDs read %d; want 32 a sample and all 40 read", sent, len(sm.queues.last))
	}
}

// blockedTell is a cluster whose OSD 1 does not answer until released.
type blockedTell struct {
	*script
	release chan struct{}
}

func (b *blockedTell) Tell(osd int, cmd []byte) ([]byte, error) {
	if osd == 1 {
		<-b.release
	}
	return b.script.Tell(osd, cmd)
}

// An OSD that does not answer delays its sample by the timeout, not
// more, and is a problem; the others' answers are kept; it is not asked
// again until its answer came.
func TestAnOSDThatDoesNotAnswerDoesNotHangTheWatch(t *testing.T) {
	s := healthy(t)
	s.answers["pg ls-by-pool"] = []string{`raw: [{"acting":[0,1]},{"acting":[2,0]}]`}
	for id := range 3 {
		s.answers[fmt.Sprintf("osd.%d perf dump", id)] = []string{perfDump(10, 0.01), perfDump(20, 0.03)}
	}
	b := &blockedTell{script: s, release: make(chan struct{})}
	sm := newSampler(b, []string{"cbwatch"}, time.Second)
	sm.queues.timeout = 100 * time.Millisecond
	first := sm.take(0)
	s.sample = 1
	second := sm.take(1)
	// osd.1, still not answering, is not asked again: the sample does
	// not wait for it.
	if second.Sent["osd"] != 2 {
		t.Errorf("the second sample asked %d OSDs; want osd.0 and osd.2 alone", second.Sent["osd"])
	}
	close(b.release)
	sm.queues.pending.Wait()
	if fmt.Sprint(second.OSDQueue) != "[{0 2} {2 2}]" {
		t.Errorf("queue latency %v; want osd.0 and osd.2 at 2 ms", second.OSDQueue)
	}
	if len(first.Problems) != 1 || !strings.Contains(first.Problems[0], "no answer within 100ms") {
		t.Errorf("problems %q", first.Problems)
	}
}
