//go:build ceph

package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/result"
)

// osdFlags are the OSD map's flags, as `ceph osd dump` says them. It may
// be called from any goroutine: a failure is an error of t's, not fatal.
func osdFlags(t *testing.T) string {
	t.Helper()
	var dump struct {
		Flags string `json:"flags"`
	}
	if err := json.Unmarshal([]byte(cephAnywhere(t, "osd", "dump", "-f", "json")), &dump); err != nil {
		t.Errorf("ceph osd dump: %v", err)
	}
	return dump.Flags
}

// cephAnywhere runs ceph with args from any goroutine, a failure an error
// of t's.
func cephAnywhere(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ceph", args...).CombinedOutput()
	if err != nil {
		t.Errorf("ceph %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func hasFlag(flags, f string) bool {
	for _, x := range strings.Split(flags, ",") {
		if x == f {
			return true
		}
	}
	return false
}

// quiesceRecords are the config keys quiesced runs record themselves in.
func quiesceRecords(t *testing.T) []string {
	t.Helper()
	var keys, recs []string
	if err := json.Unmarshal([]byte(ceph(t, "config-key", "ls")), &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "cephbench/quiesce/") {
			recs = append(recs, k)
		}
	}
	return recs
}

// at runs f after d unless ctx ends first, and returns a channel that
// closes once f has run or been given up.
func at(ctx context.Context, d time.Duration, f func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-time.After(d):
			f()
		case <-ctx.Done():
		}
	}()
	return done
}

// A quiesced write: noscrub and nodeep-scrub are set while it runs, the
// flags are as before after it, and the summary and result say what it
// set.
func TestQuiesceSetsTheScrubFlagsForTheRun(t *testing.T) {
	pool := cephPool(t)
	before := osdFlags(t)
	if hasFlag(before, "noscrub") || hasFlag(before, "nodeep-scrub") {
		t.Skipf("the sandbox's scrub flags are already set: %s", before)
	}
	var during string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sampled := at(ctx, 4*time.Second, func() { during = osdFlags(t) })
	results := t.TempDir()
	code, out, errOut := cephbench(t, context.Background(), "rados", "bench", "-p", pool, "8", "write", "-b", "4K", "-t", "8",
		"--quiesce", "--results", results)
	cancel()
	<-sampled
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !hasFlag(during, "noscrub") || !hasFlag(during, "nodeep-scrub") {
		t.Errorf("flags 4 s into the run: %q", during)
	}
	if after := osdFlags(t); after != before {
		t.Errorf("flags after the run %q, before %q", after, before)
	}
	if recs := quiesceRecords(t); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
	if !regexp.MustCompile(`(?m)^Quiesce: +set noscrub, nodeep-scrub for the run$`).MatchString(out) {
		t.Errorf("the summary does not say what --quiesce set:\n%s", out)
	}
	paths, _ := filepath.Glob(filepath.Join(results, "*.json"))
	if len(paths) != 1 {
		t.Fatalf("results %v", paths)
	}
	r, err := result.Load(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if q := r.Cluster.Quiesced; q == nil || strings.Join(q.Set, ",") != "noscrub,nodeep-scrub" {
		t.Errorf("cluster.quiesced %+v", q)
	}
}

// A quiesced run interrupted 3 s in (Ctrl-C) exits 130 and leaves the
// flags as they were.
func TestAnInterruptedQuiescedRunRestoresTheFlags(t *testing.T) {
	pool := cephPool(t)
	before := osdFlags(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := at(context.Background(), 3*time.Second, cancel)
	code, out, errOut := cephbench(t, ctx, "rados", "bench", "-p", pool, "20", "write", "-b", "4K", "-t", "8",
		"--quiesce", "--results", t.TempDir())
	<-interrupted
	if code != 130 {
		t.Errorf("exit %d, want 130\n%s\n%s", code, out, errOut)
	}
	if after := osdFlags(t); after != before {
		t.Errorf("flags after the interrupted run %q, before %q", after, before)
	}
	if recs := quiesceRecords(t); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

// With scrubs of the test's pool made due every second 2.5 s into a 20 s
// run, a run without --quiesce sees them, and the same run with --quiesce
// is at rest. (The OSDs start a due scrub some seconds after it is due,
// when their load and osd_scrub_backoff_ratio let them: 7 s were not
// always enough.) Scrubs that busy the whole sandbox (the watch of any run counts
// every pool's PGs) make it disruptive.
func TestDisruptiveQuiesceKeepsScheduledScrubsOut(t *testing.T) {
	if os.Getenv("CEPHBENCH_DISRUPTIVE") != "1" {
		t.Skip("CEPHBENCH_DISRUPTIVE is not 1: scripts/test.sh runs the disruptive tests after the others")
	}
	pool := cephPool(t)
	intervals := []string{"scrub_min_interval", "scrub_max_interval", "deep_scrub_interval"}
	scrubEverySecond := func(every string) {
		for _, k := range intervals {
			cephAnywhere(t, "osd", "pool", "set", pool, k, every)
		}
	}
	// 0: the OSDs' own intervals, as for every pool that sets none.
	t.Cleanup(func() { scrubEverySecond("0") })
	waitClean(t)
	// Objects to scrub: an empty PG scrubs faster than a sample.
	tool(t, "rados", "bench", "-p", pool, "5", "write", "-b", "64K", "-t", "8", "--no-cleanup")
	run := func(quiesce bool) (string, []string) {
		args := []string{"rados", "bench", "-p", pool, "20", "write", "-b", "4K", "-t", "8", "--no-cleanup",
			"--cluster-interval", "250ms", "--results", t.TempDir()}
		if quiesce {
			args = append(args, "--quiesce")
		}
		due := at(context.Background(), 2500*time.Millisecond, func() { scrubEverySecond("1") })
		code, out, errOut := cephbench(t, context.Background(), args...)
		<-due
		if code != 0 {
			t.Fatalf("--quiesce %v: exit %d\n%s\n%s", quiesce, code, out, errOut)
		}
		return out, scrubEvents(out)
	}
	out, scrubs := run(false)
	t.Logf("without --quiesce: %s", strings.Join(scrubs, "; "))
	if len(scrubs) == 0 {
		t.Errorf("no scrub seen in a run with scrubs due every second:\n%s", out)
	}
	scrubEverySecond("0")
	waitNoScrub(t)
	out, scrubs = run(true)
	t.Logf("with --quiesce: %s", strings.Join(scrubs, "; "))
	if len(scrubs) != 0 || !strings.Contains(out, "\nCluster at rest:        yes") {
		t.Errorf("a quiesced run saw scrubs:\n%s", out)
	}
}

// scrubEvents are the scrubs rados bench's summary line "Cluster at rest:
// NO, EVENTS" names.
func scrubEvents(summary string) []string {
	var scrubs []string
	for _, line := range strings.Split(summary, "\n") {
		events, ok := strings.CutPrefix(line, "Cluster at rest:        NO, ")
		if !ok {
			continue
		}
		for _, e := range strings.Split(events, "; ") {
			if strings.HasPrefix(e, "scrub ") || strings.HasPrefix(e, "deep scrub ") {
				scrubs = append(scrubs, e)
			}
		}
	}
	return scrubs
}

// waitNoScrub waits until no PG scrubs: scrubs started before a run go
// on whatever its flags.
func waitNoScrub(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); strings.Contains(ceph(t, "pg", "stat"), "scrubbing"); time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("PGs still scrubbing after 2 minutes: %s", ceph(t, "pg", "stat"))
		}
	}
}

// A deep scrub started by hand mid-run (`ceph osd pool deep-scrub`)
// flags the run in its summary and result, with or without --quiesce:
// Ceph runs a scrub an operator asks for whatever the noscrub flags say,
// so --quiesce cannot keep it out, and a quiesced run says so rather
// than claim to be at rest. Either way the flags end as they began.
// Scrubs are slowed (a sleep between chunks of two objects) so that one
// PG's scrub outlasts a sample; they busy the whole sandbox, which makes
// the test disruptive.
func TestDisruptiveHandStartedDeepScrubFlagsTheRun(t *testing.T) {
	if os.Getenv("CEPHBENCH_DISRUPTIVE") != "1" {
		t.Skip("CEPHBENCH_DISRUPTIVE is not 1: scripts/test.sh runs the disruptive tests after the others")
	}
	pool := cephPool(t)
	slow := map[string]string{"osd_scrub_sleep": "0.1", "osd_scrub_chunk_max": "2", "osd_scrub_chunk_min": "1"}
	slowScrubs := func(on bool) {
		for k, v := range slow {
			if on {
				cephAnywhere(t, "config", "set", "osd", k, v)
			} else {
				cephAnywhere(t, "config", "rm", "osd", k)
			}
		}
	}
	t.Cleanup(func() { slowScrubs(false) })
	waitClean(t)
	// A few hundred objects: enough chunks for a PG's scrub to last a
	// second or more.
	tool(t, "rados", "bench", "-p", pool, "1", "write", "-b", "64K", "-t", "4", "--no-cleanup")
	for _, quiesce := range []bool{false, true} {
		waitNoScrub(t)
		before := osdFlags(t)
		results := t.TempDir()
		args := []string{"rados", "bench", "-p", pool, "12", "write", "-b", "4K", "-t", "4",
			"--cluster-interval", "250ms", "--results", results}
		if quiesce {
			args = append(args, "--quiesce")
		}
		slowScrubs(true)
		var asked time.Time
		started := at(context.Background(), 3*time.Second, func() {
			asked = time.Now()
			cephAnywhere(t, "osd", "pool", "deep-scrub", pool)
		})
		code, out, errOut := cephbench(t, context.Background(), args...)
		<-started
		// The pool's other PGs scrub after the run, at full speed, before
		// the next one.
		slowScrubs(false)
		waitDeepScrubbed(t, pool, asked)
		if code != 0 {
			t.Fatalf("--quiesce %v: exit %d\n%s\n%s", quiesce, code, out, errOut)
		}
		scrubs := scrubEvents(out)
		t.Logf("--quiesce %v: %s", quiesce, strings.Join(scrubs, "; "))
		if !slices.ContainsFunc(scrubs, func(e string) bool { return strings.HasPrefix(e, "deep scrub ") }) {
			t.Errorf("--quiesce %v: the summary names no deep scrub:\n%s", quiesce, out)
		}
		r, _ := onlyResult(t, results)
		if !slices.ContainsFunc(r.Cluster.During.Events, func(e cluster.Event) bool {
			return e.What == "deep scrub" && e.At >= 2 && e.PGs > 0
		}) {
			t.Errorf("--quiesce %v: the result's events have no deep scrub from 2 s on: %v", quiesce, r.Cluster.During.Events)
		}
		if r.Cluster.During.AtRest() {
			t.Errorf("--quiesce %v: the result says the cluster was at rest", quiesce)
		}
		if after := osdFlags(t); after != before {
			t.Errorf("--quiesce %v: flags after the run %q, before %q", quiesce, after, before)
		}
	}
}

// waitDeepScrubbed waits until every PG of pool has deep-scrubbed since
// a time, for the PGs a pool's deep scrub queued go on after a run ends.
func waitDeepScrubbed(t *testing.T, pool string, since time.Time) {
	t.Helper()
	if since.IsZero() {
		return
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		var pgs struct {
			Stats []struct {
				ID    string `json:"pgid"`
				Stamp string `json:"last_deep_scrub_stamp"`
			} `json:"pg_stats"`
		}
		if err := json.Unmarshal([]byte(ceph(t, "pg", "ls-by-pool", pool, "-f", "json")), &pgs); err != nil {
			t.Fatal(err)
		}
		var waiting []string
		for _, pg := range pgs.Stats {
			at, err := time.Parse("2006-01-02T15:04:05.999999-0700", pg.Stamp)
			if err != nil {
				t.Fatalf("PG %s's last_deep_scrub_stamp %q: %v", pg.ID, pg.Stamp, err)
			}
			if at.Before(since) {
				waiting = append(waiting, pg.ID)
			}
		}
		if len(waiting) == 0 && len(pgs.Stats) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PGs %v not deep-scrubbed 2 minutes after the pool's deep scrub was asked for", waiting)
		}
	}
}
