//go:build ceph

package cluster

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceph/go-ceph/rados"
)

// sandboxQuiescers connects n Quiescers to the test run's sandbox, each
// over a connection of its own, as n runs of this process started apart
// by a nanosecond; it skips the test without a sandbox or one whose scrub
// flags or records are already there.
func sandboxQuiescers(t *testing.T, n int) []*Quiescer {
	t.Helper()
	if os.Getenv("CEPH_CONF") == "" {
		t.Skip("no cluster: CEPH_CONF is unset (scripts/test.sh starts a sandbox cluster and sets it)")
	}
	var qs []*Quiescer
	for i := range n {
		conn, err := rados.NewConn()
		if err == nil {
			if err = conn.ReadDefaultConfigFile(); err == nil {
				err = conn.Connect()
			}
		}
		if err != nil {
			t.Fatalf("connecting to the sandbox: %v", err)
		}
		t.Cleanup(conn.Shutdown)
		q := NewQuiescer(NewConn(conn))
		start := time.Now().Add(time.Duration(i))
		q.now = func() time.Time { return start }
		qs = append(qs, q)
	}
	if flags, keys := sandboxScrubState(t, qs[0]); len(flags) > 0 || len(keys) > 0 {
		t.Skipf("the sandbox is quiesced already: flags %v, keys %v", flags, keys)
	}
	return qs
}

// sandboxScrubState is the scrub flags set and the config keys of
// quiesced runs.
func sandboxScrubState(t *testing.T, q *Quiescer) (flags, keys []string) {
	t.Helper()
	set, err := q.flags()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range QuiesceFlags {
		if set[f] {
			flags = append(flags, f)
		}
	}
	b, err := q.ask(map[string]string{"prefix": "config-key ls", "format": "json"})
	var all []string
	if err == nil {
		err = json.Unmarshal(b, &all)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range all {
		if strings.HasPrefix(k, "cephbench/quiesce") {
			keys = append(keys, k)
		}
	}
	return flags, keys
}

// together runs f for each Quiescer at once, released together once
// every goroutine runs, and returns their errors.
func together[T any](qs []*Quiescer, f func(i int, q *Quiescer) (T, error)) ([]T, error) {
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	out, errs := make([]T, len(qs)), make([]error, len(qs))
	for i, q := range qs {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-release
			out[i], errs[i] = f(i, q)
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// Eight quiesced runs that start together and end together, five times
// over: after each time the scrub flags are clear and nothing of the
// runs is left in the config-key store. Then seven end together while an
// eighth goes on: the flags stay set, with its record alone, until it
// ends. The flags are the whole sandbox's, which makes the test
// disruptive (another test's quiesced run would see them).
func TestDisruptiveQuiescedRunsEndingTogether(t *testing.T) {
	if os.Getenv("CEPHBENCH_DISRUPTIVE") != "1" {
		t.Skip("CEPHBENCH_DISRUPTIVE is not 1: scripts/test.sh runs the disruptive tests after the others")
	}
	qs := sandboxQuiescers(t, 8)
	for round := range 5 {
		holds, err := together(qs, func(_ int, q *Quiescer) (*Quiesce, error) { return q.Quiesce() })
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if flags, _ := sandboxScrubState(t, qs[0]); !slices.Equal(flags, QuiesceFlags) {
			t.Errorf("round %d: flags %v while the runs go", round, flags)
		}
		if _, err := together(qs, func(i int, _ *Quiescer) (any, error) { return nil, holds[i].Restore() }); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if flags, keys := sandboxScrubState(t, qs[0]); len(flags) > 0 || len(keys) > 0 {
			t.Fatalf("round %d: after every run ended, flags %v and keys %v", round, flags, keys)
		}
	}

	long, err := qs[0].Quiesce()
	if err != nil {
		t.Fatal(err)
	}
	holds, err := together(qs[1:], func(_ int, q *Quiescer) (*Quiesce, error) { return q.Quiesce() })
	if err == nil {
		_, err = together(qs[1:], func(i int, _ *Quiescer) (any, error) { return nil, holds[i].Restore() })
	}
	if err != nil {
		t.Fatal(errors.Join(err, long.Restore()))
	}
	flags, keys := sandboxScrubState(t, qs[0])
	if err := long.Restore(); err != nil {
		t.Fatal(err)
	}
	var records []string
	for _, k := range keys {
		if strings.HasPrefix(k, quiescePrefix) {
			records = append(records, k)
		}
	}
	if !slices.Equal(flags, QuiesceFlags) || !slices.Equal(records, []string{long.key}) {
		t.Errorf("with one run going on: flags %v and records %v, want %v and %s", flags, records, QuiesceFlags, long.key)
	}
	if flags, keys := sandboxScrubState(t, qs[0]); len(flags) > 0 || len(keys) > 0 {
		t.Errorf("after the last run ended, flags %v and keys %v", flags, keys)
	}
}
