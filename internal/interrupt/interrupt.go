// Package interrupt is how a cephbench process takes SIGINT and SIGTERM:
// the first stops the run, which still cleans up; only an interrupt the
// user gives after being told so exits at once.
package interrupt

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Grace is how long after the first interrupt was acknowledged another
// signal is still taken as the same one. One keypress or one kill can
// arrive twice: GNU timeout, like a terminal's Ctrl-C, signals the
// command and then its process group.
const Grace = time.Second

// Stopper counts the interrupts of one process. Its zero value is not
// usable: every field but said and stopping must be set.
type Stopper struct {
	Cancel func()           // stops the run; its cleanup still runs
	Exit   func()           // ends the process at once
	Stderr io.Writer        // where the user is told what the interrupt does
	Grace  time.Duration    // see the package's Grace
	Now    func() time.Time // the clock Grace is measured on

	stopping bool
	said     time.Time
}

// Interrupt takes one SIGINT or SIGTERM. The first cancels and says,
// in one line, that a second exits at once; a signal that comes before
// that line was written (queued behind it) or within Grace after it is
// the same interrupt and does nothing. A later one calls Exit.
func (s *Stopper) Interrupt() {
	if !s.stopping {
		s.stopping = true
		s.Cancel()
		fmt.Fprintln(s.Stderr, "cephbench: interrupted, stopping and cleaning up; interrupt again to exit at once without cleanup")
		s.said = s.Now()
		return
	}
	if s.Now().Sub(s.said) < s.Grace {
		return
	}
	fmt.Fprintln(s.Stderr, "cephbench: interrupted again, exiting without cleanup")
	s.Exit()
}

// Notify hands this process's SIGINT and SIGTERM to a Stopper that
// cancels with cancel and exits with code, and every signal of other's
// to it.
func Notify(cancel func(), code int, other func(os.Signal), others ...os.Signal) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, append([]os.Signal{os.Interrupt, syscall.SIGTERM}, others...)...)
	s := &Stopper{Cancel: cancel, Exit: func() { os.Exit(code) }, Stderr: os.Stderr, Grace: Grace, Now: time.Now}
	go func() {
		for sig := range sigs {
			if sig == os.Interrupt || sig == syscall.SIGTERM {
				s.Interrupt()
			} else {
				other(sig)
			}
		}
	}()
}
