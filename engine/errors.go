package engine

import (
	"context"
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrVerify is returned by a read whose data is not what was written.
var ErrVerify = errors.New("data verification failed")

// ErrTimeout is returned by an op that exceeded the workload's op timeout.
var ErrTimeout = errors.New("operation timed out")

// ErrorKind names an op error's class for the "errors by kind" counts: an
// errno name such as "EIO" or "ENOSPC", "timeout", "verify", "not_found",
// "canceled", or "other".
func ErrorKind(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrVerify):
		return "verify"
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &errno):
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
		return "errno_" + errno.Error()
	case errors.Is(err, os.ErrNotExist):
		return "not_found"
	}
	return "other"
}
