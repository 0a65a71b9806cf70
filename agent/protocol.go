// Package agent runs jobs for a coordinator on another host: "cephbench
// agent --stdio" reads the coordinator's messages on stdin and writes its
// own on stdout, JSON lines, one message per line, each an object with a
// "type" field. It opens no port: the transport is whatever started it
// (ssh, a Kubernetes pod's logs).
//
// Agent to coordinator: "hello" first, then per job a "ready" for each
// step that opened its target, a "tick" a second per running step, a
// "cluster" per sample of a step's watch of its Ceph cluster, a
// "result" per step that ran, an "error" if the job failed, and "done";
// "pong" answers "ping" at any time. Coordinator to agent: "job", "start"
// (one per "ready", in order), "ping" and "stop".
package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
)

// Protocol is the version of the messages; an agent and a coordinator of
// different protocols refuse each other.
const Protocol = 2

// Message is one line of the protocol: one of the types below.
type Message interface {
	// Type is the message's "type" field.
	Type() string
}

// Hello is the agent's first message: what a coordinator checks before it
// sends a job, since results of another version or histogram settings do
// not merge.
type Hello struct {
	Version   string                    `json:"version"`
	Protocol  int                       `json:"protocol"`
	Histogram metrics.HistogramSettings `json:"histogram"`
	Host      string                    `json:"host"`
}

// Ready says that step Step of the job (its index in Job.Steps) has its
// target open and laid out; it waits for a Start.
type Ready struct {
	Step int `json:"step"`
}

// Tick is one interval of step Step's run.
type Tick struct {
	Step int      `json:"step"`
	Tick WireTick `json:"tick"`
}

// Cluster is one sample of the watch of step Step's cluster, as its tick
// log holds it: the coordinator's merged log keeps them.
type Cluster struct {
	Step   int            `json:"step"`
	Sample cluster.Sample `json:"sample"`
}

// Result is step Step's result as the agent saved it (its series is the
// step's ticks).
type Result struct {
	Step   int            `json:"step"`
	Result *result.Result `json:"result"`
}

// Error is why a job failed. Usage says it was bad input, found before
// any I/O.
type Error struct {
	Message string `json:"message"`
	Usage   bool   `json:"usage"`
}

// Pong answers a Ping at once: Sent is the ping's, AgentNs the agent's
// wall clock (Unix nanoseconds) when it read the ping.
type Pong struct {
	Sent    time.Time `json:"sent"`
	AgentNs int64     `json:"agent_ns"`
}

// Done ends a job: nothing more comes for it.
type Done struct{}

// Job asks the agent to run a job. The agent stops it at Deadline (none
// when zero), as when stdin closes or a Stop comes. With Silence (not
// zero), the agent also takes the coordinator for lost when nothing at
// all comes from it for that long, from this job on: it stops the job if
// it still runs and serves no more. A coordinator that sets it sends
// something (a ping will do) more often than that until it closes the
// agent's stdin, since a link that died does not close it.
type Job struct {
	Job      frontend.Job  `json:"job"`
	Deadline time.Time     `json:"deadline"`
	Silence  time.Duration `json:"silence_ns,omitempty"`
}

// Start answers a Ready: the step's measured I/O starts at At, on the
// agent's clock.
type Start struct {
	At time.Time `json:"at"`
}

// Ping asks for a Pong, to measure the agent's clock offset and the round
// trip.
type Ping struct {
	Sent time.Time `json:"sent"`
}

// Stop stops the running job: its I/O stops, what it wrote is removed and
// what it measured is still sent.
type Stop struct{}

func (Hello) Type() string   { return "hello" }
func (Ready) Type() string   { return "ready" }
func (Tick) Type() string    { return "tick" }
func (Result) Type() string  { return "result" }
func (Cluster) Type() string { return "cluster" }
func (Error) Type() string   { return "error" }
func (Pong) Type() string    { return "pong" }
func (Done) Type() string    { return "done" }
func (Job) Type() string     { return "job" }
func (Start) Type() string   { return "start" }
func (Ping) Type() string    { return "ping" }
func (Stop) Type() string    { return "stop" }

// messages makes an empty message of each type, for the decoder.
var messages = map[string]func() Message{
	"hello": func() Message { return &Hello{} }, "ready": func() Message { return &Ready{} },
	"tick": func() Message { return &Tick{} }, "result": func() Message { return &Result{} },
	"cluster": func() Message { return &Cluster{} },
	"error":   func() Message { return &Error{} }, "pong": func() Message { return &Pong{} },
	"done": func() Message { return &Done{} }, "job": func() Message { return &Job{} },
	"start": func() Message { return &Start{} }, "ping": func() Message { return &Ping{} },
	"stop": func() Message { return &Stop{} },
}

// Encoder writes messages, one line each. It is not safe for concurrent
// use: its user serialises the writes.
type Encoder struct{ w io.Writer }

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Encode writes m as one line, in one write.
func (e *Encoder) Encode(m Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding a %s message: %w", m.Type(), err)
	}
	typ, _ := json.Marshal(m.Type()) // a plain string
	line := append([]byte(`{"type":`), typ...)
	if len(body) > 2 { // fields follow: {"type":"x","a":...}
		line = append(line, ',')
	}
	line = append(append(line, body[1:]...), '\n')
	_, err = e.w.Write(line)
	return err
}

// MaxLine is the longest line a Decoder reads: a result with its cluster
// state fits many times over.
const MaxLine = 64 << 20

// Decoder reads messages, one a line; blank lines are skipped.
type Decoder struct {
	r    *bufio.Reader
	line int
}

// NewDecoder returns a decoder reading r.
func NewDecoder(r io.Reader) *Decoder { return &Decoder{r: bufio.NewReader(r)} }

// Decode returns the next message as a pointer to its type (*Hello, ...).
// It returns io.EOF at the end of the input; any other error names the
// line.
func (d *Decoder) Decode() (Message, error) {
	for {
		b, err := d.readLine()
		if err != nil {
			return nil, err
		}
		d.line++
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return nil, fmt.Errorf("line %d: not a message: %w", d.line, err)
		}
		mk, ok := messages[head.Type]
		if !ok {
			return nil, fmt.Errorf("line %d: unknown message type %q", d.line, head.Type)
		}
		m := mk()
		if err := json.Unmarshal(b, m); err != nil {
			return nil, fmt.Errorf("line %d: a %s message: %w", d.line, head.Type, err)
		}
		return m, nil
	}
}

// readLine reads one line without its newline; a last line without one
// counts.
func (d *Decoder) readLine() ([]byte, error) {
	var line []byte
	for {
		part, err := d.r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > MaxLine {
			return nil, fmt.Errorf("line %d: longer than %d bytes", d.line+1, MaxLine)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// WireTick is a metrics.Tick as a message carries it: each kind's counts
// and its interval histogram encoded as results encode histograms
// (HdrHistogram V2, compressed, base64), so that a coordinator adds the
// hosts' histograms exactly.
type WireTick struct {
	// T and Dur are the interval's end and length, in seconds since the
	// measurement started.
	T   float64 `json:"t"`
	Dur float64 `json:"dur"`
	// StartMs and EndMs are the interval's start and end in milliseconds
	// since the measurement started, as its histograms are stamped.
	StartMs int64               `json:"start_ms"`
	EndMs   int64               `json:"end_ms"`
	Kinds   map[string]WireKind `json:"kinds"`

	Started       int64    `json:"started"`
	Finished      int64    `json:"finished"`
	InFlight      int64    `json:"in_flight"`
	InFlightBytes int64    `json:"in_flight_bytes,omitempty"`
	Derived       []string `json:"derived,omitempty"`
	Short         bool     `json:"short,omitempty"`
	// MeanInFlight is metrics.Second's; absent from older agents.
	MeanInFlight float64 `json:"mean_in_flight,omitempty"`
}

// WireKind is one op kind's interval.
type WireKind struct {
	Ops    int64 `json:"ops"`
	Bytes  int64 `json:"bytes"`
	Errors int64 `json:"errors,omitempty"`
	LastNs int64 `json:"last_ns"`
	// Histogram is the latencies (ns) of the kind's ops in the interval.
	Histogram string `json:"histogram"`
}

// EncodeTick is t's wire form. Every histogram of a tick covers the same
// interval (the collector stamps them alike): StartMs and EndMs are taken
// from any of them.
func EncodeTick(t metrics.Tick) (WireTick, error) {
	w := WireTick{
		T: t.T, Dur: t.Dur, Kinds: make(map[string]WireKind, len(t.Kinds)),
		Started: t.Started, Finished: t.Finished, InFlight: t.InFlight, InFlightBytes: t.InFlightBytes,
		Derived: t.Derived, Short: t.Short, MeanInFlight: t.MeanInFlight,
	}
	for _, name := range slices.Sorted(maps.Keys(t.Kinds)) {
		k := t.Kinds[name]
		wk := WireKind{Ops: k.Ops, Bytes: k.Bytes, Errors: k.Errors, LastNs: k.LastNs}
		if h := t.Histograms[name]; h != nil {
			enc, err := h.EncodeV2()
			if err != nil {
				return WireTick{}, fmt.Errorf("encoding the %s histogram: %w", name, err)
			}
			wk.Histogram = string(enc)
			w.StartMs, w.EndMs = h.StartTimeMs(), h.EndTimeMs()
		}
		w.Kinds[name] = wk
	}
	return w, nil
}

// Packed is w's counts as a tick without histograms (each kind's ops,
// bytes, errors and last latency; no latency figures) and each kind's
// histogram decoded sparse: what adding it into a sum needs, at a
// fraction of Decode's cost.
func (w WireTick) Packed() (metrics.Tick, map[string]*hdr.PackedHistogram, error) {
	t := metrics.Tick{
		Second:  metrics.Second{T: w.T, Dur: w.Dur, Kinds: make(map[string]metrics.KindSecond, len(w.Kinds)), MeanInFlight: w.MeanInFlight},
		Started: w.Started, Finished: w.Finished, InFlight: w.InFlight, InFlightBytes: w.InFlightBytes,
		Derived: w.Derived, Short: w.Short,
	}
	hists := make(map[string]*hdr.PackedHistogram, len(w.Kinds))
	for name, k := range w.Kinds {
		t.Kinds[name] = metrics.KindSecond{Ops: k.Ops, Bytes: k.Bytes, Errors: k.Errors, LastNs: k.LastNs}
		if k.Histogram == "" {
			continue
		}
		h, err := hdr.DecodePacked([]byte(k.Histogram))
		if err != nil {
			return metrics.Tick{}, nil, fmt.Errorf("the %s histogram: %w", name, err)
		}
		if metrics.SettingsOfPacked(h) != metrics.StandardHistogram() {
			return metrics.Tick{}, nil, fmt.Errorf("the %s histogram's settings %+v are not this cephbench's", name, metrics.SettingsOfPacked(h))
		}
		hists[name] = h
	}
	return t, hists, nil
}

// Decode is the metrics.Tick w was encoded from: its counts and every
// histogram bucket exactly, and the figures made from them (each kind's
// mean, maximum and percentiles) as the agent had them. Its histograms
// are the caller's to keep.
func (w WireTick) Decode() (metrics.Tick, error) {
	t := metrics.Tick{
		Second:     metrics.Second{T: w.T, Dur: w.Dur, Kinds: make(map[string]metrics.KindSecond, len(w.Kinds)), MeanInFlight: w.MeanInFlight},
		Histograms: make(map[string]*hdr.Histogram, len(w.Kinds)),
		Started:    w.Started, Finished: w.Finished, InFlight: w.InFlight, InFlightBytes: w.InFlightBytes,
		Derived: w.Derived, Short: w.Short,
	}
	for name, k := range w.Kinds {
		h := metrics.NewHistogram()
		if k.Histogram != "" {
			var err error
			if h, err = hdr.Decode([]byte(k.Histogram)); err != nil {
				return metrics.Tick{}, fmt.Errorf("the %s histogram: %w", name, err)
			}
		}
		h.SetTag(name)
		h.SetStartTimeMs(w.StartMs)
		h.SetEndTimeMs(w.EndMs)
		t.Kinds[name] = metrics.NewKindSecond(k.Ops, k.Bytes, k.Errors, k.LastNs, h)
		t.Histograms[name] = h
	}
	return t, nil
}
