package multihost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/transport/ssh"
)

// Command is how a command line runs its job on many hosts over ssh: the
// --hosts flags and their companions.
type Command struct {
	// Hosts are ssh's names of the hosts.
	Hosts []string
	// SSH is how ssh is run.
	SSH ssh.Options
	// Remote is the cephbench program on the hosts.
	Remote string
	// Push, when a host's Remote is missing or another version, runs a
	// copy of Local there instead (Program); an empty Local is this
	// process's executable.
	Push  bool
	Local string
	// MaxSkew is Options.MaxSkew.
	MaxSkew time.Duration
	// PerHost adds each host's row beneath each merged second of the
	// table, and each host's line beneath the merged summary.
	PerHost bool
	// SharedTarget is Options.SharedTarget.
	SharedTarget bool
	// OnFailure is what a host that fails or is lost does to the run:
	// "stop" (or empty) stops every host; "continue" goes on without it
	// (Options.GoOn), said in a line on out.Stderr.
	OnFailure string
}

// Run runs j on the hosts at once and prints, to out, each step as its
// command prints it (frontend.Present) from the merged seconds and
// result, or for fio its output of the merged jobs at the end; the line
// naming the hosts, and any host gone on without, go to out.Stderr. Each
// step's merged result is saved where the step says. What c cannot do is
// refused before any host is reached, as *engine.UsageError; other errors
// are Run's, and ssh's for a host it cannot reach.
func (c Command) Run(ctx context.Context, j frontend.Job, out frontend.IO) error {
	if err := c.check(j); err != nil {
		return err
	}
	programs, err := c.programs(ctx)
	if err != nil {
		return err
	}
	agents := make([][]string, len(programs))
	for i, p := range programs {
		agents[i] = []string{p, "agent", "--stdio"}
	}
	hosts, closeAll, err := OverSSH(ctx, c.Hosts, agents, c.SSH)
	if err != nil {
		return err
	}
	defer closeAll()
	opts := Options{MaxSkew: c.MaxSkew, GoOn: c.OnFailure == "continue", SharedTarget: c.SharedTarget}
	heading := fmt.Sprintf("%s on %d hosts, each running it in full: %s", j.Command, len(c.Hosts), strings.Join(c.Hosts, ", "))
	_, err = Printing{Heading: heading, PerHost: c.PerHost}.Run(ctx, j, hosts, opts, out)
	return err
}

// Printing is how a run on many hosts prints, whatever reached them.
type Printing struct {
	// Heading is said on stderr once every host has checked in and the
	// run is on: a host refused before gives its one line alone.
	Heading string
	// PerHost adds each host's row beneath each merged second of the
	// table, and each host's line beneath the merged summary.
	PerHost bool
}

// Run runs j on hosts with opts, whose Opened, HostTicks and Lost it
// sets, and prints to out each step as its command prints it
// (frontend.Present) from the merged seconds and result, or for fio its
// output of the merged jobs at the end; the heading, and any host gone
// on without, go to out.Stderr. It returns Run's outcome and error.
func (p Printing) Run(ctx context.Context, j frontend.Job, hosts []Host, opts Options, out frontend.IO) (*Outcome, error) {
	j, done, err := frontend.PrepareResults(j)
	if err != nil {
		return nil, err
	}
	defer done()
	text := out.Stdout
	if j.Format == "json" {
		text = out.Stderr
	}
	// Each step prints as its command prints it (rados bench's table for
	// rados bench...), from the hosts' seconds added; fio prints its
	// output of every job at the end.
	presenters := frontend.Presenters(j, out)
	rows := &hostRows{w: text, host: map[string][]metrics.Tick{}}
	for _, h := range hosts {
		rows.labels = append(rows.labels, h.Label)
	}
	follow := &hostFollow{follow: out.HostTicks}
	opts.Opened = func(s int) metrics.Subscriber {
		// Said once every host has checked in and the run is on: a host
		// refused before gives its one line alone.
		if s == 0 {
			fmt.Fprintln(out.Stderr, p.Heading)
		}
		follow.open(s, rows.labels)
		if j.Command == "fio" {
			return nil
		}
		return rows.beneath(presenters[s].Opened())
	}
	opts.Lost = func(_ string, err error) {
		fmt.Fprintf(out.Stderr, "cephbench: %s; going on with the others\n", strings.Join(strings.Fields(err.Error()), " "))
	}
	switch {
	case p.PerHost && out.HostTicks != nil:
		opts.HostTicks = func(label string, t metrics.Tick) { rows.hostTick(label, t); follow.tick(label, t) }
	case p.PerHost:
		opts.HostTicks = rows.hostTick
	case out.HostTicks != nil:
		opts.HostTicks = follow.tick
	}
	outcome, runErr := Run(ctx, j, hosts, opts)
	follow.end()
	if j.Command == "fio" {
		return outcome, errors.Join(writeFio(out, j, outcome), runErr)
	}
	for k, res := range outcome.Results {
		if res == nil {
			continue
		}
		if err := presenters[k].Done(res, outcome.Saved[k]); err != nil {
			return outcome, err
		}
		for i, h := range res.Hosts {
			if p.PerHost && i < len(outcome.Labels[k]) {
				report.HostLine(text, outcome.Labels[k][i], h)
			}
		}
	}
	return outcome, runErr
}

// check refuses, before any host is reached, what c cannot do: an
// unknown OnFailure, no hosts, a job the hosts cannot share as c asks.
func (c Command) check(j frontend.Job) error {
	switch {
	case c.OnFailure != "" && c.OnFailure != "stop" && c.OnFailure != "continue":
		return engine.Usagef("--on-host-failure %q: want stop or continue", c.OnFailure)
	case len(c.Hosts) == 0:
		return engine.Usagef("no hosts")
	}
	var err error
	if c.SharedTarget {
		_, err = frontend.InRegion(j, 0, len(c.Hosts))
	} else {
		_, err = frontend.ForHost(j, unsafeLabel.ReplaceAllString(c.Hosts[0], "-"), len(c.Hosts))
	}
	return err
}

// writeFio prints fio's output of the merged results.
func writeFio(out frontend.IO, j frontend.Job, outcome *Outcome) error {
	if slices.IndexFunc(outcome.Results, func(r *result.Result) bool { return r != nil }) < 0 {
		return nil // nothing ran
	}
	saved := 0
	for _, s := range outcome.Saved {
		if s != "" {
			saved++
		}
	}
	if err := frontend.WriteFio(out.Stdout, j, outcome.Results); err != nil {
		return err
	}
	fmt.Fprintf(out.Stderr, "cephbench: %d merged results saved in %s\n", saved, j.Fio.Results)
	return nil
}

// programs are the cephbench programs to run on each host: Remote, or
// with Push what Program finds or copies, hosts probed in parallel.
func (c Command) programs(ctx context.Context) ([]string, error) {
	programs := make([]string, len(c.Hosts))
	if !c.Push {
		for i := range programs {
			programs[i] = c.Remote
		}
		return programs, nil
	}
	local := c.Local
	if local == "" {
		var err error
		if local, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	// Summed once: every host compares its copy with this binary.
	sum, err := fileSum(local)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(c.Hosts))
	var wg sync.WaitGroup
	for i, h := range c.Hosts {
		wg.Go(func() { programs[i], errs[i] = Program(ctx, h, c.Remote, local, sum, c.SSH) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // one line: the first host's
		}
	}
	return programs, nil
}

// hostRows prints, beneath each second of a step's table, each host's
// own (Options.HostTicks). Its methods are called from one goroutine.
type hostRows struct {
	w      io.Writer
	labels []string                  // the hosts, in order
	host   map[string][]metrics.Tick // each host's ticks not yet printed
	on     bool                      // a table is printed: its hosts' rows are kept for it
}

// beneath is table followed, each second, by the hosts' rows of that
// second; a nil table is none.
func (p *hostRows) beneath(table metrics.Subscriber) metrics.Subscriber {
	if table == nil {
		return nil
	}
	p.on = true
	return func(t metrics.Tick) {
		table(t)
		for _, label := range p.labels {
			ticks := p.host[label]
			n := 0
			// The host's ticks of this second: a merged second is the
			// latest of its hosts', and a host's next is a second later.
			for n < len(ticks) && ticks[n].T <= t.T+0.5 {
				if !t.Short {
					report.HostRow(p.w, label, ticks[n], t.Dur)
				}
				n++
			}
			p.host[label] = ticks[n:]
		}
	}
}

func (p *hostRows) hostTick(label string, t metrics.Tick) {
	if p.on {
		p.host[label] = append(p.host[label], t)
	}
}

// hostFollow gives each host's ticks of the step under way to the
// subscribers follow (frontend.IO.HostTicks) gives for it, if set. Its
// methods are called from one goroutine.
type hostFollow struct {
	follow func(i int, host string) (metrics.Subscriber, func())
	ticks  map[string]metrics.Subscriber
	ended  []func()
}

// open follows step s on hosts, labelled so, once the step before ended.
func (f *hostFollow) open(s int, hosts []string) {
	if f.follow == nil {
		return
	}
	f.end()
	f.ticks = map[string]metrics.Subscriber{}
	for _, h := range hosts {
		tick, ended := f.follow(s, h)
		f.ticks[h], f.ended = tick, append(f.ended, ended)
	}
}

func (f *hostFollow) tick(host string, t metrics.Tick) {
	if tick := f.ticks[host]; tick != nil {
		tick(t)
	}
}

// end says the step under way has ended.
func (f *hostFollow) end() {
	for _, ended := range f.ended {
		ended()
	}
	f.ended = nil
}
