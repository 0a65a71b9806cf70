package interrupt

import (
	"strings"
	"testing"
	"time"
)

// stopper is a Stopper on a clock the test moves, whose stderr moves it
// by write as it is written (a slow terminal or a full pipe).
func stopper(write time.Duration) (*Stopper, *int, *int, *strings.Builder, *time.Time) {
	var cancels, exits int
	var stderr strings.Builder
	now := time.Unix(1000, 0)
	s := &Stopper{
		Cancel: func() { cancels++ },
		Exit:   func() { exits++ },
		Stderr: writerFunc(func(p []byte) (int, error) { now = now.Add(write); return stderr.Write(p) }),
		Grace:  Grace,
		Now:    func() time.Time { return now },
	}
	return s, &cancels, &exits, &stderr, &now
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// One interrupt delivered twice (GNU timeout signals the command, then
// its process group) is one: the run is canceled once and cleans up.
func TestASignalDeliveredTwiceIsOneInterrupt(t *testing.T) {
	s, cancels, exits, stderr, now := stopper(0)
	s.Interrupt()
	*now = now.Add(Grace / 10)
	s.Interrupt()
	*now = now.Add(Grace - Grace/10 - time.Nanosecond)
	s.Interrupt()
	if *cancels != 1 || *exits != 0 {
		t.Fatalf("three signals within the grace: %d cancels, %d exits; want 1 cancel and no exit", *cancels, *exits)
	}
	if got := stderr.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "cleaning up") || !strings.Contains(got, "interrupt again to exit at once") {
		t.Errorf("stderr %q; want one line saying it cleans up and what a second interrupt does", got)
	}
	// The user's own second interrupt, after the grace, exits at once.
	*now = now.Add(time.Nanosecond)
	s.Interrupt()
	if *exits != 1 || !strings.HasSuffix(stderr.String(), "cephbench: interrupted again, exiting without cleanup\n") {
		t.Errorf("an interrupt after the grace: %d exits, stderr %q; want it to exit saying so", *exits, stderr.String())
	}
}

// A signal queued while the first one's line was still being written
// (stderr slower than the grace) came before the user could read it:
// it is the same interrupt too.
func TestASignalBeforeTheLineWasWrittenIsTheSameInterrupt(t *testing.T) {
	s, cancels, exits, _, _ := stopper(10 * Grace)
	s.Interrupt()
	s.Interrupt()
	if *cancels != 1 || *exits != 0 {
		t.Fatalf("a signal queued behind a slow line: %d cancels, %d exits; want 1 cancel and no exit", *cancels, *exits)
	}
}
