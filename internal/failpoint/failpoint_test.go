//go:build failpoint

package failpoint

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Three writes fail with EIO, the fourth goes through; a place nobody
// switched on never acts.
func TestErrorForTheNextNOps(t *testing.T) {
	t.Cleanup(func() { _ = Set("") })
	if err := Set("op=3*error(EIO); remove=delay(1ms)"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := Op(OpPoint); !errors.Is(err, syscall.EIO) {
			t.Fatalf("op %d: %v, want EIO", i+1, err)
		}
	}
	if err := Op(OpPoint); err != nil {
		t.Fatalf("op 4: %v, want none", err)
	}
	if err := Op(Save); err != nil {
		t.Fatalf("a place not switched on: %v", err)
	}
}

// A delay holds every op it is set for, counted by the monotonic clock
// from below only: a loaded machine may hold it longer.
func TestDelayHoldsTheOp(t *testing.T) {
	t.Cleanup(func() { _ = Set("") })
	if err := Set("op=2*delay(30ms)"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		began := time.Now()
		if err := Op(OpPoint); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took < 30*time.Millisecond {
			t.Errorf("op %d held %v, want 30ms at least", i+1, took)
		}
	}
	_ = Op(OpPoint)
	if p := lookup(OpPoint); p.hits != 3 || p.left != 0 {
		t.Errorf("after 3 ops: %d hits, %d delays left; want 3 and 0: the delay was for 2 ops", p.hits, p.left)
	}
}

// Every malformed term is refused with a message naming it.
func TestBadSpecsAreRefused(t *testing.T) {
	for spec, want := range map[string]string{
		"layout":               "want NAME=ACTION",
		"=pause":               "want NAME=ACTION",
		"layout=stop":          "want pause",
		"layout=pause@0":       "whole number",
		"layout=pause@x":       "whole number",
		"op=0*error(EIO)":      "count before",
		"op=error(EWHAT)":      "unknown errno",
		"op=delay(soon)":       "duration",
		"op=error(EIO":         "want pause",
		"op=3*delay(-1s)":      "duration",
		"ok=pause;bad=explode": "bad:",
	} {
		err := Set(spec)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", spec, err, want)
		}
	}
}
