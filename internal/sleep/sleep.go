// Package sleep waits until a moment to within microseconds, where Go's
// timers wake up to a millisecond late.
//
// Why: the runtime's poller waits in whole milliseconds, so a time.Timer
// of 20 µs or 100 µs fires about 1 ms late on Linux (measured here: p50
// oversleep 1.06 ms at 20 µs, 0.98 ms at 100 µs). An open-loop run counts
// each op's latency from when it was due, so that lateness would be
// reported as the target's. Until sleeps most of a wait on a timer, the
// last TimerLead in the kernel's high-resolution nanosleep with the
// thread's timer slack at 1 ns, and the last SpinLead spinning on the
// clock.
package sleep

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// TimerLead is how much of a wait is left to the kernel's nanosleep:
	// more than a Go timer oversleeps on an idle machine, so that the
	// timer never fires after the moment.
	TimerLead = 2 * time.Millisecond
	// SpinLead is how much of a wait is spun: about what the kernel takes
	// to wake a sleeping thread on a virtual machine, so that the wait
	// usually ends within a microsecond or two of its moment. It is also
	// the most CPU a wait costs beyond two system calls.
	SpinLead = 50 * time.Microsecond
)

// Until blocks until now() reaches deadline, and reports true, or until
// ctx is done, and reports false; now is a monotonic clock in
// nanoseconds, such as engine.Now. timer is the caller's, stopped or
// fired, so that a loop that waits often allocates none; Until leaves it
// so. Only the timer part of a wait, all but its last TimerLead, ends
// early when ctx is done. Safe for concurrent use with distinct timers.
func Until(ctx context.Context, timer *time.Timer, now func() time.Duration, deadline time.Duration) bool {
	if wait := deadline - now() - TimerLead; wait > 0 {
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return false
		}
	}
	if deadline-now() > SpinLead {
		// Timer slack is per thread and the goroutine may be on another
		// one than last time: set it for each sleep, one system call.
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		for {
			wait := deadline - now() - SpinLead
			if wait <= 0 {
				break
			}
			ts := unix.NsecToTimespec(int64(wait))
			// EINTR (the runtime preempts with signals) just sleeps again
			// for what is left.
			_ = unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &ts, nil)
		}
	}
	for now() < deadline {
	}
	return ctx.Err() == nil
}
