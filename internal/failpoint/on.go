//go:build failpoint

package failpoint

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Enabled reports whether this binary was built with fail points.
const Enabled = true

// point is one switched-on place: what it does and how often.
type point struct {
	mu    sync.Mutex
	hits  int // so far
	left  int // hits that still act; -1 for all of them
	at    int // the hit that pauses (pause only)
	pause bool
	err   error
	delay time.Duration
}

var (
	mu     sync.RWMutex
	points = map[string]*point{}
)

func init() {
	if s := os.Getenv(EnvVar); s != "" {
		if err := Set(s); err != nil {
			fmt.Fprintf(os.Stderr, "cephbench: %s: %v\n", EnvVar, err)
			os.Exit(2)
		}
	}
}

// Set replaces the switched-on places with those of spec (the form of
// CEPHBENCH_FAILPOINTS; "" switches all off). It is safe to call while
// places are hit.
func Set(spec string) error {
	next := map[string]*point{}
	for _, term := range strings.Split(spec, ";") {
		if term = strings.TrimSpace(term); term == "" {
			continue
		}
		name, action, ok := strings.Cut(term, "=")
		if !ok || name == "" {
			return fmt.Errorf("%q: want NAME=ACTION", term)
		}
		p, err := parse(action)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		next[name] = p
	}
	mu.Lock()
	points = next
	mu.Unlock()
	return nil
}

func parse(action string) (*point, error) {
	p := &point{left: -1, at: 1}
	if n, rest, ok := strings.Cut(action, "*"); ok {
		count, err := strconv.Atoi(n)
		if err != nil || count < 1 {
			return nil, fmt.Errorf("%q: a count before * is a whole number of 1 or more", action)
		}
		p.left, action = count, rest
	}
	arg := func(fn string) (string, bool) {
		s, ok := strings.CutPrefix(action, fn+"(")
		if !ok || !strings.HasSuffix(s, ")") {
			return "", false
		}
		return strings.TrimSuffix(s, ")"), true
	}
	switch {
	case action == "pause" || strings.HasPrefix(action, "pause@"):
		p.pause = true
		if k, ok := strings.CutPrefix(action, "pause@"); ok {
			at, err := strconv.Atoi(k)
			if err != nil || at < 1 {
				return nil, fmt.Errorf("%q: the hit to pause at is a whole number of 1 or more", action)
			}
			p.at = at
		}
	default:
		if name, ok := arg("error"); ok {
			errno := errnoNamed(name)
			if errno == 0 {
				return nil, fmt.Errorf("%q: unknown errno %q", action, name)
			}
			p.err = errno
		} else if d, ok := arg("delay"); ok {
			var err error
			if p.delay, err = time.ParseDuration(d); err != nil || p.delay < 0 {
				return nil, fmt.Errorf("%q: want a duration such as 20ms", action)
			}
		} else {
			return nil, fmt.Errorf("%q: want pause, pause@K, error(ERRNO) or delay(DURATION), with an optional N* before", action)
		}
	}
	return p, nil
}

// errnoNamed is the errno named name (EIO), or 0.
func errnoNamed(name string) syscall.Errno {
	for e := syscall.Errno(1); e < 256; e++ {
		if unix.ErrnoName(e) == name {
			return e
		}
	}
	return 0
}

func lookup(name string) *point {
	mu.RLock()
	defer mu.RUnlock()
	return points[name]
}

// act counts a hit of p and reports what it does now.
func (p *point) act() (pause bool, delay time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hits++
	if p.pause {
		return p.hits == p.at, 0, nil
	}
	if p.left == 0 {
		return false, 0, nil
	}
	if p.left > 0 {
		p.left--
	}
	return false, p.delay, p.err
}

// Hit is the place named name: a pause switched on there stops the whole
// process (SIGSTOP) until it is continued or killed; a delay holds the
// caller.
func Hit(name string) {
	_ = Op(name)
}

// Op is the place named name that an op passes before it is issued: it
// returns the error switched on there, if any, after any pause or delay.
func Op(name string) error {
	p := lookup(name)
	if p == nil {
		return nil
	}
	pause, delay, err := p.act()
	if pause {
		// Said first: a harness that reads it knows where the run is.
		fmt.Fprintf(os.Stderr, "%s %s: hit %d (pid %d)\n", PausedLine, name, p.at, os.Getpid())
		_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		// A pause is there to be killed in. A multithreaded process's
		// stop can be lost (seen here on Go processes, about one in
		// two), and the process goes on: this place never returns, so
		// the run stays in its phase all the same.
		for {
			time.Sleep(time.Hour)
		}
	}
	if delay > 0 {
		time.Sleep(delay)
	}
	return err
}
