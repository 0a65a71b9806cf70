package agent

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	_ "github.com/cephbench/cephbench/engine/null"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

func TestMessagesRoundTripOneALine(t *testing.T) {
	at := time.Date(2026, 12, 1, 19, 0, 0, 123456789, time.UTC)
	sent := []Message{
		&Hello{Version: "1.2.3", Protocol: Protocol, Histogram: metrics.StandardHistogram(), Host: "client-7"},
		&Ready{Step: 2},
		&Error{Message: "bad block size", Usage: true},
		&Pong{Sent: at, AgentNs: at.UnixNano() + 5},
		&Done{},
		&Job{Job: frontend.Job{Command: "bench", Steps: []step.Step{{Name: "s", Workload: spec.Workload{Target: spec.Target{Scheme: "null"}}}}}, Deadline: at, Silence: 5 * time.Second},
		&Start{At: at},
		&Ping{Sent: at},
		&Stop{},
		&Cluster{Step: 1, Sample: cluster.Sample{At: 2.001, Every: 1, Health: "HEALTH_OK", PGStates: map[string]int{"active+clean": 8}, Client: &cluster.ClientIO{WriteOps: 120}}},
	}
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for _, m := range sent {
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(sent) {
		t.Fatalf("%d lines for %d messages:\n%s", len(lines), len(sent), buf.String())
	}
	for i, l := range lines {
		if want := `{"type":"` + sent[i].Type() + `"`; !strings.HasPrefix(l, want) {
			t.Errorf("line %d is %s, want it to start with %s", i+1, l, want)
		}
	}
	dec := NewDecoder(&buf)
	for i, want := range sent {
		got, err := dec.Decode()
		if err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("message %d came back as %#v, want %#v", i+1, got, want)
		}
	}
	if _, err := dec.Decode(); err != io.EOF {
		t.Errorf("after the last message: %v, want io.EOF", err)
	}
}

func TestDecodeErrorsNameTheLine(t *testing.T) {
	for in, want := range map[string]string{
		"{\"type\":\"ping\"}\n\nnot json\n":           "line 3: not a message",
		"{\"type\":\"ping\"}\n{\"type\":\"dance\"}\n": `line 2: unknown message type "dance"`,
		"{\"type\":\"start\",\"at\":\"yesterday\"}\n": "line 1: a start message",
	} {
		dec := NewDecoder(strings.NewReader(in))
		var err error
		for err == nil {
			_, err = dec.Decode()
		}
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("decoding %q: %v, want an error starting %q", in, err, want)
		}
	}
}

func TestALastLineWithoutNewlineIsAMessage(t *testing.T) {
	dec := NewDecoder(strings.NewReader(`{"type":"stop"}`))
	if m, err := dec.Decode(); err != nil || m.Type() != "stop" {
		t.Errorf("got %v, %v; want the stop message", m, err)
	}
}

// runTicks runs a null workload of a score of intervals (a loaded machine
// still ticks a few times) of mixed reads and
// writes and returns its ticks as the subscribers saw them, each with a
// copy of its histograms.
func runTicks(t *testing.T) []metrics.Tick {
	t.Helper()
	w := spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, BlockSize: 4096, ReadPercent: 70,
		Workers: 2, QueueDepth: 4, Duration: spec.Duration(time.Second), FileSize: 1 << 20,
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	var ticks []metrics.Tick
	keep := func(tk metrics.Tick) {
		hs := map[string]*hdr.Histogram{}
		for k, h := range tk.Histograms {
			hs[k] = hdr.Import(h.Export())
			hs[k].SetTag(h.Tag())
			hs[k].SetStartTimeMs(h.StartTimeMs())
			hs[k].SetEndTimeMs(h.EndTimeMs())
		}
		tk.Histograms = hs
		ticks = append(ticks, tk)
	}
	ctx := context.Background()
	sess, err := engine.Open(ctx, &w)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx)
	if _, err := runner.Run(ctx, sess, &w, runner.Options{Subscribers: []metrics.Subscriber{keep}, Interval: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if len(ticks) < 3 {
		t.Fatalf("%d ticks, want at least 3", len(ticks))
	}
	return ticks
}

func TestTicksRoundTripExactly(t *testing.T) {
	for i, tk := range runTicks(t) {
		tk.Derived = []string{"get-ttfb"} // the fields a null run leaves zero
		tk.InFlightBytes = 12345
		tk.Short = i == 1
		w, err := EncodeTick(tk)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := NewEncoder(&buf).Encode(&Tick{Step: 3, Tick: w}); err != nil {
			t.Fatal(err)
		}
		m, err := NewDecoder(&buf).Decode()
		if err != nil {
			t.Fatal(err)
		}
		msg := m.(*Tick)
		back, err := msg.Tick.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if msg.Step != 3 {
			t.Errorf("tick %d: step %d, want 3", i, msg.Step)
		}
		if !reflect.DeepEqual(back.Second, tk.Second) || back.Started != tk.Started || back.Finished != tk.Finished ||
			back.InFlight != tk.InFlight || back.InFlightBytes != tk.InFlightBytes || back.Short != tk.Short || !reflect.DeepEqual(back.Derived, tk.Derived) {
			t.Errorf("tick %d came back as\n%+v\nwant\n%+v", i, back, tk)
		}
		if len(back.Histograms) != len(tk.Histograms) {
			t.Errorf("tick %d: %d histograms, want %d", i, len(back.Histograms), len(tk.Histograms))
		}
		for kind, h := range tk.Histograms {
			got := back.Histograms[kind]
			if got == nil {
				t.Errorf("tick %d: no %s histogram", i, kind)
				continue
			}
			if !reflect.DeepEqual(got.Export().Counts, h.Export().Counts) || got.TotalCount() != h.TotalCount() {
				t.Errorf("tick %d: the %s histogram's buckets differ", i, kind)
			}
			if got.Tag() != kind || got.StartTimeMs() != h.StartTimeMs() || got.EndTimeMs() != h.EndTimeMs() {
				t.Errorf("tick %d: the %s histogram is tagged %q over %d..%d ms, want %q over %d..%d",
					i, kind, got.Tag(), got.StartTimeMs(), got.EndTimeMs(), kind, h.StartTimeMs(), h.EndTimeMs())
			}
		}
	}
}
