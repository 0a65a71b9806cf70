package multihost

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/spec"
)

// cuttable is a fake host's connection that can die as a network does:
// from the cut on, what the coordinator writes is lost and what the
// agent writes never arrives, and neither end is told.
type cuttable struct {
	cut     chan struct{}
	cutOnce sync.Once
	gone    chan struct{} // the test ended: reads may end
}

func newCuttable(t *testing.T) *cuttable {
	c := &cuttable{cut: make(chan struct{}), gone: make(chan struct{})}
	t.Cleanup(func() { close(c.gone) })
	return c
}

func (c *cuttable) cutNow() { c.cutOnce.Do(func() { close(c.cut) }) }

func (c *cuttable) isCut() bool {
	select {
	case <-c.cut:
		return true
	default:
		return false
	}
}

// wrap puts h's agent behind c.
func (c *cuttable) wrap(h Host) Host {
	h.In = &cutWriter{c: c, w: h.In}
	h.Out = &cutReader{c: c, r: h.Out}
	return h
}

type cutWriter struct {
	c *cuttable
	w io.WriteCloser
}

func (w *cutWriter) Write(p []byte) (int, error) {
	if w.c.isCut() {
		return len(p), nil // into a send buffer that never drains
	}
	return w.w.Write(p)
}

func (w *cutWriter) Close() error {
	if w.c.isCut() {
		return nil // the close never arrives either
	}
	return w.w.Close()
}

type cutReader struct {
	c *cuttable
	r io.Reader
}

// Read passes what the agent says until the cut; from then on it is
// taken off the agent's stdout and dropped (the agent's writes do not
// block, as they would not on a host whose kernel buffers them), and the
// reader hears nothing until the test ends.
func (r *cutReader) Read(p []byte) (int, error) {
	if !r.c.isCut() {
		n, err := r.r.Read(p)
		if !r.c.isCut() {
			return n, err
		}
	}
	io.Copy(io.Discard, r.r)
	<-r.c.gone
	return 0, io.EOF
}

// A host whose link dies (nothing comes from it, nothing reaches it, and
// no stream ends) is called lost within the rule of Options.Silence: the
// run stops on the others at once, keeps what they measured, and names
// the host; the lost host's agent, hearing no more pings, stops and
// removes what it wrote by itself.
func TestAHostWhoseLinkDiesIsCalledLostInTime(t *testing.T) {
	dir := t.TempDir()
	fakes := startAgents(t, 3, nil)
	hosts := hostsOf(fakes)
	link := newCuttable(t)
	hosts[1] = link.wrap(hosts[1])
	stopped := &stopWatch{w: hosts[0].In, at: make(chan time.Time, 1)}
	hosts[0].In = stopped
	w := spec.Workload{
		Target: spec.Target{Scheme: "dirobj", Location: dir}, Pattern: spec.Random, BlockSize: 4096, ObjectSize: 64 << 10,
		Objects: 16, Workers: 1, QueueDepth: 2, Duration: spec.Duration(time.Minute),
	}
	// Cut once the run is on: its first second in, and the next under way.
	cutAt := make(chan time.Time, 1)
	var cutOnce sync.Once
	ticks := func(metrics.Tick) {
		cutOnce.Do(func() {
			time.AfterFunc(500*time.Millisecond, func() { cutAt <- time.Now(); link.cutNow() })
		})
	}
	out, err := Run(context.Background(), benchJob(w), hosts, Options{Opened: func(int) metrics.Subscriber { return ticks }})
	ended := time.Now()
	if err == nil || !strings.Contains(err.Error(), "host h2") || !strings.Contains(err.Error(), "lost") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a dead link: %v; want one line saying h2 was lost", err)
	}
	var cut time.Time
	select {
	case cut = <-cutAt:
	default:
		t.Fatal("the run ended before the link was cut")
	}
	var detected time.Duration
	select {
	case at := <-stopped.at:
		detected = at.Sub(cut)
	default:
		t.Fatal("h1 was not stopped")
	}
	t.Logf("h2 called lost %s after its link died, the run over %s after (%v)", detected.Round(time.Millisecond), ended.Sub(cut).Round(time.Millisecond), err)
	// The rule: lost 1.5 to 2.25 s after. A host is never called lost
	// before it could have answered a ping, however loaded the machine;
	// the timers of a loaded machine can be seconds late, so the upper
	// bound only tells the silence's rule from the minute's run ending.
	if detected < time.Second || detected > 20*time.Second {
		t.Errorf("h2 called lost %s after its link died; want 1.5 to 2.25 s, and within 1 to 20 s", detected)
	}
	if len(out.Results) != 1 || !out.Results[0].Interrupted || len(out.Results[0].Hosts) != 2 || out.Results[0].Ops["write"].Ops == 0 {
		t.Fatalf("outcome %+v; want the partial result of h1 and h3", out)
	}
	for _, e := range mustReadDir(t, dir) {
		if !strings.Contains(e, "h2") {
			t.Errorf("%s left after the run: only the lost host's may be left while its agent winds down", e)
		}
	}

	if !fakes[1].ended(10 * time.Second) {
		t.Fatal("h2's agent still runs 10 s after its link died")
	}
	t.Logf("h2's agent ended %s after its link died", time.Since(cut).Round(time.Millisecond))
	if left := mustReadDir(t, dir); len(left) != 0 {
		t.Errorf("h2's agent left %v", left)
	}
}

// With GoOn, a host whose link dies is gone on without: the others run
// their whole step, and the run ends with them rather than waiting for a
// done the lost host can no longer send; the lost host's agent stops by
// itself.
func TestAHostWhoseLinkDiesWithGoOn(t *testing.T) {
	fakes := startAgents(t, 3, nil)
	hosts := hostsOf(fakes)
	link := newCuttable(t)
	hosts[1] = link.wrap(hosts[1])
	var cutOnce sync.Once
	ticks := func(metrics.Tick) {
		cutOnce.Do(func() { time.AfterFunc(500*time.Millisecond, link.cutNow) })
	}
	var lost []string // told from Run's loop, read once Run returned
	began := time.Now()
	out, err := Run(context.Background(), benchJob(nullWorkload(5*time.Second)), hosts, Options{
		GoOn: true, Lost: func(host string, _ error) { lost = append(lost, host) },
		Opened: func(int) metrics.Subscriber { return ticks },
	})
	if err != nil {
		t.Fatalf("a dead link with GoOn: %v; want the run to finish on the others", err)
	}
	// A run that waited for the lost host would never end: this is a
	// hang check, with room for a loaded machine's slow start.
	if took := time.Since(began); took > time.Minute {
		t.Errorf("the 5 s run ended %s after it began", took)
	}
	if len(lost) != 1 || lost[0] != "h2" {
		t.Errorf("lost %v; want h2", lost)
	}
	if m := out.Results[0]; m == nil || len(m.Hosts) != 2 || m.Interrupted || m.Ops["read"].Ops == 0 {
		t.Fatalf("result %+v; want h1's and h3's whole runs merged", m)
	}
	if !fakes[1].ended(10 * time.Second) {
		t.Fatal("h2's agent still runs 10 s after the run")
	}
}

// stopWatch says when the coordinator first sent a stop through it.
type stopWatch struct {
	w    io.WriteCloser
	at   chan time.Time
	once sync.Once
}

func (s *stopWatch) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), `{"type":"stop"`) {
		s.once.Do(func() { s.at <- time.Now() })
	}
	return s.w.Write(p)
}

func (s *stopWatch) Close() error { return s.w.Close() }

func mustReadDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// typesSent records the type of each message written through it.
type typesSent struct {
	w     io.WriteCloser
	mu    sync.Mutex
	lines []string
}

func (s *typesSent) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.lines = append(s.lines, string(p))
	s.mu.Unlock()
	return s.w.Write(p)
}

func (s *typesSent) Close() error { return s.w.Close() }

// Over a transport that cannot ping (a pod's log), none is sent and the
// agents are not asked to watch the coordinator, which could not keep
// them hearing; the run goes as ever.
func TestNoPingsOverATransportThatCannotPing(t *testing.T) {
	fakes := startAgents(t, 2, nil)
	hosts := hostsOf(fakes)
	sent := &typesSent{w: hosts[0].In}
	hosts[0].In = sent
	_, err := Run(context.Background(), benchJob(nullWorkload(1500*time.Millisecond)), hosts, Options{UnmeasuredClocks: true})
	if err != nil {
		t.Fatal(err)
	}
	sent.mu.Lock()
	defer sent.mu.Unlock()
	for _, l := range sent.lines {
		if strings.HasPrefix(l, `{"type":"ping"`) || strings.HasPrefix(l, `{"type":"job"`) && strings.Contains(l, `"silence_ns"`) {
			t.Errorf("sent %.60s...; want no ping, and a job without silence_ns", l)
		}
	}
	if len(sent.lines) < 2 {
		t.Errorf("sent %d messages; want at least the job and the start", len(sent.lines))
	}
}
