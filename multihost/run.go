package multihost

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	// Silence is how long a host may say nothing while it runs before it
	// counts as lost (three missed ticks); zero is 3 s.
	Silence time.Duration
	// Ticks, if set, gets each second of the run with every host's tick
	// of that second merged, in order, from one goroutine.
	Ticks metrics.Subscriber
	// Now is the coordinator's clock; nil is time.Now.
	Now func() time.Time
}

// pings is how many round trips measure a host's clock offset.
const pings = 5

// Outcome is what a run measured: per step of the job, the merged result
// (its Hosts hold each host's own) and its seconds with their histograms.
type Outcome struct {
	Results   []*result.Result
	Intervals [][]result.Interval
}

// link is the coordinator's side of one host's agent.
type link struct {
	host    Host
	enc     *agent.Encoder
	dec     *agent.Decoder
	offset  time.Duration
	results map[int]*result.Result
	ticks   map[int][]result.Interval
}

// event is what a host's agent said, as the coordinator's loop sees it.
type event struct {
	host int
	msg  agent.Message
	err  error // the agent's stream ended or broke
}

// Run runs j on every host at once: each host checks in (version,
// protocol, histogram settings), has its clock offset measured and
// checked, gets its share of j (frontend.ForHost), opens its targets and
// says it is ready; then every host starts each step at one time. The
// hosts' ticks are merged second by second into opts.Ticks and their
// results into one per step. A host that fails, goes silent or is refused
// stops the run on every host: what was measured is kept in the outcome
// and the error names the host. ctx ending stops every host likewise and
// returns step.ErrInterrupted with the outcome. The outcome is never nil.
func Run(ctx context.Context, j frontend.Job, hosts []Host, opts Options) (*Outcome, error) {
	opts = opts.withDefaults()
	links := make([]*link, len(hosts))
	for i, h := range hosts {
		links[i] = &link{host: h, enc: agent.NewEncoder(h.In), dec: agent.NewDecoder(h.Out), results: map[int]*result.Result{}, ticks: map[int][]result.Interval{}}
	}
	defer func() {
		for _, l := range links {
			l.host.In.Close()
		}
	}()
	if err := checkIn(ctx, links, j, opts); err != nil {
		return &Outcome{}, err
	}
	r := &run{links: links, opts: opts, steps: len(j.Steps), events: make(chan event, 64*len(links))}
	for i, l := range links {
		go r.listen(i, l)
	}
	runErr := r.loop(ctx)
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
		o.Silence = 3 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
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
		for _, l := range links {
			l.host.In.Close()
		}
		<-done
		return step.ErrInterrupted
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// Every host can run its share: only now does any get a job.
	for _, l := range links {
		if err := l.sendJob(j, len(links)); err != nil {
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
			if why := l.host.Ended(); why != nil {
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
	l.offset = offset
	return nil
}

// sendJob sends the host its share of j.
func (l *link) sendJob(j frontend.Job, hosts int) error {
	own, err := frontend.ForHost(j, l.host.Label, hosts)
	if err != nil {
		return err
	}
	for i := range own.Steps {
		own.Steps[i].Save = "" // the agent sends its results back
	}
	if err := l.enc.Encode(agent.Job{Job: own}); err != nil {
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
	steps  int
	events chan event

	ready    map[int]int               // per step, the hosts ready
	seconds  map[[2]int][]metrics.Tick // per step and second, the hosts' ticks
	done     int                       // hosts whose job ended
	running  []bool                    // hosts started on a step whose result has not come
	heard    []time.Time               // when each host last said something, or was started
	stopping bool
}

// listen forwards everything l's agent says to the loop, until its
// stream ends.
func (r *run) listen(i int, l *link) {
	for {
		m, err := l.dec.Decode()
		if err != nil {
			r.events <- event{host: i, err: err}
			return
		}
		r.events <- event{host: i, msg: m}
		if _, ok := m.(*agent.Done); ok {
			return
		}
	}
}

// loop follows the hosts until every one is done: it starts each step
// once all are ready, merges their seconds, keeps their results, and
// stops them all when one fails or ctx ends.
func (r *run) loop(ctx context.Context) error {
	r.ready, r.seconds = map[int]int{}, map[[2]int][]metrics.Tick{}
	r.heard = make([]time.Time, len(r.links))
	for i := range r.heard {
		r.heard[i] = time.Now()
	}
	r.running = make([]bool, len(r.links))
	watch := time.NewTicker(r.opts.Silence / 3)
	defer watch.Stop()
	var failure error
	fail := func(err error) {
		if failure == nil {
			failure = err
			r.stop()
		}
	}
	ctxDone := ctx.Done()
	for r.done < len(r.links) {
		select {
		case <-ctxDone:
			ctxDone = nil
			r.stop()
		case now := <-watch.C:
			for i, t := range r.heard {
				if r.running[i] && !r.stopping && now.Sub(t) > r.opts.Silence {
					fail(r.links[i].errorf("silent for %s: lost", now.Sub(t).Round(time.Millisecond)))
				}
			}
			if r.stopping && r.allSilentFor(now) {
				return failure // the others did not wind up in time
			}
		case ev := <-r.events:
			r.heard[ev.host] = time.Now()
			l := r.links[ev.host]
			if ev.err != nil {
				r.done++
				if !r.stopping || failure == nil {
					fail(l.errorf("its agent ended: %v", ev.err))
				}
				continue
			}
			if err := r.handle(ev.host, ev.msg); err != nil {
				fail(err)
			}
		}
	}
	return failure
}

// allSilentFor reports whether every host has been silent for twice the
// silence allowed: a stop was sent and nothing more will come.
func (r *run) allSilentFor(now time.Time) bool {
	for _, t := range r.heard {
		if now.Sub(t) < 2*r.opts.Silence {
			return false
		}
	}
	return true
}

// handle takes one message from host i.
func (r *run) handle(i int, m agent.Message) error {
	l := r.links[i]
	switch m := m.(type) {
	case *agent.Ready:
		r.ready[m.Step]++
		if r.ready[m.Step] == len(r.links) && !r.stopping {
			at := r.opts.Now().Add(r.opts.Lead)
			for k, o := range r.links {
				if err := o.enc.Encode(agent.Start{At: HostTime(at, o.offset)}); err != nil {
					return o.errorf("sending the start: %v", err)
				}
				r.running[k], r.heard[k] = true, time.Now()
			}
		}
	case *agent.Tick:
		t, err := m.Tick.Decode()
		if err != nil {
			return l.errorf("its tick: %v", err)
		}
		iv := result.Interval{Second: t.Second, Histograms: map[string]string{}}
		for kind, wk := range m.Tick.Kinds {
			iv.Histograms[kind] = wk.Histogram
		}
		l.ticks[m.Step] = append(l.ticks[m.Step], iv)
		r.second(m.Step, len(l.ticks[m.Step])-1, t)
	case *agent.Result:
		l.results[m.Step] = m.Result
		r.running[i] = false
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
		r.done++
	}
	return nil
}

// second adds host tick t, second n of step s, and passes the second on
// once every host's is in.
func (r *run) second(s, n int, t metrics.Tick) {
	key := [2]int{s, n}
	r.seconds[key] = append(r.seconds[key], t)
	if len(r.seconds[key]) == len(r.links) {
		if r.opts.Ticks != nil {
			r.opts.Ticks(metrics.AddTicks(r.seconds[key]))
		}
		delete(r.seconds, key)
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

// outcome merges, step by step, the results the hosts sent.
func (r *run) outcome() (*Outcome, error) {
	out := &Outcome{}
	var errs []error
	for s := range r.steps {
		var runs []aggregate.HostRun
		for _, l := range r.links {
			if res := l.results[s]; res != nil {
				runs = append(runs, aggregate.HostRun{Name: "host " + l.host.Label, Result: res, Intervals: l.ticks[s]})
			}
		}
		switch len(runs) {
		case 0:
			continue
		case 1:
			res := runs[0].Result
			res.Notes = append(res.Notes, fmt.Sprintf("only %s of %d hosts sent a result", strings.TrimPrefix(runs[0].Name, "host "), len(r.links)))
			out.Results, out.Intervals = append(out.Results, res), append(out.Intervals, runs[0].Intervals)
			continue
		}
		merged, ivs, err := aggregate.MergeHosts(runs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(runs) < len(r.links) {
			merged.Interrupted = true
			merged.Notes = append(merged.Notes, fmt.Sprintf("partial: %d of %d hosts sent a result", len(runs), len(r.links)))
		}
		out.Results, out.Intervals = append(out.Results, merged), append(out.Intervals, ivs)
	}
	return out, errors.Join(errs...)
}
