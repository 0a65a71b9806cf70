package multihost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cephbench/cephbench/agent"
	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/step"
	"github.com/cephbench/cephbench/transport/ssh"
)

// Host is one host's agent, however it was reached (ssh, a pod, a pipe):
// its label, unique among the run's hosts and safe in a file name, and the
// agent's stdin and stdout.
type Host struct {
	Label string
	In    io.WriteCloser
	Out   io.Reader
	// Ended, if set, says why Out ended once it has: the transport's own
	// error (ssh could not log in, the remote program was not found), or
	// nil when it ended cleanly.
	Ended func() error
}

// Options are how a run spans its hosts. The zero value takes the
// defaults.
type Options struct {
	// MaxSkew is the clock offset above which a host is refused; zero is
	// DefaultMaxSkew.
	MaxSkew time.Duration
	// Lead is how long after the last host is ready every host starts:
	// long enough for the start to reach them all; zero is 500 ms.
	Lead time.Duration
	// Silence is how long a host may say nothing before it counts as
	// lost; zero is 2 s. The coordinator pings every host every Silence/4
	// from the job's start to its end, and an agent answers at once,
	// whatever it is doing, so a live host is heard from at least every
	// Silence/4 (and ticks each second while it runs); the silences are
	// checked every Silence/8, so a host whose link dies is called lost
	// between Silence-Silence/4 and Silence+Silence/8 after it died (1.5
	// to 2.25 s). The agent, for its part, stops its job, removes what it
	// wrote and ends once it has heard nothing from the coordinator for
	// 2.5 x Silence (5 s), since a dead link does not close its stdin.
	// Over a transport that cannot ping (UnmeasuredClocks) no pings are
	// sent: a host is watched only while it runs, by its ticks, and its
	// agent is not asked to watch the coordinator.
	Silence time.Duration
	// Opened, if set, is called from one goroutine when step s starts
	// on every host, and returns the subscriber of the step's seconds
	// (nil: none), each with every host's tick of that second added, in
	// order, from the same goroutine.
	Opened func(s int) metrics.Subscriber
	// HostTicks, if set, gets each host's own tick as it arrives, before
	// the merged second it is part of goes to the step's subscriber, from
	// the goroutine that calls that. It costs decoding every host's
	// histograms in full.
	HostTicks func(host string, t metrics.Tick)
	// SharedTarget makes the hosts share each step's target, each in its
	// own region of it (frontend.InRegion), rather than each on its own
	// part (frontend.ForHost).
	SharedTarget bool
	// DeadlineMargin is how long past a job's known length (its steps'
	// time, frontend.Estimate) a host may run before it stops on its own:
	// time to open and lay out its targets and to clean up. Zero is
	// DefaultDeadlineMargin. A job whose length is not known exactly
	// gets no deadline; its agent stops when its stdin ends.
	DeadlineMargin time.Duration
	// GoOn, when set, keeps the run going on the other hosts when one
	// fails or is lost (rather than stopping every host): the merged
	// result then holds a window of rates before the loss and one after.
	// A refusal before the run (bad input, a mismatch) still stops all.
	GoOn bool
	// Lost, if set, is told each host lost while the others went on (GoOn).
	Lost func(host string, err error)
	// Now is the coordinator's clock; nil is time.Now.
	Now func() time.Time
	// UnmeasuredClocks skips measuring and checking the hosts' clocks,
	// for a transport whose round trip is too slow and uneven to time
	// them (a pod's log): their clocks are taken as the coordinator's,
	// and every merged result says so (UnmeasuredClocksNote). No
	// keepalive pings go through it either (see Silence).
	UnmeasuredClocks bool
}

// UnmeasuredClocksNote is the note of a result whose hosts' clocks were
// not measured (Options.UnmeasuredClocks).
const UnmeasuredClocksNote = "the hosts' clocks were not measured (the transport cannot time a round trip): each host started on its own clock, as NTP keeps it"

// DefaultDeadlineMargin is Options.DeadlineMargin's default.
const DefaultDeadlineMargin = 10 * time.Minute

// pings is how many round trips measure a host's clock offset.
const pings = 5

// Outcome is what a run measured: per step of the job, the merged result
// (its Hosts hold each host's own), saved where the step's Save says with
// its tick log; nil for a step that no host ran.
type Outcome struct {
	Results []*result.Result
	// Saved is, per step, where its result was saved; empty when it was
	// not.
	Saved []string
	// Labels are, per step, the labels of the hosts whose results the
	// merged result's Hosts hold, in that order.
	Labels [][]string
}

// link is the coordinator's side of one host's agent.
type link struct {
	host   Host
	enc    *agent.Encoder
	dec    *agent.Decoder
	offset time.Duration
	// uncertainty is the offset's: half the round trip it was taken on.
	uncertainty time.Duration
	results     map[int]*result.Result
	lost        bool // went on without it (Options.GoOn)
}

// event is what a host's agent said, as the coordinator's loop sees it.
type event struct {
	host int
	msg  agent.Message
	err  error     // the agent's stream ended or broke
	at   time.Time // when it was read
}

// Run runs j on every host at once: each host checks in (version,
// protocol, histogram settings), has its clock offset measured and
// checked, gets its share of j (frontend.ForHost), opens its targets and
// says it is ready; then every host starts each step at one time. The
// hosts' ticks are merged second by second into the step's subscriber
// (Options.Opened) and their results into one per step, saved where the
// step says with its tick log. A host that fails, goes silent or is refused
// stops the run on every host (or, with Options.GoOn, only itself): what was measured is kept in the outcome
// and the error names the host. ctx ending stops every host likewise and
// returns step.ErrInterrupted with the outcome. The outcome is never nil.
func Run(ctx context.Context, j frontend.Job, hosts []Host, opts Options) (*Outcome, error) {
	opts = opts.withDefaults()
	links := make([]*link, len(hosts))
	for i, h := range hosts {
		links[i] = &link{host: h, enc: agent.NewEncoder(h.In), dec: agent.NewDecoder(h.Out), results: map[int]*result.Result{}}
	}
	defer func() {
		for _, l := range links {
			l.host.In.Close()
		}
	}()
	if err := checkIn(ctx, links, j, opts); err != nil {
		return &Outcome{}, err
	}
	r := &run{links: links, opts: opts, job: j, steps: make([]*stepRun, len(j.Steps)), events: make(chan event, 64*len(links)), ended: make(chan struct{})}
	for i, l := range links {
		go r.listen(i, l)
	}
	runErr := r.loop(ctx)
	close(r.ended)
	out, mergeErr := r.outcome()
	switch {
	case runErr != nil:
		return out, runErr
	case ctx.Err() != nil:
		return out, step.ErrInterrupted
	}
	return out, mergeErr
}

func (o Options) withDefaults() Options {
	if o.MaxSkew == 0 {
		o.MaxSkew = DefaultMaxSkew
	}
	if o.Lead == 0 {
		o.Lead = 500 * time.Millisecond
	}
	if o.Silence == 0 {
		o.Silence = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.DeadlineMargin == 0 {
		o.DeadlineMargin = DefaultDeadlineMargin
	}
	return o
}

// checkIn reads every host's hello, measures its clock and sends it its
// share of j, hosts in parallel; the first refusal is the error.
func checkIn(ctx context.Context, links []*link, j frontend.Job, opts Options) error {
	errs := make([]error, len(links))
	var wg sync.WaitGroup
	for i, l := range links {
		wg.Go(func() { errs[i] = l.checkIn(opts) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// A host may still be connecting: its check-in ends when the
		// caller closes its transport, not waited for.
		for _, l := range links {
			l.host.In.Close()
		}
		return step.ErrInterrupted
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// Every host can run its share: only now does any get a job.
	for k, l := range links {
		if err := l.sendJob(j, k, len(links), opts); err != nil {
			return err
		}
	}
	return nil
}

// checkIn reads the host's hello and checks it, and measures and checks
// its clock.
func (l *link) checkIn(opts Options) error {
	m, err := l.dec.Decode()
	if err != nil {
		if l.host.Ended != nil {
			var missing *ssh.Error
			if why := l.host.Ended(); errors.As(why, &missing) && missing.ExitStatus == 127 {
				return fmt.Errorf("%w (--push-binary copies this cephbench there)", why)
			} else if why != nil {
				return why
			}
		}
		return l.errorf("no hello from its agent: %v", err)
	}
	hello, ok := m.(*agent.Hello)
	switch {
	case !ok:
		return l.errorf("its agent said %q before hello", m.Type())
	case hello.Protocol != agent.Protocol:
		return &engine.UsageError{Err: l.errorf("its agent speaks protocol %d, this cephbench %d", hello.Protocol, agent.Protocol)}
	case hello.Version != result.Version:
		return &engine.UsageError{Err: l.errorf("its cephbench is version %s, this one %s (--push-binary copies this one there)", hello.Version, result.Version)}
	case hello.Histogram != metrics.StandardHistogram():
		return &engine.UsageError{Err: l.errorf("its histograms are %+v, this cephbench's %+v: they would not add up", hello.Histogram, metrics.StandardHistogram())}
	}
	if opts.UnmeasuredClocks {
		return nil
	}
	samples := make([]ClockSample, 0, pings)
	for range pings {
		sent := opts.Now()
		if err := l.enc.Encode(agent.Ping{Sent: sent}); err != nil {
			return l.errorf("sending a ping: %v", err)
		}
		m, err := l.dec.Decode()
		if err != nil {
			return l.errorf("no pong: %v", err)
		}
		pong, ok := m.(*agent.Pong)
		if !ok {
			return l.errorf("its agent said %q, not pong", m.Type())
		}
		samples = append(samples, ClockSample{Sent: sent, Received: opts.Now(), Host: time.Unix(0, pong.AgentNs)})
	}
	offset, uncertainty, err := ClockOffset(samples)
	if err != nil {
		return l.errorf("%v", err)
	}
	if err := CheckSkew(l.host.Label, offset, uncertainty, opts.MaxSkew); err != nil {
		return &engine.UsageError{Err: err}
	}
	l.offset, l.uncertainty = offset, uncertainty
	return nil
}

// sendJob sends the host, k-th of hosts, its share of j, with a deadline
// on the host's clock when j's length is known, to be stopped by the
// agent if the coordinator says nothing for 2.5 x opts.Silence.
func (l *link) sendJob(j frontend.Job, k, hosts int, opts Options) error {
	var own frontend.Job
	var err error
	if opts.SharedTarget {
		own, err = frontend.InRegion(j, k, hosts)
	} else {
		own, err = frontend.ForHost(j, l.host.Label, hosts)
	}
	if err != nil {
		return err
	}
	for i := range own.Steps {
		own.Steps[i].Save = "" // the agent sends its results back
		if k > 0 {
			// One watch of the cluster is enough: the first host's.
			own.Steps[i].Watch = step.Watch{}
		}
	}
	msg := agent.Job{Job: own}
	if !opts.UnmeasuredClocks {
		msg.Silence = opts.Silence * 5 / 2 // the loop pings it
	}
	if took, exact := frontend.Estimate(own); exact && took > 0 {
		msg.Deadline = HostTime(opts.Now().Add(took+opts.DeadlineMargin), l.offset)
	}
	if err := l.enc.Encode(msg); err != nil {
		return l.errorf("sending the job: %v", err)
	}
	return nil
}

func (l *link) errorf(format string, args ...any) error {
	return fmt.Errorf("host %s: %s", l.host.Label, fmt.Sprintf(format, args...))
}

// run is the coordinator's loop state once every host has its job.
type run struct {
	links  []*link
	opts   Options
	job    frontend.Job
	steps  []*stepRun // per step, once it started
	events chan event
	ended  chan struct{} // closed once the loop is over

	ready    map[int]int // per step, the hosts ready
	done     int         // hosts over
	over     []bool      // hosts whose job or stream ended, or that were given up
	heard    []time.Time // when each host last said something
	running  []bool      // hosts started on a step whose result has not come
	stopping bool
}

// stepRun is a step that started on every host: its seconds added as
// they come and written to its tick log.
type stepRun struct {
	series    *aggregate.SeriesAdder
	saving    *result.Pending // nil when the step saves nothing
	savingErr error
}

// listen forwards everything l's agent says to the loop, until its
// stream ends. Once the loop is over, what still comes (a pong to a ping
// sent before its done, a lost host's late words) is read and dropped, so
// that no agent is left blocked writing it.
func (r *run) listen(i int, l *link) {
	for {
		m, err := l.dec.Decode()
		select {
		case r.events <- event{host: i, msg: m, err: err, at: time.Now()}:
		case <-r.ended:
		}
		if err != nil {
			return
		}
	}
}

// loop follows the hosts until every one is done: it starts each step
// once all are ready, merges their seconds, keeps their results, and
// stops them all when one fails (or only that one, GoOn) or ctx ends.
func (r *run) loop(ctx context.Context) error {
	r.ready = map[int]int{}
	r.heard = make([]time.Time, len(r.links))
	for i := range r.heard {
		r.heard[i] = time.Now()
	}
	r.over, r.running = make([]bool, len(r.links)), make([]bool, len(r.links))
	// Without pings, only a running host's ticks say it is there.
	pinging := !r.opts.UnmeasuredClocks
	watch := time.NewTicker(r.opts.Silence / 8)
	defer watch.Stop()
	pings := 0
	var failure error
	fail := func(host int, err error) {
		if failure != nil || r.stopping {
			return
		}
		if host >= 0 && r.opts.GoOn && !engine.IsUsage(err) && r.live() > 1 {
			r.lose(host, err)
			return
		}
		failure = err
		r.stop()
	}
	ctxDone := ctx.Done()
	for r.done < len(r.links) {
		select {
		case <-ctxDone:
			ctxDone = nil
			r.stop()
		case now := <-watch.C:
			if pings++; pinging && pings%2 == 1 {
				r.ping() // every Silence/4
			}
			for i, t := range r.heard {
				if r.over[i] || !(pinging || r.running[i]) || now.Sub(t) <= r.opts.Silence {
					continue
				}
				r.finish(i) // given up: nothing it says later is waited for
				fail(i, r.links[i].errorf("silent for %s: lost", now.Sub(t).Round(time.Millisecond)))
			}
		case ev := <-r.events:
			if r.over[ev.host] {
				continue // given up, or gone on without: what it still says is not counted
			}
			r.heard[ev.host] = ev.at
			l := r.links[ev.host]
			if ev.err != nil {
				r.finish(ev.host)
				fail(ev.host, l.errorf("its agent ended: %v", why(ev.err)))
				continue
			}
			if err := r.handle(ev.host, ev.msg); err != nil {
				fail(ev.host, err)
			}
		}
	}
	return failure
}

// live is how many hosts the run has not gone on without.
func (r *run) live() int {
	n := 0
	for _, l := range r.links {
		if !l.lost {
			n++
		}
	}
	return n
}

// lose goes on without host i: it is asked to stop (it may still hear),
// its seconds are no longer waited for, and the steps still to start wait
// for the others only.
func (r *run) lose(i int, err error) {
	l := r.links[i]
	l.lost = true
	l.enc.Encode(agent.Stop{}) // a host already gone is not stopped twice
	r.finish(i)
	for _, st := range r.steps {
		if st != nil {
			st.series.Lose(i)
		}
	}
	if r.opts.Lost != nil {
		r.opts.Lost(l.host.Label, err)
	}
	for s, n := range r.ready {
		if n >= r.live() && r.steps[s] == nil {
			r.start(s) // every host left is ready
		}
	}
}

// why words the end of an agent's stream for its one line.
func why(err error) string {
	if errors.Is(err, io.EOF) {
		return "its stream closed before its job was done (the agent killed, or its connection closed)"
	}
	return err.Error()
}

// finish counts host i as over: its job or its stream ended, or it was
// given up.
func (r *run) finish(i int) {
	if !r.over[i] {
		r.over[i] = true
		r.done++
	}
}

// ping sends every host not over a ping: its agent knows the coordinator
// is there, and its pong that the host is.
func (r *run) ping() {
	for i, l := range r.links {
		if !r.over[i] {
			l.enc.Encode(agent.Ping{Sent: r.opts.Now()}) // a host gone shows as silent
		}
	}
}

// handle takes one message from host i.
func (r *run) handle(i int, m agent.Message) error {
	l := r.links[i]
	switch m := m.(type) {
	case *agent.Ready:
		r.ready[m.Step]++
		if r.ready[m.Step] == r.live() && !r.stopping {
			return r.start(m.Step)
		}
	case *agent.Tick:
		return r.tick(i, m)
	case *agent.Cluster:
		// Only the first host watches; its samples go in the merged
		// tick log, for the report's cluster charts.
		if st := r.stepAt(m.Step); st != nil && st.saving != nil {
			st.saving.Cluster(m.Sample)
		}
	case *agent.Result:
		if !r.opts.UnmeasuredClocks {
			m.Result.ClockOffset = &result.ClockOffset{OffsetMs: ms(l.offset), UncertaintyMs: ms(l.uncertainty)}
		}
		l.results[m.Step] = m.Result
		r.running[i] = false
		if st := r.stepAt(m.Step); st != nil {
			st.series.End(i)
		}
	case *agent.Error:
		if r.stopping {
			return nil // the stop's own word
		}
		err := l.errorf("%s", m.Message)
		if m.Usage {
			return &engine.UsageError{Err: err}
		}
		return err
	case *agent.Done:
		r.finish(i)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// tick adds host i's tick into its step's second. A host's own tick is
// decoded in full only when it is wanted on its own (HostTicks); the sum
// needs only its sparse histograms.
func (r *run) tick(i int, m *agent.Tick) error {
	st := r.stepAt(m.Step)
	if r.opts.HostTicks != nil {
		t, err := m.Tick.Decode()
		if err != nil {
			return r.links[i].errorf("its tick: %v", err)
		}
		r.opts.HostTicks(r.links[i].host.Label, t)
		if st != nil {
			st.series.Add(i, t)
		}
		return nil
	}
	t, hists, err := m.Tick.Packed()
	if err != nil {
		return r.links[i].errorf("its tick: %v", err)
	}
	if st != nil {
		st.series.AddPacked(i, t, hists)
	}
	return nil
}

// stepAt is step s once started; nil for an index the job does not have
// or a step not started.
func (r *run) stepAt(s int) *stepRun {
	if s < 0 || s >= len(r.steps) {
		return nil
	}
	return r.steps[s]
}

// start starts step s on every host left, one lead from now, and opens its
// tick log.
func (r *run) start(s int) error {
	if s < 0 || s >= len(r.steps) {
		return fmt.Errorf("a host is ready for step %d of a %d-step job", s, len(r.steps))
	}
	at := r.opts.Now().Add(r.opts.Lead)
	names := make([]string, len(r.links))
	for k, o := range r.links {
		names[k] = "host " + o.host.Label
	}
	st := &stepRun{}
	if save := r.job.Steps[s].Save; save != "" {
		st.saving, st.savingErr = result.Begin(save, r.job.Steps[s].Provisional(at))
	}
	var ticks metrics.Subscriber
	if r.opts.Opened != nil {
		ticks = r.opts.Opened(s)
	}
	st.series = aggregate.NewSeriesAdder(names, nil, st.passOn(ticks))
	r.steps[s] = st
	for k, o := range r.links {
		if o.lost {
			st.series.Lose(k)
			continue
		}
		if err := o.enc.Encode(agent.Start{At: HostTime(at, o.offset)}); err != nil {
			return o.errorf("sending the start: %v", err)
		}
		r.running[k], r.heard[k] = true, time.Now()
	}
	return nil
}

// passOn is what becomes of each merged second of the step: written to
// its tick log, its histograms stamped as a run's, and given to ticks.
func (st *stepRun) passOn(ticks metrics.Subscriber) metrics.Subscriber {
	return func(t metrics.Tick) {
		if st.saving != nil {
			for kind, h := range t.Histograms {
				h.SetTag(kind)
				h.SetStartTimeMs(int64((t.T - t.Dur) * 1000))
				h.SetEndTimeMs(int64(t.T * 1000))
			}
			st.saving.Tick(t)
		}
		if ticks != nil {
			ticks(t)
		}
	}
}

// stop asks every host to stop its job: its I/O stops, what it wrote is
// removed, and what it measured still comes back.
func (r *run) stop() {
	if r.stopping {
		return
	}
	r.stopping = true
	for _, l := range r.links {
		l.enc.Encode(agent.Stop{}) // a host already gone is not stopped twice
	}
}

// outcome merges, step by step, the results the hosts sent, and saves
// each where its step says.
func (r *run) outcome() (*Outcome, error) {
	out := &Outcome{Results: make([]*result.Result, len(r.steps)), Saved: make([]string, len(r.steps)), Labels: make([][]string, len(r.steps))}
	var errs []error
	for s, st := range r.steps {
		if st == nil {
			continue
		}
		st.series.Close()
		res, err := r.merged(s, st)
		if err != nil {
			errs = append(errs, err)
		}
		if res != nil {
			out.Results[s] = res
			for _, l := range r.links {
				if l.results[s] != nil {
					out.Labels[s] = append(out.Labels[s], l.host.Label)
				}
			}
			if r.job.Steps[s].Save != "" {
				saved, err := st.save(res)
				out.Saved[s], res.Path = saved, saved
				errs = append(errs, err)
			}
		} else if st.saving != nil {
			st.saving.Discard()
		}
	}
	return out, errors.Join(errs...)
}

// merged is step s's result: the hosts' added, or the one host's that
// sent one; nil when none did.
func (r *run) merged(s int, st *stepRun) (*result.Result, error) {
	var runs []aggregate.HostRun
	var missing []string
	for _, l := range r.links {
		if res := l.results[s]; res != nil {
			runs = append(runs, aggregate.HostRun{Name: "host " + l.host.Label, Result: res})
		} else {
			missing = append(missing, l.host.Label)
		}
	}
	var res *result.Result
	switch len(runs) {
	case 0:
		return nil, nil
	case 1:
		res = runs[0].Result
		res.Series = slices.Clone(st.series.Series())
		res.Windows = st.series.Windows()
	default:
		var err error
		if res, err = aggregate.MergeAdded(runs, st.series); err != nil {
			return nil, err
		}
	}
	if r.opts.UnmeasuredClocks {
		res.Notes = append(res.Notes, UnmeasuredClocksNote)
	} else {
		offsets := make([]string, 0, len(r.links))
		for _, l := range r.links {
			offsets = append(offsets, fmt.Sprintf("%s %+.3f ms (±%.3f)", l.host.Label, ms(l.offset), ms(l.uncertainty)))
		}
		res.Notes = append(res.Notes, "the hosts' clocks, from this host's: "+strings.Join(offsets, ", "))
	}
	if len(missing) > 0 {
		res.Interrupted = res.Interrupted || !r.opts.GoOn
		res.Notes = append(res.Notes, fmt.Sprintf("partial: %d of %d hosts sent a result; %s sent none (its seconds until then are in the series, not in the totals)",
			len(runs), len(r.links), strings.Join(missing, ", ")))
	}
	return res, nil
}

// save saves res where the step's result was claimed, with its tick log,
// and returns where it went (a fallback place when it could not go
// there: the error says so).
func (st *stepRun) save(res *result.Result) (string, error) {
	if st.savingErr != nil {
		return "", fmt.Errorf("claiming the merged result's place: %w", st.savingErr)
	}
	return st.saving.Finish(res)
}
