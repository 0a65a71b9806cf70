// Package netresult is the result of cephbench net, a network test: its
// parameters and both ends' figures, as saved in JSON. It is apart from
// netbench, which runs the test, so that what reads results links no
// network code.
package netresult

import (
	"fmt"
	"time"

	"github.com/cephbench/cephbench/internal/io/atomicfile"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// Mode says which way the data flows.
type Mode string

// The modes, as iperf3 names them.
const (
	Forward Mode = "forward" // client to server
	Reverse Mode = "reverse" // server to client
	Bidir   Mode = "bidir"   // both at once, on separate connections
)

// Direction is the way one stream's data flows.
type Direction string

// The directions.
const (
	Up   Direction = "up"   // client to server
	Down Direction = "down" // server to client
)

// Limits of Params, checked by both ends.
const (
	MaxStreams  = 128
	MinBuffer   = 1 << 10
	MaxBuffer   = 16 << 20
	MaxDuration = 24 * time.Hour
	// MaxBuffers bounds the memory of one end's buffers, streams times
	// the write size.
	MaxBuffers   = 512 << 20
	defaultWrite = 128 << 10
)

// Params describe a test; the client sends them to the server.
type Params struct {
	Mode Mode `json:"mode"`
	// Streams is the number of TCP connections per direction.
	Streams int `json:"streams"`
	// Duration is how long the data flows.
	Duration spec.Duration `json:"duration"`
	// Buffer is the size of each write and read, in bytes (0: 128 KiB).
	Buffer int `json:"buffer_bytes"`
	// RTT is how long the ping-pong phase before the throughput phase
	// lasts; zero skips it.
	RTT spec.Duration `json:"rtt"`
}

// Validate says what is wrong with p, if anything, in terms of the
// client's flags.
func (p *Params) Validate() error {
	switch {
	case p.Mode != Forward && p.Mode != Reverse && p.Mode != Bidir:
		return fmt.Errorf("unknown mode %q", p.Mode)
	case p.Streams < 1 || p.Streams > MaxStreams:
		return fmt.Errorf("--parallel %d: want 1 to %d", p.Streams, MaxStreams)
	case p.Duration <= 0 || p.Duration.D() > MaxDuration:
		return fmt.Errorf("--time %s: want more than 0 and at most %s", p.Duration, MaxDuration)
	case p.Buffer != 0 && (p.Buffer < MinBuffer || p.Buffer > MaxBuffer):
		return fmt.Errorf("--length %d: want %d to %d bytes", p.Buffer, MinBuffer, MaxBuffer)
	case p.RTT < 0 || p.RTT.D() > MaxDuration:
		return fmt.Errorf("--rtt %s: want 0 (none) to %s", p.RTT, MaxDuration)
	case len(p.Directions())*p.Streams*p.WriteSize() > MaxBuffers:
		return fmt.Errorf("%d streams of --length %s need %d MiB of buffers; at most %d MiB",
			len(p.Directions())*p.Streams, spec.Size(p.WriteSize()), len(p.Directions())*p.Streams*p.WriteSize()>>20, MaxBuffers>>20)
	}
	return nil
}

// Directions returns the directions of p's mode.
func (p *Params) Directions() []Direction {
	switch p.Mode {
	case Forward:
		return []Direction{Up}
	case Reverse:
		return []Direction{Down}
	}
	return []Direction{Up, Down}
}

// Describe says what the test is, in the client's flags' terms.
func (p *Params) Describe() string {
	streams := "1 stream"
	if p.Streams > 1 {
		streams = fmt.Sprintf("%d streams", p.Streams)
	}
	s := fmt.Sprintf("%s, %s, %s, %s writes", p.Mode, streams, p.Duration, spec.Size(p.WriteSize()))
	if p.RTT > 0 {
		s += fmt.Sprintf(", %s of ping-pong first", p.RTT)
	}
	return s
}

// WriteSize is the size of each write and read, in bytes.
func (p *Params) WriteSize() int {
	if p.Buffer == 0 {
		return defaultWrite
	}
	return p.Buffer
}

// Schema identifies the format of a Result; it changes when a field
// changes meaning.
const Schema = "cephbench.net/v1"

// Result is one test, with the figures of both ends. Counts are bytes,
// rates bits per second (10^9 per Gbit/s, as iperf3), times seconds.
type Result struct {
	Schema  string `json:"schema"`
	Version string `json:"cephbench_version"`
	Name    string `json:"name"`
	// Server is the address tested, host:port.
	Server        string      `json:"server"`
	Params        Params      `json:"params"`
	ClientHost    result.Host `json:"client_host"`
	ServerHost    result.Host `json:"server_host"`
	ServerVersion string      `json:"server_cephbench_version"`
	Start         time.Time   `json:"start"`
	End           time.Time   `json:"end"`
	// Interrupted is true when the test was stopped before its time (the
	// figures cover what ran).
	Interrupted bool     `json:"interrupted,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	// Plan places the result in a plan run; nil for a single command's.
	Plan *result.PlanStep `json:"plan,omitempty"`

	// Up and Down sum the streams of each direction the test ran.
	Up      *Throughput    `json:"up,omitempty"`
	Down    *Throughput    `json:"down,omitempty"`
	Streams []StreamResult `json:"streams"`
	// Series is the client's count of each second, ServerSeries the
	// server's: each end counts what it sent or received.
	Series       []Interval `json:"series"`
	ServerSeries []Interval `json:"server_series"`
	// RTT is the ping-pong phase; nil when it was skipped.
	RTT *RTT `json:"rtt,omitempty"`
}

// Count is one end's figures for a stream or a direction.
type Count struct {
	Bytes int64 `json:"bytes"`
	// Seconds runs from the start to the last write (sender) or to the
	// end of the stream (receiver, which drains what was in flight).
	Seconds    float64 `json:"seconds"`
	BitsPerSec float64 `json:"bits_per_sec"`
	// Retransmits are the kernel's count of retransmitted segments
	// (TCP_INFO tcpi_total_retrans); only the sender has them.
	Retransmits int64 `json:"retransmits,omitempty"`
}

// StreamResult is one TCP connection as both ends counted it.
type StreamResult struct {
	ID       int       `json:"id"`
	Dir      Direction `json:"direction"`
	Sender   Count     `json:"sender"`
	Receiver Count     `json:"receiver"`
}

// Throughput is one direction: its streams summed, over the longest
// stream's time.
type Throughput struct {
	Streams  int   `json:"streams"`
	Sender   Count `json:"sender"`
	Receiver Count `json:"receiver"`
	// PerSecond is the bit rate of each whole second of the client's
	// series (the final partial second is left out).
	PerSecond metrics.Stats `json:"bits_per_sec_per_second"`
}

// Interval is one second (or the final part of one) of the throughput
// phase as one end counted it.
type Interval struct {
	// Start and End are seconds since the throughput phase started.
	Start   float64          `json:"start"`
	End     float64          `json:"end"`
	Up      *IntervalSum     `json:"up,omitempty"`
	Down    *IntervalSum     `json:"down,omitempty"`
	Streams []StreamInterval `json:"streams"`
}

// IntervalSum is one direction's streams summed over an interval.
type IntervalSum struct {
	Bytes       int64   `json:"bytes"`
	BitsPerSec  float64 `json:"bits_per_sec"`
	Retransmits int64   `json:"retransmits,omitempty"`
}

// StreamInterval is one stream over an interval; retransmits only on the
// end that sends.
type StreamInterval struct {
	ID          int       `json:"id"`
	Dir         Direction `json:"direction"`
	Bytes       int64     `json:"bytes"`
	Retransmits int64     `json:"retransmits,omitempty"`
}

// RTT is the ping-pong phase: one connection, one message in flight, each
// round trip timed from the write to the end of the echo's read.
type RTT struct {
	RoundTrips   int64   `json:"round_trips"`
	MessageBytes int     `json:"message_bytes"`
	Seconds      float64 `json:"seconds"`
	// Latency is in nanoseconds, from the HDR histogram of every round
	// trip (the per-second histograms merged by adding counts).
	Latency metrics.Latency  `json:"latency"`
	Series  []metrics.Second `json:"series"`
	// Histogram is the HDR histogram (ns), V2 compressed, base64.
	Histogram string `json:"histogram"`
}

// SaveNew writes r as indented JSON to path, creating its directory, or,
// when that name is taken, to the first free of path-2.json, ...; the
// file appears whole and never in another's place. It returns where r
// went.
func (r *Result) SaveNew(path string) (string, error) {
	return atomicfile.CreateNewJSON(path, r)
}
