package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/step"
)

// Options are how an agent serves.
type Options struct {
	// Host names the agent in its hello; empty is the host's name.
	Host string
	// Now is the agent's clock: the time its pongs report and its start
	// times and deadlines are read against; nil is time.Now.
	Now func() time.Time
	// Results is the folder where the steps' results and tick logs are
	// saved on the agent, each under its own file name; empty saves
	// none (the coordinator gets them on stdout either way).
	Results string
	// Stderr gets the agent's own diagnostics and what a job prints for
	// its user (its notes); nil discards them.
	Stderr io.Writer
}

// Why a running job was stopped, as its "error" message says.
var (
	errStdinClosed = errors.New("stdin closed")
	errStopped     = errors.New("stopped by the coordinator")
	errDeadline    = errors.New("the job's deadline passed")
)

// Serve speaks the protocol on in and out: it writes a hello, then runs
// the jobs it is sent, one at a time, until in ends or ctx is done. A
// ping is answered as soon as it is read, whatever runs. A running job
// is stopped when in ends, on a stop, at its deadline or when ctx ends:
// its I/O stops, what it wrote is removed and what it measured is still
// sent while out takes it. Once a job has set a Silence, a coordinator
// silent that long is taken for lost: a job still running is stopped the
// same way, nothing more is sent (out may lead nowhere and block), and
// Serve returns. Serve returns once the job has cleaned up: nil at the
// end of in, step.ErrInterrupted when ctx ended, or the reason it could
// not go on (unreadable input, out failing, a silent coordinator). Writes to out are serialised, one message a write. A
// reader blocked in in's Read is left to end with in.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.Host == "" {
		opts.Host, _ = os.Hostname() // unnamed if the host has none
	}
	ctx, lose := context.WithCancelCause(ctx)
	defer lose(nil)
	a := &agent{opts: opts, enc: NewEncoder(out), lose: lose}
	defer a.close()
	if !a.send(&Hello{Version: result.Version, Protocol: Protocol, Histogram: metrics.StandardHistogram(), Host: opts.Host}) {
		return context.Cause(ctx)
	}

	msgs := make(chan Message)
	readErr := make(chan error, 1)
	quit := make(chan struct{})
	defer close(quit)
	heard := make(chan struct{}, 1)
	go a.read(in, msgs, heard, readErr, quit)
	silence := newWatchdog()
	defer silence.disarm()

	// The job's done is sent here, once its goroutine has ended, so
	// that a coordinator that read it finds the agent free for the next.
	var job *running
	var jobDone <-chan struct{}
	stopJob := func(cause error) {
		if job != nil {
			job.cancel(cause)
			<-job.done
			a.send(&Done{})
		}
	}
	for {
		select {
		case m := <-msgs:
			switch m := m.(type) {
			case *Job:
				if job != nil {
					a.send(&Error{Message: "a job is already running", Usage: true})
					continue
				}
				job = a.start(ctx, m)
				jobDone = job.done
				silence.arm(m.Silence)
			case *Start:
				if job == nil {
					a.diag("a start with no job running: ignored")
					continue
				}
				select {
				case job.starts <- m.At:
				default:
					a.diag("a start no step waits for: ignored")
				}
			case *Stop:
				if job != nil {
					job.cancel(errStopped)
				}
			default:
				a.diag("a %s message is not for an agent: ignored", m.Type())
			}
		case <-jobDone:
			// The watch goes on: a coordinator lost while its job was
			// ending would otherwise never be noticed.
			a.send(&Done{})
			job, jobDone = nil, nil
		case <-heard:
			silence.reset()
		case <-silence.fired():
			err := fmt.Errorf("the coordinator said nothing for %s", silence.after)
			a.lost.Store(true)
			stopJob(err)
			return err
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				stopJob(errStdinClosed)
				return nil
			}
			err = fmt.Errorf("reading stdin: %w", err)
			a.send(&Error{Message: err.Error(), Usage: true})
			stopJob(err)
			return err
		case <-ctx.Done():
			cause := context.Cause(ctx)
			stopJob(cause)
			if errors.Is(cause, context.Canceled) {
				return step.ErrInterrupted
			}
			return cause
		}
	}
}

// agent is one Serve's state shared by its goroutines.
type agent struct {
	opts Options
	lose context.CancelCauseFunc // ends Serve when out fails

	mu     sync.Mutex
	enc    *Encoder
	failed bool // out failed or Serve returned: nothing more is written
	// lost is set, without waiting for a write in progress, once the
	// coordinator is taken for gone: nothing more is written, since out
	// may never drain again.
	lost atomic.Bool
}

// send writes m, and reports whether out took it. The first failure ends
// Serve, and what follows is not written.
func (a *agent) send(m Message) bool {
	if a.lost.Load() {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failed {
		return false
	}
	if err := a.enc.Encode(m); err != nil {
		a.failed = true
		a.lose(fmt.Errorf("writing to stdout: %w", err))
		return false
	}
	return true
}

// close stops the writes: nothing reaches out once Serve returned.
func (a *agent) close() {
	a.mu.Lock()
	a.failed = true
	a.mu.Unlock()
}

// diag writes one line of the agent's own on stderr.
func (a *agent) diag(format string, args ...any) {
	fmt.Fprintf(a.opts.Stderr, "cephbench agent: "+format+"\n", args...)
}

// read decodes in's messages and hands them to Serve, answering pings
// itself so that a pong never waits behind a running step, and says on
// heard that something came; it ends with in's end or error, or when
// quit is closed.
func (a *agent) read(in io.Reader, msgs chan<- Message, heard chan<- struct{}, readErr chan<- error, quit <-chan struct{}) {
	dec := NewDecoder(in)
	for {
		m, err := dec.Decode()
		if err != nil {
			readErr <- err
			return
		}
		select {
		case heard <- struct{}{}:
		default: // Serve has yet to take the last one
		}
		if p, ok := m.(*Ping); ok {
			a.send(&Pong{Sent: p.Sent, AgentNs: a.opts.Now().UnixNano()})
			continue
		}
		select {
		case msgs <- m:
		case <-quit:
			return
		}
	}
}

// running is a job in progress.
type running struct {
	cancel context.CancelCauseFunc
	starts chan time.Time // the start times sent, one per ready, in order
	done   chan struct{}  // closed once the job has ended and sent all but its done
}

// start runs m's job in its own goroutine.
func (a *agent) start(ctx context.Context, m *Job) *running {
	ctx, cancel := context.WithCancelCause(ctx)
	r := &running{cancel: cancel, starts: make(chan time.Time, max(1, len(m.Job.Steps))), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer cancel(nil)
		a.run(ctx, m, r.starts)
	}()
	return r
}

// run runs m's job to its end and sends its error, if any.
func (a *agent) run(ctx context.Context, m *Job, starts <-chan time.Time) {
	if !m.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, m.Deadline.Sub(a.opts.Now()), errDeadline)
		defer cancel()
	}
	if ctx.Err() != nil {
		a.send(&Error{Message: "not started: " + context.Cause(ctx).Error()})
		return
	}
	err := frontend.Run(ctx, a.local(m.Job), frontend.IO{Stdout: io.Discard, Stderr: a.opts.Stderr, Hooks: a.hooks(starts)})
	switch {
	case err == nil:
	case errors.Is(err, step.ErrInterrupted) && ctx.Err() != nil:
		a.send(&Error{Message: "interrupted: " + context.Cause(ctx).Error()})
	default:
		a.send(&Error{Message: strings.Join(strings.Fields(err.Error()), " "), Usage: engine.IsUsage(err)})
	}
}

// hooks are how the agent follows step i: its gate sends ready and waits
// for the start and its time, its ticks and result are sent as they come.
func (a *agent) hooks(starts <-chan time.Time) func(i int) step.Hooks {
	return func(i int) step.Hooks {
		return step.Hooks{
			Gate: func(ctx context.Context) error {
				if ctx.Err() != nil || !a.send(&Ready{Step: i}) {
					return errors.New("not started")
				}
				var at time.Time
				select {
				case at = <-starts:
				case <-ctx.Done():
					return ctx.Err()
				}
				wait := time.NewTimer(at.Sub(a.opts.Now()))
				defer wait.Stop()
				select {
				case <-wait.C:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			},
			Tick: func(t metrics.Tick) {
				w, err := EncodeTick(t)
				if err != nil {
					a.diag("step %d: a tick at %gs: %v", i, t.T, err)
					return
				}
				a.send(&Tick{Step: i, Tick: w})
			},
			Result:  func(r *result.Result) { a.send(&Result{Step: i, Result: r}) },
			Cluster: func(s cluster.Sample) { a.send(&Cluster{Step: i, Sample: s}) },
		}
	}
}

// local is j as it runs here: its results saved in the agent's folder,
// or not at all, and nothing printed to a file the coordinator named.
func (a *agent) local(j frontend.Job) frontend.Job {
	j.Steps = slices.Clone(j.Steps)
	taken := map[string]bool{}
	for i := range j.Steps {
		st := &j.Steps[i]
		if st.Save == "" || a.opts.Results == "" {
			st.Save = ""
			continue
		}
		name := filepath.Base(st.Save)
		if taken[name] {
			name = fmt.Sprintf("%02d-%s", i+1, name)
		}
		taken[name] = true
		st.Save = filepath.Join(a.opts.Results, name)
	}
	if j.Fio != nil {
		f := *j.Fio
		f.Output, f.StatusInterval, f.Results = "", 0, a.opts.Results
		j.Fio = &f
	}
	if j.S3 != nil {
		s := *j.S3
		s.Results = a.opts.Results
		j.S3 = &s
	}
	if j.Disk != nil {
		d := *j.Disk
		d.Results = a.opts.Results
		j.Disk = &d
	}
	return j
}

// watchdog times a job's silence: it fires once nothing has been heard
// for after since it was armed or last reset. Disarmed, it never fires.
// Used by Serve's goroutine alone.
type watchdog struct {
	after time.Duration
	timer *time.Timer
}

func newWatchdog() *watchdog {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &watchdog{timer: t}
}

// arm starts timing a silence of after; zero disarms.
func (w *watchdog) arm(after time.Duration) {
	w.after = after
	w.reset()
}

// reset starts the silence again, if armed.
func (w *watchdog) reset() {
	if w.after > 0 {
		w.timer.Reset(w.after)
	}
}

func (w *watchdog) disarm() {
	w.after = 0
	w.timer.Stop()
}

// fired is the channel that fires at the end of a silence.
func (w *watchdog) fired() <-chan time.Time { return w.timer.C }
