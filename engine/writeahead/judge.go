package writeahead

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cephbench/cephbench/internal/proc"
)

// Judge decides, for one cleanup, which records belong to runs that have
// ended, whose objects may go, and keeps a line for each record it
// skipped. A run of this host is judged by its process: alive (the same
// PID, begun before the record) means still writing, and is always
// skipped; a record of the very process that cleans up is a session it
// has closed (a plan cleaning up after its kept steps). A run of another host, or a record without a PID (written by
// cephbench before 2026-12), cannot be checked: it is skipped unless Force
// is set or the record is older than OlderThan. A Judge is safe for
// concurrent use.
type Judge struct {
	// Force takes every record this host cannot check as a dead run's.
	Force bool
	// OlderThan, if positive, takes a record this host cannot check as a
	// dead run's once the store wrote it longer ago than this.
	OlderThan time.Duration

	host  string
	pid   int
	now   func() time.Time
	alive func(pid int, start time.Time) bool

	mu      sync.Mutex
	skipped []string
}

// NewJudge returns a Judge of this host, with force and olderThan as
// Force and OlderThan.
func NewJudge(force bool, olderThan time.Duration) *Judge {
	return &Judge{Force: force, OlderThan: olderThan, host: thisHost(), pid: os.Getpid(), now: time.Now, alive: proc.Alive}
}

// Ended reports whether r's run has ended, so that its objects and r may
// be removed; written is when the store last wrote r (its modification
// time). When it reports false, it keeps a line naming the run for
// Skipped.
func (j *Judge) Ended(r Record, written time.Time) bool {
	var why string
	switch {
	case r.PID > 0 && r.Host != "" && r.Host == j.host:
		if r.PID == j.pid || !j.alive(r.PID, r.Started) {
			return true
		}
		why = fmt.Sprintf("skipped: run %d on %s is still running (%s)", r.PID, r.Host, r.Name())
	case j.Force, j.OlderThan > 0 && j.now().Sub(written) > j.OlderThan:
		return true
	case r.PID > 0:
		why = fmt.Sprintf("skipped: run %d on %s, another host, may still be running (%s, written %s ago); --force or --older-than to remove it",
			r.PID, r.Host, r.Name(), j.age(written))
	default:
		why = fmt.Sprintf("skipped: %s names no process (an earlier cephbench's, written %s ago) and may be a running write; --force or --older-than to remove it",
			r.Name(), j.age(written))
	}
	j.mu.Lock()
	j.skipped = append(j.skipped, why)
	j.mu.Unlock()
	return false
}

func (j *Judge) age(written time.Time) time.Duration {
	return j.now().Sub(written).Round(time.Second)
}

// Skipped returns a line for each record Ended skipped, in the order it
// was asked.
func (j *Judge) Skipped() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.skipped...)
}

// thisHost is the name runs of this host record; "" when the system
// does not say, which no record's host matches.
func thisHost() string {
	h, _ := os.Hostname()
	return h
}
