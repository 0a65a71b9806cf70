package multihost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/agent"
	"github.com/cephbench/cephbench/engine"
	_ "github.com/cephbench/cephbench/engine/dirobj"
	_ "github.com/cephbench/cephbench/engine/null"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/mergetest"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// fakeHost is an agent served in-process over pipes, as a host's would be
// over ssh.
type fakeHost struct {
	Host
	agentIn  *io.PipeReader // the agent's stdin
	agentOut *io.PipeWriter // the agent's stdout
	outR     *io.PipeReader
	served   chan error
}

// kill cuts the host off as a killed agent or a lost link does: its
// stdout breaks under the coordinator and its stdin under the agent.
func (h *fakeHost) kill() {
	h.agentOut.CloseWithError(errors.New("connection lost"))
	h.agentIn.CloseWithError(errors.New("connection lost"))
}

func startAgents(t *testing.T, n int, opts func(i int) agent.Options) []*fakeHost {
	t.Helper()
	hosts := make([]*fakeHost, n)
	for i := range hosts {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		o := agent.Options{Host: fmt.Sprintf("h%d", i+1)}
		if opts != nil {
			o = opts(i)
		}
		h := &fakeHost{Host: Host{Label: fmt.Sprintf("h%d", i+1), In: inW, Out: outR}, agentIn: inR, agentOut: outW, outR: outR, served: make(chan error, 1)}
		go func() {
			err := agent.Serve(context.Background(), inR, outW, o)
			outW.Close()
			h.served <- err
		}()
		hosts[i] = h
	}
	t.Cleanup(func() {
		for _, h := range hosts {
			// As a transport's close does: nothing more is read from
			// the agent, nor sent to it.
			h.In.Close()
			h.outR.Close()
			select {
			case <-h.served:
			case <-time.After(10 * time.Second):
				t.Errorf("agent %s still serving", h.Label)
			}
		}
	})
	return hosts
}

// ended reports whether h's agent ended within d, leaving its end for the
// test's cleanup to see again.
func (h *fakeHost) ended(d time.Duration) bool {
	select {
	case err := <-h.served:
		h.served <- err
		return true
	case <-time.After(d):
		return false
	}
}

func hostsOf(fs []*fakeHost) []Host {
	hs := make([]Host, len(fs))
	for i, f := range fs {
		hs[i] = f.Host
	}
	return hs
}

func benchJob(w spec.Workload) frontend.Job {
	return frontend.Job{Command: "bench", Steps: []step.Step{{Name: "many", Workload: w, Front: step.Front{Command: "bench"}}}}
}

func nullWorkload(d time.Duration) spec.Workload {
	return spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 100, BlockSize: 4096,
		Workers: 1, QueueDepth: 4, Duration: spec.Duration(d),
	}
}

// Four hosts run one job together: the merged result's ops are the sum
// of the hosts', its percentiles those of their histograms added, and
// the merged seconds add up to the merged result.
func TestFourHostsMergeExactly(t *testing.T) {
	hosts := startAgents(t, 4, nil)
	var mu sync.Mutex
	var seconds []metrics.Tick
	out, err := Run(context.Background(), benchJob(nullWorkload(2*time.Second)), hostsOf(hosts), Options{
		Opened: func(int) metrics.Subscriber {
			return func(tk metrics.Tick) { mu.Lock(); seconds = append(seconds, tk); mu.Unlock() }
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 {
		t.Fatalf("%d results; want 1", len(out.Results))
	}
	m := out.Results[0]
	if len(m.Hosts) != 4 {
		t.Fatalf("the merged result holds %d hosts' results", len(m.Hosts))
	}
	sum := mergetest.AddsUp(t, m, "read")
	var ticked int64
	for _, s := range seconds {
		ticked += s.Kinds["read"].Ops
	}
	if len(seconds) != 2 || ticked != sum {
		t.Errorf("%d merged seconds of %d reads; want 2 of %d", len(seconds), ticked, sum)
	}
}

// A host whose cephbench is another version, or whose clock is off, is
// refused before any I/O, in one line naming it.
func TestHostsThatCannotMergeAreRefused(t *testing.T) {
	skewed := startAgents(t, 2, func(i int) agent.Options {
		o := agent.Options{Host: fmt.Sprintf("h%d", i+1)}
		if i == 1 {
			o.Now = func() time.Time { return time.Now().Add(300 * time.Millisecond) }
		}
		return o
	})
	_, err := Run(context.Background(), benchJob(nullWorkload(time.Second)), hostsOf(skewed), Options{})
	if !engine.IsUsage(err) || !strings.Contains(err.Error(), "host h2") || !strings.Contains(err.Error(), "clock") {
		t.Errorf("a host 300 ms ahead: %v; want a usage error naming h2's clock", err)
	}

	// An agent of another version says so in its hello.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		agent.NewEncoder(outW).Encode(agent.Hello{Version: "0.0.1", Protocol: agent.Protocol, Histogram: metrics.StandardHistogram(), Host: "old"})
		io.Copy(io.Discard, inR)
		outW.Close()
	}()
	_, err = Run(context.Background(), benchJob(nullWorkload(time.Second)), []Host{{Label: "old", In: inW, Out: outR}}, Options{})
	if !engine.IsUsage(err) || !strings.Contains(err.Error(), "host old") || !strings.Contains(err.Error(), "0.0.1") || strings.Contains(err.Error(), "\n") {
		t.Errorf("an old agent: %v; want one usage line naming the host and its version", err)
	}
}

// A host lost mid-run stops the run on every host: the others' I/O stops
// and what they wrote is removed, what they measured is kept as a partial
// result, and the error names the lost host.
func TestALostHostStopsEveryHost(t *testing.T) {
	dir := t.TempDir()
	hosts := startAgents(t, 3, nil)
	w := spec.Workload{
		Target: spec.Target{Scheme: "dirobj", Location: dir}, Pattern: spec.Random, BlockSize: 4096, ObjectSize: 64 << 10,
		Objects: 16, Workers: 1, QueueDepth: 2, Duration: spec.Duration(30 * time.Second),
	}
	// h2 is lost once it has measured a second, however long the start
	// took on a loaded machine.
	var lostAt time.Time
	out, err := Run(context.Background(), benchJob(w), hostsOf(hosts), Options{
		HostTicks: func(host string, _ metrics.Tick) {
			if host == "h2" && lostAt.IsZero() {
				lostAt = time.Now()
				hosts[1].kill()
			}
		},
	})
	if err == nil || !strings.Contains(err.Error(), "host h2") {
		t.Fatalf("a lost host: %v; want an error naming h2", err)
	}
	// A hang check: the run has 30 s to go when h2 is lost.
	if took := time.Since(lostAt); took > 20*time.Second {
		t.Errorf("the run went on %s after h2 was lost", took)
	}
	if out == nil || len(out.Results) != 1 || !out.Results[0].Interrupted || out.Results[0].Ops["write"].Ops == 0 {
		t.Fatalf("outcome %+v; want the partial result of what was measured", out)
	}
	// The lost host's agent cleans up once its stdin breaks; the run
	// does not wait for a host it lost.
	if !hosts[1].ended(10 * time.Second) {
		t.Fatal("the lost host's agent still serving")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("the hosts left %v in %s", entries, filepath.Base(dir))
	}
}

// Ctrl-C on the coordinator stops every host and keeps what they measured.
func TestInterruptingTheCoordinatorStopsEveryHost(t *testing.T) {
	hosts := startAgents(t, 2, nil)
	ctx, cancel := context.WithCancel(context.Background())
	// Ctrl-C once both hosts have measured a second, however slowly they
	// started.
	var once sync.Once
	opened := func(int) metrics.Subscriber {
		return func(metrics.Tick) { once.Do(func() { time.AfterFunc(500*time.Millisecond, cancel) }) }
	}
	out, err := Run(ctx, benchJob(nullWorkload(time.Minute)), hostsOf(hosts), Options{Opened: opened})
	if !errors.Is(err, step.ErrInterrupted) {
		t.Fatalf("interrupted: %v", err)
	}
	if out == nil || len(out.Results) != 1 || out.Results[0].Ops["read"].Ops == 0 || len(out.Results[0].Hosts) != 2 {
		t.Fatalf("outcome %+v; want both hosts' partial results merged", out)
	}
	for _, h := range hosts {
		h.In.Close()
		if !h.ended(5 * time.Second) {
			t.Errorf("agent %s still running after the stop", h.Label)
		}
	}
}

// With GoOn a lost host does not stop the others: they run their whole
// step, the merged result holds their results with the rates before and
// after the loss in windows of their own, and the loss is reported.
//
// h2 is lost once it has measured its first second, whenever that is on a
// loaded machine, and the window after the loss starts at the end of the
// last second the coordinator had from it.
func TestALostHostWithGoOnLeavesTheOthersRunning(t *testing.T) {
	hosts := startAgents(t, 3, nil)
	var lost []string
	var h2Ticks []float64
	out, err := Run(context.Background(), benchJob(nullWorkload(4*time.Second)), hostsOf(hosts), Options{
		GoOn: true, Lost: func(host string, err error) { lost = append(lost, host) },
		HostTicks: func(host string, tk metrics.Tick) {
			if host == "h2" {
				if h2Ticks = append(h2Ticks, tk.T); len(h2Ticks) == 1 {
					hosts[1].kill()
				}
			}
		},
	})
	if err != nil {
		t.Fatalf("a lost host with GoOn: %v; want the run to finish on the others", err)
	}
	if len(lost) != 1 || lost[0] != "h2" {
		t.Errorf("lost %v; want h2", lost)
	}
	m := out.Results[0]
	if m == nil || len(m.Hosts) != 2 || m.Interrupted || m.ElapsedSeconds < 3.5 {
		t.Fatalf("result %+v; want the two others' whole runs merged", m)
	}
	if sum := m.Hosts[0].Ops["read"].Ops + m.Hosts[1].Ops["read"].Ops; m.Ops["read"].Ops != sum {
		t.Errorf("merged %d reads; the two hosts made %d", m.Ops["read"].Ops, sum)
	}
	if len(m.Windows) != 2 || m.Windows[0].Hosts != 3 || m.Windows[1].Hosts != 2 || m.Windows[1].Ops["read"].IOPS.Mean == 0 {
		t.Fatalf("windows %+v; want 3 hosts before h2's loss and 2 after", m.Windows)
	}
	if from, last := m.Windows[1].FromSeconds, h2Ticks[len(h2Ticks)-1]; from < 1 || math.Abs(from-last) > 0.5 {
		t.Errorf("the window after the loss starts at %gs; h2's last second ended at %gs", from, last)
	}
}

// recorder keeps a copy of what the coordinator sends a host.
type recorder struct {
	io.WriteCloser
	mu   sync.Mutex
	sent bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.sent.Write(p)
	r.mu.Unlock()
	return r.WriteCloser.Write(p)
}

// job is the job message among those sent.
func (r *recorder) job(t *testing.T) *agent.Job {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	dec := agent.NewDecoder(bytes.NewReader(r.sent.Bytes()))
	for {
		m, err := dec.Decode()
		if err != nil {
			t.Fatalf("no job among what was sent: %v", err)
		}
		if j, ok := m.(*agent.Job); ok {
			return j
		}
	}
}

// Each host's job carries a hard deadline past the job's length plus the
// margin, on the host's clock (one 2 s ahead here), so that a host whose
// coordinator vanished stops on its own; a job whose length is not known
// carries none.
func TestAHostsJobCarriesItsDeadline(t *testing.T) {
	ahead := 2 * time.Second
	hosts := startAgents(t, 2, func(i int) agent.Options {
		return agent.Options{Host: fmt.Sprintf("h%d", i+1), Now: func() time.Time { return time.Now().Add(ahead) }}
	})
	rec := &recorder{WriteCloser: hosts[0].In}
	hs := hostsOf(hosts)
	hs[0].In = rec
	margin := 30 * time.Second
	sent := time.Now()
	if _, err := Run(context.Background(), benchJob(nullWorkload(time.Second)), hs, Options{MaxSkew: time.Minute, DeadlineMargin: margin}); err != nil {
		t.Fatal(err)
	}
	// The job went out between the two readings, however long a loaded
	// machine took to measure the clocks first; a second more is for the
	// measure's error.
	ran := time.Now()
	took, _ := frontend.Estimate(benchJob(nullWorkload(time.Second)))
	got := rec.job(t).Deadline
	earliest := sent.Add(ahead + took + margin)
	if got.Before(earliest) || got.After(ran.Add(ahead+took+margin+time.Second)) {
		t.Errorf("deadline %s after the job was sent; want %s (its length %s, margin %s, the host's clock %s ahead)",
			got.Sub(sent), earliest.Sub(sent), took, margin, ahead)
	}

	hosts = startAgents(t, 1, nil)
	rec = &recorder{WriteCloser: hosts[0].In}
	hs = hostsOf(hosts)
	hs[0].In = rec
	w := nullWorkload(0)
	w.TotalOps = 1000 // an ops bound: how long it runs is not known
	if _, err := Run(context.Background(), benchJob(w), hs, Options{}); err != nil {
		t.Fatal(err)
	}
	if d := rec.job(t).Deadline; !d.IsZero() {
		t.Errorf("a job of unknown length got the deadline %s", d)
	}
}

// A transport that cannot time a round trip runs without pinging: no
// ping reaches the agents, a clock it could not measure refuses nothing,
// and the hosts start together on their own clocks.
func TestUnmeasuredClocksAreNeitherPingedNorRefused(t *testing.T) {
	hosts := startAgents(t, 2, func(i int) agent.Options {
		o := agent.Options{Host: fmt.Sprintf("h%d", i+1)}
		if i == 1 {
			o.Now = func() time.Time { return time.Now().Add(300 * time.Millisecond) }
		}
		return o
	})
	var pinged pingCounter
	hs := hostsOf(hosts)
	for i := range hs {
		hs[i].In = &pinged.writers[i]
		pinged.writers[i].w = hosts[i].In
	}
	out, err := Run(context.Background(), benchJob(nullWorkload(time.Second)), hs, Options{UnmeasuredClocks: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 || len(out.Results[0].Hosts) != 2 || out.Results[0].Ops["read"].Ops == 0 {
		t.Fatalf("outcome %+v; want both hosts' results merged", out)
	}
	m := out.Results[0]
	if !slices.Contains(m.Notes, UnmeasuredClocksNote) || m.Hosts[0].ClockOffset != nil || m.Hosts[1].ClockOffset != nil {
		t.Errorf("notes %q, offsets %v %v; want the clocks said unmeasured, no offset claimed", m.Notes, m.Hosts[0].ClockOffset, m.Hosts[1].ClockOffset)
	}
	if n := pinged.pings(); n != 0 {
		t.Errorf("%d pings sent", n)
	}
}

// pingCounter counts the pings written to two hosts.
type pingCounter struct{ writers [2]countingWriter }

func (p *pingCounter) pings() int { return p.writers[0].pings() + p.writers[1].pings() }

type countingWriter struct {
	w  io.WriteCloser
	mu sync.Mutex
	n  int
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.mu.Lock()
	if strings.Contains(string(b), `"type":"ping"`) {
		c.n++
	}
	c.mu.Unlock()
	return c.w.Write(b)
}

func (c *countingWriter) Close() error { return c.w.Close() }

func (c *countingWriter) pings() int { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

// One watch of the cluster is enough: the first host's step watches, the
// others' do not.
func TestOnlyTheFirstHostWatchesTheCluster(t *testing.T) {
	hosts := startAgents(t, 2, nil)
	hs := hostsOf(hosts)
	recs := make([]*recorder, len(hs))
	for i := range hs {
		recs[i] = &recorder{WriteCloser: hosts[i].In}
		hs[i].In = recs[i]
	}
	j := benchJob(nullWorkload(time.Second))
	j.Steps[0].Watch = step.DefaultWatch
	if _, err := Run(context.Background(), j, hs, Options{MaxSkew: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if w := recs[0].job(t).Job.Steps[0].Watch; w != step.DefaultWatch {
		t.Errorf("the first host's step watches with %+v; want %+v", w, step.DefaultWatch)
	}
	if w := recs[1].job(t).Job.Steps[0].Watch; w != (step.Watch{}) {
		t.Errorf("the second host's step watches with %+v; want no watch", w)
	}
}
