// Package killtest is the tests' kill -9 harness, one for every engine
// that writes: it runs the cephbench binary against a target that holds
// someone else's data, kills it with SIGKILL at random moments of each
// phase of a run (laying out, measuring, removing what it wrote), runs
// cephbench cleanup on the target, and checks that nothing of cephbench's
// is left and that the other data is byte for byte what it was.
//
// The moments are random, from a seed the test logs; CEPHBENCH_KILL_SEED
// replays one. A phase is detected from what the run shows (its output,
// its tick log, what appears on the target), then a random delay is
// added; a kill only counts for its phase if the run is still in it.
package killtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/result"
)

// Items are the things on a target, by name, each with a digest of what
// it holds: files, objects, images, buckets.
type Items map[string]string

// Digest is what Items holds for content b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Progress is what a run shows while the harness waits for a phase.
type Progress struct {
	Output    string // its stdout and stderr so far
	Measuring bool   // its tick log exists: the measured part has begun
	Seconds   int    // seconds its tick log holds
	Ours      int    // items on the target that are not the foreign ones
	Peak      int    // the most Ours was during this run
	// Since is how long ago something of the run first showed on the
	// target.
	Since time.Duration
}

// Phase is one kind of moment to kill a run at.
type Phase struct {
	Name string
	// Args is the command line after the binary; the harness adds
	// --results with a folder of the run's own.
	Args []string
	// In reports whether the run is in the phase.
	In func(Progress) bool
	// Delay bounds the random wait after the phase is detected.
	Delay time.Duration
	// Step, if set, is how long the run may go on between two looks at
	// it, during which it is stopped (SIGSTOP): a phase shorter than a
	// look (removing a few files) is then seen, and a kill after no
	// delay lands in it, as the run cannot leave it while it is looked
	// at.
	Step time.Duration
}

// Config is one engine's kill test.
type Config struct {
	Bin    string
	Target string // as cephbench cleanup takes it
	// List lists every item on the target, with the digest of what it
	// holds when digest is set (otherwise ""): without, it is called
	// often while a run goes on, so it should be cheap.
	List func(t *testing.T, digest bool) Items
	// Foreign is the data the target held before, as List shows it.
	Foreign Items
	Phases  []Phase
	Kills   int // per phase
	// Attempts bounds the runs per phase: a run that leaves its phase
	// before the kill lands does not count.
	Attempts int
}

// Layout is in a run's unmeasured start once something of it is on the
// target.
func Layout(p Progress) bool { return !p.Measuring && p.Ours > 0 }

// Ramp is in a run's unmeasured ramp of length ramp, whose tick log
// exists but holds no second yet: a moment well before the ramp ends,
// counted from the run's first item on the target.
func Ramp(ramp time.Duration) func(Progress) bool {
	return func(p Progress) bool { return p.Ours > 0 && p.Seconds == 0 && p.Since < ramp-ramp/4 }
}

// Measuring is in a run's measured part.
func Measuring(p Progress) bool { return p.Measuring && p.Ours > 0 }

// Removing is in a run's end once it has removed some of what it wrote
// but not all.
func Removing(p Progress) bool { return p.Measuring && p.Ours > 0 && p.Ours < p.Peak }

// After is in a run's end once its tick log holds seconds seconds (the
// whole measured part of a run of that many), with something of it still
// on the target.
func After(seconds int) func(Progress) bool {
	return func(p Progress) bool { return p.Seconds >= seconds && p.Ours > 0 }
}

// Run kills cfg's runs, cfg.Kills times in each phase, cleaning up and
// checking the target after each.
func Run(t *testing.T, cfg Config) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CEPHBENCH_KILL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("CEPHBENCH_KILL_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (CEPHBENCH_KILL_SEED=%d replays these delays)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	check(t, cfg, "before any run", cfg.List(t, true))
	for _, ph := range cfg.Phases {
		hits := 0
		for try := 1; hits < cfg.Kills && try <= cfg.Attempts; try++ {
			delay := time.Duration(rng.Int64N(int64(ph.Delay) + 1))
			if killOne(t, cfg, ph, try, delay) {
				hits++
			}
			if t.Failed() {
				return
			}
		}
		if hits < cfg.Kills {
			t.Fatalf("%s: %d kills landed in the phase in %d runs; want %d", ph.Name, hits, cfg.Attempts, cfg.Kills)
		}
	}
}

// killOne runs ph's command, kills it delay after its phase shows, cleans
// up and checks the target. It reports whether the kill landed in the
// phase.
func killOne(t *testing.T, cfg Config, ph Phase, try int, delay time.Duration) bool {
	results := t.TempDir()
	cmd := exec.Command(cfg.Bin, append(slices.Clone(ph.Args), "--results", results)...)
	out := &buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() { _ = cmd.Process.Kill(); <-exited }()

	p := Progress{}
	var first time.Time
	look := func() {
		p.Output = out.String()
		p.Measuring, p.Seconds = tickLog(results)
		p.Ours = len(cfg.List(t, false)) - len(cfg.Foreign)
		p.Peak = max(p.Peak, p.Ours)
		if p.Ours > 0 && first.IsZero() {
			first = time.Now()
		}
		if !first.IsZero() {
			p.Since = time.Since(first)
		}
	}
	stepped := ph.Step > 0
	freeze := func() {
		if stepped {
			stop(cmd.Process.Pid)
		}
	}
	thaw := func() {
		if stepped {
			_ = cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	start := time.Now()
	// Generous: a loaded machine may take long to start a run, and a run
	// that never reaches its phase fails below, not by a time limit.
	for deadline := start.Add(45 * time.Second); ; {
		freeze()
		look()
		if ph.In(p) {
			break
		}
		thaw()
		select {
		case <-exited:
			t.Logf("%s, run %d: ended before its phase showed (%d of ours at most)\n%s", ph.Name, try, p.Peak, p.Output)
			return false
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s, run %d: phase not reached in 45s\n%s", ph.Name, try, p.Output)
		}
		if stepped {
			time.Sleep(ph.Step)
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	detected := time.Since(start)
	if delay > 0 {
		thaw()
		time.Sleep(delay)
		freeze()
	}
	look()
	landed := ph.In(p)
	select {
	case <-exited:
		landed = false
	default:
		_ = cmd.Process.Kill()
	}
	<-exited
	left := cfg.List(t, false)
	t.Logf("%s, run %d: phase seen at %v, killed %v later (%d of ours on the target then, %d left by the kill); in the phase: %v",
		ph.Name, try, detected.Round(time.Millisecond), delay.Round(time.Millisecond), p.Ours, len(left)-len(cfg.Foreign), landed)

	clean := exec.Command(cfg.Bin, "cleanup", cfg.Target)
	began := time.Now()
	if b, err := clean.CombinedOutput(); err != nil {
		t.Fatalf("%s, run %d: cephbench cleanup %s: %v\n%s", ph.Name, try, cfg.Target, err, b)
	}
	t.Logf("%s, run %d: cephbench cleanup took %v", ph.Name, try, time.Since(began).Round(time.Millisecond))
	check(t, cfg, fmt.Sprintf("%s, run %d, after cleanup", ph.Name, try), cfg.List(t, true))
	return landed
}

// stop stops process pid (SIGSTOP) and waits until it is stopped, for at
// most a second.
func stop(pid int) {
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	for range 1000 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return // gone
		}
		// pid (comm) STATE ...: comm may hold spaces, not ")".
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && (f[0] == "T" || f[0] == "Z") {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// check fails t unless items are exactly the foreign ones, unchanged.
func check(t *testing.T, cfg Config, when string, items Items) {
	t.Helper()
	var left, lost []string
	for name, sum := range items {
		if f, ok := cfg.Foreign[name]; !ok {
			left = append(left, name)
		} else if f != sum {
			lost = append(lost, name+" (changed)")
		}
	}
	for name := range cfg.Foreign {
		if _, ok := items[name]; !ok {
			lost = append(lost, name+" (removed)")
		}
	}
	slices.Sort(left)
	slices.Sort(lost)
	if len(left) > 0 {
		t.Errorf("%s: %d of cephbench's left on %s: %s", when, len(left), cfg.Target, strings.Join(left[:min(len(left), 8)], ", "))
	}
	if len(lost) > 0 {
		t.Errorf("%s: foreign data on %s lost: %s", when, cfg.Target, strings.Join(lost, ", "))
	}
}

// tickLog reports whether a tick log exists under dir (the run's results
// folder, at any depth a command puts it) and how many seconds it holds.
func tickLog(dir string) (exists bool, seconds int) {
	var logs []string
	_ = filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".hlog") {
			logs = append(logs, p)
		}
		return nil
	})
	for _, l := range logs {
		// Read while it is written: a line cut short ends what counts.
		s, _ := result.ReadTickLog(l)
		seconds = max(seconds, len(s))
	}
	return len(logs) > 0, seconds
}

// buffer is an output a run writes to while the harness reads it.
type buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
