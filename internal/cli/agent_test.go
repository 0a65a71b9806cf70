package cli

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/cephbench/cephbench/agent"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// "cephbench agent --stdio" speaks the protocol on the command's stdin and
// stdout: a hello, then a job run from ready to done; its stdout is
// protocol lines alone, and it exits 0 when stdin closes.
func TestAgentSpeaksOnStdinAndStdout(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- Main(context.Background(), Env{Stdin: inR, Stdout: outW, Stderr: io.Discard}, []string{"agent", "--stdio"})
		outW.Close()
	}()
	msgs := make(chan agent.Message, 100)
	go func() {
		defer close(msgs)
		dec := agent.NewDecoder(outR)
		for {
			m, err := dec.Decode()
			if err != nil {
				if err != io.EOF {
					t.Errorf("stdout is not protocol lines alone: %v", err)
				}
				return
			}
			msgs <- m
		}
	}()
	next := func() agent.Message {
		t.Helper()
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatal("the agent's stdout ended")
			}
			return m
		case <-time.After(5 * time.Second):
			t.Fatal("no message from the agent in 5 s")
		}
		return nil
	}
	enc := agent.NewEncoder(inW)
	if h, ok := next().(*agent.Hello); !ok || h.Protocol != agent.Protocol {
		t.Fatalf("first message %v, want a hello", h)
	}
	st := step.Step{Name: "n", Front: step.Front{Command: "bench"}, Workload: spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 100, BlockSize: 4096, Workers: 1, QueueDepth: 1, TotalOps: 1000,
	}}
	if err := enc.Encode(&agent.Job{Job: frontend.Job{Command: "bench", Steps: []step.Step{st}}}); err != nil {
		t.Fatal(err)
	}
	var types []string
	for {
		m := next()
		types = append(types, m.Type())
		if _, ok := m.(*agent.Ready); ok {
			if err := enc.Encode(&agent.Start{At: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		if r, ok := m.(*agent.Result); ok && r.Result.Ops["read"].Ops != 1000 {
			t.Errorf("the result has %d reads, want 1000", r.Result.Ops["read"].Ops)
		}
		if _, ok := m.(*agent.Done); ok {
			break
		}
	}
	if len(types) < 3 || types[0] != "ready" || types[len(types)-2] != "result" {
		t.Errorf("messages %v; want ready, ticks, result, done", types)
	}
	inW.Close()
	select {
	case code := <-exit:
		if code != ExitOK {
			t.Errorf("exit %d when stdin closed, want 0", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the agent did not exit when stdin closed")
	}
}

func TestAgentWithoutStdioIsAUsageError(t *testing.T) {
	code, stdout, stderr := cephbench(t, context.Background(), "agent")
	wantUsageError(t, "agent without --stdio", code, stdout, stderr)
}
