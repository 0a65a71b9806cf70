// Package killtest is the tests' kill -9 harness, one for every engine
// that writes: it runs a cephbench binary built with fail points
// (internal/failpoint) against a target that holds someone else's data,
// has the run stop itself (SIGSTOP) at a fail point inside each phase of a
// run (laying out, measuring, removing what it wrote, saving its result),
// kills it there with SIGKILL, runs cephbench cleanup on the target, and
// checks that nothing of cephbench's is left and that the other data is
// byte for byte what it was.
//
// Every kill lands in its phase: the run cannot leave it while it is
// stopped, whatever the machine's speed. Which hit of the fail point the
// run stops at is random, from a seed the test logs; CEPHBENCH_KILL_SEED
// replays one.
package killtest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/failpoint"
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

// Phase is one kind of moment to kill a run at.
type Phase struct {
	Name string
	// Args is the command line after the binary; the harness adds
	// --results with a folder of the run's own.
	Args []string
	// Point is the fail point the run stops at (failpoint.Layout,
	// Measure...), at a hit drawn from 1 to Hits: Hits must be no more
	// than the run surely reaches (the files it lays out, the objects it
	// removes), or the run ends without stopping and the test fails.
	Point string
	Hits  int
	// Empty is set where the run has nothing on the target yet when it
	// stops (a layout's first write, a removal's first of one item is
	// past the point); otherwise a stop with nothing of the run on the
	// target fails the test, as the kill would prove nothing.
	Empty bool
	// Saved is set where the run has begun its result when it stops (it
	// measures): the kill must leave a result that loads, saying what
	// the run measured until then.
	Saved bool
	// Cleanup, if set, also kills the first cephbench cleanup after the
	// run's kill at the start of its removal, and runs another.
	Cleanup bool
}

// Config is one engine's kill test.
type Config struct {
	Bin    string // built with the failpoint tag
	Target string // as cephbench cleanup takes it
	// List lists every item on the target, with the digest of what it
	// holds when digest is set (otherwise "").
	List func(t *testing.T, digest bool) Items
	// Foreign is the data the target held before, as List shows it.
	Foreign Items
	Phases  []Phase
	Kills   int // per phase
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
	t.Logf("seed %d (CEPHBENCH_KILL_SEED=%d replays these kills)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	check(t, cfg, "before any run", cfg.List(t, true))
	for _, ph := range cfg.Phases {
		for run := 1; run <= cfg.Kills; run++ {
			killOne(t, cfg, ph, run, 1+rng.IntN(max(ph.Hits, 1)))
			if t.Failed() {
				return
			}
		}
		record(t, "%s: %d of %d kills landed in the phase", ph.Name, cfg.Kills, cfg.Kills)
	}
}

// killOne runs ph's command until it stops at hit of ph's fail point,
// kills it, cleans up and checks the target.
func killOne(t *testing.T, cfg Config, ph Phase, try, hit int) {
	results := t.TempDir()
	cmd := exec.Command(cfg.Bin, append(slices.Clone(ph.Args), "--results", results)...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s=pause@%d", failpoint.EnvVar, ph.Point, hit))
	what := fmt.Sprintf("%s, run %d (%s hit %d)", ph.Name, try, ph.Point, hit)
	run := pauseAt(t, cmd, what)
	ours := len(cfg.List(t, false)) - len(cfg.Foreign)
	if ours <= 0 && !ph.Empty {
		t.Errorf("%s: nothing of the run on the target where it stopped\n%s", what, run.out.String())
	}
	run.kill(t)
	saved, err := loadResults(results)
	if ph.Saved && (saved == 0 || err != nil) {
		t.Errorf("%s: the kill left %d results that load, want 1: %v", what, saved, err)
	}
	record(t, "%s: stopped in the phase and killed, %d of ours on the target, %d result left", what, ours, saved)

	if ph.Cleanup {
		clean := exec.Command(cfg.Bin, "cleanup", cfg.Target)
		clean.Env = append(os.Environ(), failpoint.EnvVar+"="+failpoint.Cleanup+"=pause")
		pauseAt(t, clean, what+", its cleanup").kill(t)
		t.Logf("%s: its cleanup stopped at its start and killed", what)
	}
	clean := exec.Command(cfg.Bin, "cleanup", cfg.Target)
	began := time.Now()
	if b, err := clean.CombinedOutput(); err != nil {
		t.Fatalf("%s: cephbench cleanup %s: %v\n%s", what, cfg.Target, err, b)
	}
	t.Logf("%s: cephbench cleanup took %v", what, time.Since(began).Round(time.Millisecond))
	check(t, cfg, what+", after cleanup", cfg.List(t, true))
}

// pauseAt starts cmd and waits until it has reached its fail point's
// pause (it says so on stderr, then stops itself; the place never
// returns, so the run cannot leave its phase); a command that ends
// instead, or has not paused in a minute, fails the test.
func pauseAt(t *testing.T, cmd *exec.Cmd, what string) *paused {
	t.Helper()
	out := &buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	// A minute is a hang check, not a speed check: a run reaches its
	// phase in a second or two.
	deadline := time.After(time.Minute)
	for !strings.Contains(out.String(), failpoint.PausedLine) {
		select {
		case <-exited:
			t.Fatalf("%s: ended before its fail point: %v\n%s", what, cmd.ProcessState, out.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("%s: not at its fail point after a minute\n%s", what, out.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return &paused{out: out, cmd: cmd, exited: exited}
}

// paused is a command stopped at its fail point.
type paused struct {
	out    *buffer
	cmd    *exec.Cmd
	exited chan struct{}
}

// kill kills the command (SIGKILL) and waits for it.
func (p *paused) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// LogEnv names a file to which every kill's line is appended as well as
// logged, so that the test command can show where each kill landed
// without -v.
const LogEnv = "CEPHBENCH_KILL_LOG"

// record logs a line of t and appends it to LogEnv's file, if set.
func record(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	if name := os.Getenv(LogEnv); name != "" {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			// One write a line: lines of tests in parallel never mix.
			_, err = f.WriteString(t.Name() + ": " + line + "\n")
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			t.Errorf("%s: %v", LogEnv, err)
		}
	}
}

// loadResults loads every result under dir, and reports how many loaded
// and why the others did not.
func loadResults(dir string) (int, error) {
	loaded := 0
	var errs []error
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".json") || filepath.Base(p) == result.ManifestFile {
			return err
		}
		if _, err := result.Load(p); err != nil {
			errs = append(errs, err)
		} else {
			loaded++
		}
		return nil
	})
	return loaded, errors.Join(append(errs, err)...)
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
