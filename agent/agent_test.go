package agent

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/cephbench/cephbench/engine/file"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// coordinator is a test's end of an agent served over pipes.
type coordinator struct {
	t      *testing.T
	stdin  *io.PipeWriter
	enc    *Encoder
	msgs   chan Message  // what the agent wrote, in order
	served chan struct{} // closed when Serve returned err
	err    error
}

// serveAgent starts Serve with opts over pipes and reads its hello.
func serveAgent(t *testing.T, opts Options) (*coordinator, *Hello) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &coordinator{t: t, stdin: inW, enc: NewEncoder(inW), msgs: make(chan Message, 1000), served: make(chan struct{})}
	go func() {
		c.err = Serve(context.Background(), inR, outW, opts)
		outW.Close()
		close(c.served)
	}()
	go func() {
		defer close(c.msgs)
		dec := NewDecoder(outR)
		for {
			m, err := dec.Decode()
			if err != nil {
				return
			}
			c.msgs <- m
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.served:
		case <-time.After(5 * time.Second):
			t.Error("the agent still serves 5 s after stdin closed")
		}
	})
	return c, c.next(time.Second).(*Hello)
}

// rest is what the agent writes until its stdout ends, within a bound.
func (c *coordinator) rest(within time.Duration) []Message {
	c.t.Helper()
	var msgs []Message
	timeout := time.After(within)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				return msgs
			}
			msgs = append(msgs, m)
		case <-timeout:
			c.t.Fatalf("the agent's stdout still open after %s", within)
		}
	}
}

// send writes m to the agent's stdin.
func (c *coordinator) send(m Message) {
	c.t.Helper()
	if err := c.enc.Encode(m); err != nil {
		c.t.Fatal(err)
	}
}

// next is the agent's next message, waited for at most within.
func (c *coordinator) next(within time.Duration) Message {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatal("the agent's stdout ended")
		}
		return m
	case <-time.After(within):
		c.t.Fatalf("no message from the agent in %s", within)
	}
	return nil
}

// job is what the agent sent for a job, from its first ready on.
type job struct {
	ready   []*Ready
	ticks   []*Tick
	results []*Result
	errs    []*Error
	tickAt  []time.Time // when each tick was read
}

// runJob sends m, answers each ready with a start at start() and
// collects what comes until done, within a bound.
func (c *coordinator) runJob(m *Job, start func() time.Time, within time.Duration) job {
	c.t.Helper()
	c.send(m)
	var j job
	deadline := time.Now().Add(within)
	for {
		switch m := c.next(time.Until(deadline)).(type) {
		case *Ready:
			j.ready = append(j.ready, m)
			c.send(&Start{At: start()})
		case *Tick:
			j.ticks = append(j.ticks, m)
			j.tickAt = append(j.tickAt, time.Now())
		case *Result:
			j.results = append(j.results, m)
		case *Error:
			j.errs = append(j.errs, m)
		case *Done:
			return j
		default:
			c.t.Fatalf("unexpected %s message during a job", m.Type())
		}
	}
}

// benchJob is a bench job of one step of w.
func benchJob(w spec.Workload) *Job {
	st := step.Step{Name: "s", Workload: w, Seed: 1, Save: "/coordinator/results/s.json", Front: step.Front{Command: "bench"}}
	return &Job{Job: frontend.Job{Command: "bench", Steps: []step.Step{st}}}
}

func nullLoad(d time.Duration) spec.Workload {
	return spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 50, BlockSize: 4096,
		Workers: 2, QueueDepth: 4, Duration: spec.Duration(d),
	}
}

// fileLoad is random writes to a file in dir, removed at the end.
func fileLoad(dir string, d time.Duration) spec.Workload {
	return spec.Workload{
		Target: spec.Target{Scheme: "file", Location: filepath.Join(dir, "f")}, Pattern: spec.Random, BlockSize: 4096,
		FileSize: 1 << 20, Workers: 1, QueueDepth: 1, Duration: spec.Duration(d),
	}
}

// wantNothingIn checks that what (a run, a job) left dir empty.
func wantNothingIn(t *testing.T, dir, what string) {
	t.Helper()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%s %v", what, entries)
	}
}

func TestHelloSaysWhoItIsAndHowItMeasures(t *testing.T) {
	_, hello := serveAgent(t, Options{Host: "client-3"})
	want := Hello{Version: result.Version, Protocol: 2, Histogram: metrics.StandardHistogram(), Host: "client-3"}
	if *hello != want {
		t.Errorf("hello %+v, want %+v", *hello, want)
	}
}

func TestAJobRunsFromItsStartTimeAndItsTicksAddUpToItsResult(t *testing.T) {
	saved := t.TempDir()
	c, _ := serveAgent(t, Options{Results: saved})
	var at time.Time
	j := c.runJob(benchJob(nullLoad(2*time.Second)), func() time.Time {
		at = time.Now().Add(300 * time.Millisecond)
		return at
	}, 10*time.Second)
	if len(j.ready) != 1 || j.ready[0].Step != 0 || len(j.results) != 1 || len(j.errs) != 0 {
		t.Fatalf("ready %v, %d results, errors %v; want one ready and one result of step 0, no error", j.ready, len(j.results), j.errs)
	}
	res := j.results[0].Result
	if res.Start.Before(at) {
		t.Errorf("the run started at %s, before its start time %s", res.Start, at)
	}
	if len(j.ticks) != 2 {
		t.Fatalf("%d ticks of a 2 s run, want 2", len(j.ticks))
	}
	if j.tickAt[0].Before(at.Add(time.Second)) {
		t.Errorf("a tick came %s after the start time, before the first second ended", j.tickAt[0].Sub(at))
	}
	added := map[string]int64{}
	for _, tk := range j.ticks {
		back, err := tk.Tick.Decode()
		if err != nil {
			t.Fatal(err)
		}
		for kind, h := range back.Histograms {
			added[kind] += h.TotalCount()
			if h.TotalCount() != back.Kinds[kind].Ops {
				t.Errorf("a tick's %s histogram holds %d ops, its count %d", kind, h.TotalCount(), back.Kinds[kind].Ops)
			}
		}
	}
	for _, kind := range []string{"read", "write"} {
		if ops := res.Ops[kind].Ops; ops == 0 || added[kind] != ops {
			t.Errorf("the ticks add up to %d %s ops, the result has %d", added[kind], kind, ops)
		}
	}
	if _, err := result.Load(filepath.Join(saved, "s.json")); err != nil {
		t.Errorf("the result is not saved in the agent's folder: %v", err)
	}
}

func TestClosingStdinStopsTheRunAndRemovesWhatItWrote(t *testing.T) {
	dir := t.TempDir()
	c, _ := serveAgent(t, Options{})
	c.send(benchJob(fileLoad(dir, time.Minute)))
	if _, ok := c.next(5 * time.Second).(*Ready); !ok {
		t.Fatal("no ready")
	}
	c.send(&Start{At: time.Now()})
	if _, ok := c.next(3 * time.Second).(*Tick); !ok {
		t.Fatal("no tick")
	}
	closed := time.Now()
	c.stdin.Close()
	var res *Result
	var stopped *Error
	// The bounds are hang checks: the job has a minute to run.
	for _, m := range c.rest(30 * time.Second) {
		switch m := m.(type) {
		case *Result:
			res = m
		case *Error:
			stopped = m
		}
	}
	<-c.served // its stdout ended after it returned
	if c.err != nil {
		t.Errorf("Serve: %v", c.err)
	}
	if took := time.Since(closed); took > 30*time.Second {
		t.Errorf("Serve ended %s after stdin closed, want it to end rather than run the job's minute", took)
	}
	if res == nil || !res.Result.Interrupted || res.Result.Ops["write"].Ops == 0 {
		t.Errorf("result %+v; want the interrupted run's writes", res)
	}
	if stopped == nil || stopped.Message != "interrupted: stdin closed" || stopped.Usage {
		t.Errorf("error %+v; want interrupted: stdin closed", stopped)
	}
	wantNothingIn(t, dir, "the stopped run left")
}

func TestAJobPastItsDeadlineDoesNotStart(t *testing.T) {
	dir := t.TempDir()
	c, _ := serveAgent(t, Options{})
	m := benchJob(fileLoad(dir, time.Second))
	m.Deadline = time.Now().Add(-time.Second)
	j := c.runJob(m, time.Now, 5*time.Second)
	if len(j.ready)+len(j.ticks)+len(j.results) != 0 || len(j.errs) != 1 || j.errs[0].Message != "not started: the job's deadline passed" {
		t.Errorf("ready %v, %d ticks, %d results, errors %v; want only the error that the deadline passed", j.ready, len(j.ticks), len(j.results), j.errs)
	}
	wantNothingIn(t, dir, "a job past its deadline wrote")
}

func TestTheDeadlineStopsARunningJob(t *testing.T) {
	dir := t.TempDir()
	c, _ := serveAgent(t, Options{})
	m := benchJob(fileLoad(dir, time.Minute))
	m.Deadline = time.Now().Add(1500 * time.Millisecond)
	j := c.runJob(m, time.Now, 5*time.Second)
	if len(j.results) != 1 || !j.results[0].Result.Interrupted || len(j.errs) != 1 || j.errs[0].Message != "interrupted: the job's deadline passed" {
		t.Fatalf("%d results, errors %v; want the interrupted result and that the deadline passed", len(j.results), j.errs)
	}
	// Far from the minute it would have run; the margin is for a loaded
	// machine.
	if end := j.results[0].Result.End; end.After(m.Deadline.Add(10 * time.Second)) {
		t.Errorf("the run ended %s after its deadline", end.Sub(m.Deadline))
	}
	wantNothingIn(t, dir, "the stopped run left")
}

func TestStopStopsTheJobAndTheAgentServesOn(t *testing.T) {
	c, _ := serveAgent(t, Options{})
	c.send(benchJob(nullLoad(time.Minute)))
	c.next(5 * time.Second) // ready
	c.send(&Start{At: time.Now()})
	c.next(3 * time.Second) // a tick
	c.send(&Stop{})
	var stopped *Error
	for {
		m := c.next(3 * time.Second)
		if e, ok := m.(*Error); ok {
			stopped = e
		}
		if _, ok := m.(*Done); ok {
			break
		}
	}
	if stopped == nil || stopped.Message != "interrupted: stopped by the coordinator" {
		t.Errorf("error %+v, want interrupted: stopped by the coordinator", stopped)
	}
	j := c.runJob(benchJob(nullLoad(time.Second)), time.Now, 5*time.Second)
	if len(j.results) != 1 || len(j.errs) != 0 {
		t.Errorf("the next job gave %d results, errors %v", len(j.results), j.errs)
	}
}

func TestABadJobIsAUsageErrorBeforeAnyIO(t *testing.T) {
	dir := t.TempDir()
	c, _ := serveAgent(t, Options{})
	bad := fileLoad(dir, time.Second)
	bad.ReadPercent = 150
	for name, m := range map[string]*Job{
		"bad workload":    benchJob(bad),
		"unknown command": {Job: frontend.Job{Command: "frobnicate"}},
		"net client":      {Job: frontend.Job{Command: "net client", Steps: []step.Step{{Name: "n", Front: step.Front{Command: "net client", Net: &step.Net{Host: "127.0.0.1"}}}}}},
	} {
		j := c.runJob(m, time.Now, 5*time.Second)
		if len(j.ready)+len(j.ticks)+len(j.results) != 0 || len(j.errs) != 1 || !j.errs[0].Usage {
			t.Errorf("%s: ready %v, %d ticks, %d results, errors %v; want one usage error alone", name, j.ready, len(j.ticks), len(j.results), j.errs)
		}
	}
	wantNothingIn(t, dir, "refused jobs wrote")
}

func TestAPingIsAnsweredWhileAStepRuns(t *testing.T) {
	ahead := time.Hour // the agent's clock
	c, _ := serveAgent(t, Options{Now: func() time.Time { return time.Now().Add(ahead) }})
	c.send(benchJob(nullLoad(time.Minute)))
	c.next(5 * time.Second) // ready
	// On the agent's clock, as the coordinator has measured it.
	c.send(&Start{At: time.Now().Add(ahead)})
	if _, ok := c.next(3 * time.Second).(*Tick); !ok {
		t.Fatal("no tick: the start time was not read on the agent's clock")
	}
	// The step runs a minute: a pong within half of it was answered
	// while the step ran, however loaded the machine.
	sent := time.Now()
	c.send(&Ping{Sent: sent})
	for {
		m := c.next(30 * time.Second)
		if p, ok := m.(*Pong); ok {
			if !p.Sent.Equal(sent) {
				t.Errorf("the pong echoes %s, the ping was sent %s", p.Sent, sent)
			}
			if off := time.Duration(p.AgentNs - sent.UnixNano()); off < ahead || off > ahead+time.Since(sent) {
				t.Errorf("the agent's clock read %s ahead, want an hour", off)
			}
			break
		}
		if _, ok := m.(*Tick); !ok {
			t.Fatalf("a %s message before the pong", m.Type())
		}
	}
}

func TestUnreadableInputEndsServe(t *testing.T) {
	c, _ := serveAgent(t, Options{})
	if _, err := io.WriteString(c.stdin, "{\"type\":\"ping\"}\nhello\n"); err != nil {
		t.Fatal(err)
	}
	c.next(time.Second) // the pong
	if e, ok := c.next(time.Second).(*Error); !ok || !strings.Contains(e.Message, "line 2") {
		t.Errorf("got %v, want an error naming line 2", e)
	}
	c.rest(time.Second)
	<-c.served
	if c.err == nil || errors.Is(c.err, io.EOF) {
		t.Errorf("Serve returned %v, want the input's error", c.err)
	}
}

// A coordinator that pings keeps its job running; one that goes silent
// (its link died: stdin stays open but nothing comes) is taken for lost
// after the job's Silence: the run stops, what it wrote is removed, and
// Serve returns saying why, without waiting on an out nobody reads.
func TestASilentCoordinatorStopsTheJobAndItsCleanup(t *testing.T) {
	dir := t.TempDir()
	c, _ := serveAgent(t, Options{})
	m := benchJob(fileLoad(dir, time.Minute))
	m.Silence = 2 * time.Second
	c.send(m)
	if _, ok := c.next(5 * time.Second).(*Ready); !ok {
		t.Fatal("no ready")
	}
	c.send(&Start{At: time.Now()})
	// Pings, several in each silence allowed, until the job has ticked
	// twice, however long that takes on a loaded machine: the job runs
	// on while its coordinator speaks.
	ticks := 0
	var silent time.Time // the coordinator's last word
	for end := time.Now().Add(30 * time.Second); ticks < 2 && time.Now().Before(end); {
		silent = time.Now()
		c.send(&Ping{Sent: silent})
		for wait := time.After(300 * time.Millisecond); ; {
			select {
			case msg := <-c.msgs:
				if _, ok := msg.(*Tick); ok {
					ticks++
				}
				continue
			case <-wait:
			}
			break
		}
	}
	if ticks < 2 {
		t.Fatalf("%d ticks in 30 s of a pinging coordinator: the job did not run on", ticks)
	}
	if entries, _ := os.ReadDir(dir); len(entries) == 0 {
		t.Fatal("the running job has no file")
	}
	select {
	case <-c.served:
	case <-time.After(m.Silence + 30*time.Second): // a hang check
		t.Fatalf("Serve still runs %s after the coordinator went silent", time.Since(silent))
	}
	took := time.Since(silent)
	t.Logf("stopped and cleaned up %s after the last word of the coordinator (silence allowed: %s)", took.Round(time.Millisecond), m.Silence)
	if took < m.Silence {
		t.Errorf("stopped %s after the last word, before the silence allowed", took)
	}
	if c.err == nil || !strings.Contains(c.err.Error(), "the coordinator said nothing for 2s") {
		t.Errorf("Serve returned %v; want that the coordinator said nothing for 2s", c.err)
	}
	wantNothingIn(t, dir, "the job of a lost coordinator left")
}

// The watch outlives the job that asked for it: an agent whose job ended
// while its coordinator was already gone ends too, rather than waiting
// for a next job that cannot come.
func TestASilentCoordinatorEndsAnIdleAgent(t *testing.T) {
	c, _ := serveAgent(t, Options{})
	// The job is over well within the silence allowed, on a loaded
	// machine too, and long enough that an agent timing the silence
	// from the job's end would end a second or more later than one
	// timing it from the coordinator's last word, the start.
	m := benchJob(nullLoad(time.Second))
	m.Silence = 6 * time.Second
	if j := c.runJob(m, time.Now, 5*time.Second); len(j.results) != 1 {
		t.Fatalf("%d results, errors %v; want the job's result", len(j.results), j.errs)
	}
	done := time.Now()
	select {
	case <-c.served:
	case <-time.After(2 * m.Silence):
		t.Fatalf("an idle agent still serves %s after its coordinator's last word", 2*m.Silence)
	}
	if c.err == nil || !strings.Contains(c.err.Error(), "the coordinator said nothing") {
		t.Errorf("Serve returned %v; want that the coordinator said nothing", c.err)
	}
	if took := time.Since(done); took > m.Silence {
		t.Errorf("the idle agent ended %s after its job; its coordinator was silent from before the job ended", took)
	}
}
