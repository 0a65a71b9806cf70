package sleep

import (
	"context"
	"testing"
	"time"
)

var epoch = time.Now()

func now() time.Duration { return time.Since(epoch) }

// Until never returns before its moment, whichever of its three parts
// (timer, nanosleep, spin) the wait starts in.
func TestUntilNeverReturnsEarly(t *testing.T) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for _, wait := range []time.Duration{0, time.Microsecond, 30 * time.Microsecond, 300 * time.Microsecond, TimerLead, 5 * time.Millisecond} {
		for range 20 {
			deadline := now() + wait
			if !Until(context.Background(), timer, now, deadline) {
				t.Fatalf("Until(%v) reported an interrupt with none", wait)
			}
			if at := now(); at < deadline {
				t.Fatalf("Until(%v) returned %v before its moment", wait, deadline-at)
			}
		}
	}
}

// A wait cancelled in its timer part ends then, reporting false, and
// leaves the timer stopped for the next wait.
func TestUntilEndsWhenCancelled(t *testing.T) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	done := make(chan bool)
	go func() { done <- Until(ctx, timer, now, now()+time.Hour) }()
	select {
	case ok := <-done:
		if ok {
			t.Error("a cancelled wait reported that it reached its moment")
		}
	case <-time.After(time.Minute):
		t.Fatal("a wait of an hour cancelled after 10ms had not ended a minute later")
	}
	deadline := now() + time.Millisecond
	if !Until(context.Background(), timer, now, deadline) || now() < deadline {
		t.Error("the timer a cancelled wait left did not serve the next")
	}
}

// BenchmarkUntil reports how late Until wakes (ns past its moment) for a
// wait of each length, and its CPU per wait through ns/op less the wait.
func BenchmarkUntil(b *testing.B) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for _, wait := range []time.Duration{20 * time.Microsecond, 100 * time.Microsecond, 500 * time.Microsecond, 5 * time.Millisecond} {
		b.Run(wait.String(), func(b *testing.B) {
			var late time.Duration
			for b.Loop() {
				deadline := now() + wait
				Until(context.Background(), timer, now, deadline)
				late += now() - deadline
			}
			b.ReportMetric(float64(late)/float64(b.N), "late-ns/op")
		})
	}
}
