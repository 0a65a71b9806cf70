package agent

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/fuzztest"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// FuzzDecode: lines from another host (a coordinator's to an agent, an
// agent's to a coordinator) decode into messages until the end or a
// one-line error; a message that decodes encodes into a line that decodes
// into the same message, and a tick's histograms decode or give a
// one-line error. Seeds: one line of each message, as this version sends
// them.
func FuzzDecode(f *testing.F) {
	at := time.Date(2026, 12, 1, 19, 0, 0, 123456789, time.UTC)
	h := metrics.NewHistogram()
	h.RecordValue(70)
	h.RecordValue(105_000)
	tick, _ := EncodeTick(metrics.Tick{
		Second:     metrics.Second{T: 1, Dur: 1, Kinds: map[string]metrics.KindSecond{"read": metrics.NewKindSecond(2, 8192, 0, 70, h)}},
		Histograms: map[string]*hdr.Histogram{"read": h}, Started: 2, Finished: 2,
	})
	for _, m := range []Message{
		&Hello{Version: "1.2.3", Protocol: Protocol, Histogram: metrics.StandardHistogram(), Host: "client-7"},
		&Job{Job: frontend.Job{Command: "bench", Steps: []step.Step{{Name: "s", Workload: spec.Workload{Target: spec.Target{Scheme: "null"}}}}}, Deadline: at, Silence: 5 * time.Second},
		&Ready{Step: 2}, &Start{At: at}, &Tick{Step: 0, Tick: tick}, &Error{Message: "bad block size", Usage: true},
		&Ping{Sent: at}, &Pong{Sent: at, AgentNs: at.UnixNano() + 5}, &Stop{}, &Done{},
	} {
		var line bytes.Buffer
		_ = NewEncoder(&line).Encode(m)
		f.Add(line.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dec := NewDecoder(bytes.NewReader(b))
		for {
			m, err := dec.Decode()
			if errors.Is(err, io.EOF) {
				return
			}
			fuzztest.OneLine(t, b, err)
			if err != nil {
				return
			}
			first := encoded(t, m)
			back, err := NewDecoder(bytes.NewReader(first)).Decode()
			if err != nil {
				t.Fatalf("%s, as encoded, does not decode: %v", first, err)
			}
			if again := encoded(t, back); !bytes.Equal(first, again) {
				t.Fatalf("a message encoded and decoded changed:\n%s\nbecame\n%s", first, again)
			}
			if tick, ok := m.(*Tick); ok {
				_, err := tick.Tick.Decode()
				fuzztest.OneLine(t, b, err)
				_, _, err = tick.Tick.Packed()
				fuzztest.OneLine(t, b, err)
			}
		}
	})
}

func encoded(t *testing.T, m Message) []byte {
	t.Helper()
	var line bytes.Buffer
	if err := NewEncoder(&line).Encode(m); err != nil {
		t.Fatalf("a message that decoded does not encode: %v", err)
	}
	return line.Bytes()
}
