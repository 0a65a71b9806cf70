package cli

import (
	"context"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/promtest"
	"github.com/cephbench/cephbench/metrics/promexport"
	"github.com/cephbench/cephbench/result"
)

// metricsRun is cephbench run in the background with --metrics-listen,
// until its ctx is canceled.
type metricsRun struct {
	stdout, stderr *watchedOutput
	url            string
	cancel         func()
	exit           chan int
}

var metricsAt = regexp.MustCompile(`cephbench: metrics at (http://\S+)`)

// startMetricsRun runs args in dir, each line of stdout watched for
// until, and waits for the address of the metrics.
func startMetricsRun(t *testing.T, dir, until string, args ...string) *metricsRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &metricsRun{stdout: watchFor(until), stderr: watchFor("/metrics\n"), cancel: cancel, exit: make(chan int, 1)}
	go func() { r.exit <- Main(ctx, Env{Stdout: r.stdout, Stderr: r.stderr, Dir: dir}, args) }()
	t.Cleanup(func() {
		cancel()
		<-r.exit
	})
	select {
	case <-r.stderr.seen:
	case code := <-r.exit:
		t.Fatalf("exit %d before saying where the metrics are:\n%s", code, r.stderr.String())
	}
	m := metricsAt.FindStringSubmatch(r.stderr.String())
	if m == nil || strings.Count(r.stderr.String(), "metrics at") != 1 {
		t.Fatalf("stderr %q: want one line saying where the metrics are", r.stderr.String())
	}
	r.url = m[1]
	return r
}

// waitSeen waits for the line the run's stdout is watched for.
func (r *metricsRun) waitSeen(t *testing.T) {
	t.Helper()
	select {
	case <-r.stdout.seen:
	case code := <-r.exit:
		t.Fatalf("exit %d before its output was seen:\n%s\n%s", code, r.stdout.String(), r.stderr.String())
	}
}

// stop is Ctrl-C during the linger: Main returns at once, with the run's
// own exit code, and the metrics are no longer served.
func (r *metricsRun) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case code := <-r.exit:
		r.exit <- code
		if code != ExitOK {
			t.Errorf("exit %d after Ctrl-C in the linger; the run itself was done", code)
		}
	case <-time.After(time.Minute):
		t.Fatal("Ctrl-C did not end the linger")
	}
	if _, err := http.Get(r.url); err == nil {
		t.Error("the metrics are still served after the run ended")
	}
}

func TestLiveMetricsAgreeWithTheResult(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f")
	r := startMetricsRun(t, dir, "result saved to ", "bench", "--target", target, "--size", "8M", "--rw", "randrw", "--iodepth", "4",
		"--duration", "4s", "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "5m")

	// Mid-run: counting, with the step's ops in flight.
	deadline := time.Now().Add(time.Minute)
	for {
		got := promtest.Scrape(t, r.url)
		if reads := promtest.Series(got, promexport.OpsTotal, map[string]string{"kind": "read"}); reads.GetCounter().GetValue() > 0 {
			flight := promtest.Series(got, promexport.OpsInFlight, map[string]string{"step": "bench", "target": target})
			host, _ := os.Hostname()
			if flight == nil || promtest.Series(got, promexport.OpsInFlight, map[string]string{"host": host}) == nil {
				t.Errorf("no in-flight gauge of step bench on %s at host %s: %v", target, host, got[promexport.OpsInFlight])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no reads counted a minute into the run")
		}
		time.Sleep(100 * time.Millisecond)
	}

	r.waitSeen(t)
	saved := regexp.MustCompile(`result saved to (\S+)`).FindStringSubmatch(r.stdout.String())
	res, err := result.Load(saved[1])
	if err != nil {
		t.Fatal(err)
	}
	got := promtest.Scrape(t, r.url)
	for _, kind := range []string{"read", "write"} {
		want := res.Ops[kind]
		labels := map[string]string{"step": "bench", "kind": kind}
		ops := promtest.Series(got, promexport.OpsTotal, labels).GetCounter().GetValue()
		bytes := promtest.Series(got, promexport.BytesTotal, labels).GetCounter().GetValue()
		errs := promtest.Series(got, promexport.ErrorsTotal, labels).GetCounter().GetValue()
		h := promtest.Series(got, promexport.OpLatency, labels).GetHistogram()
		t.Logf("%s: scraped %v ops, %v bytes, %v errors, histogram count %d, mean %.3f ns; the result has %d, %d, %d, mean %.3f ns",
			kind, ops, bytes, errs, h.GetSampleCount(), h.GetSampleSum()/float64(h.GetSampleCount())*1e9, want.Ops, want.Bytes, want.Errors, want.Latency.MeanNs)
		if want.Ops == 0 || ops != float64(want.Ops) || bytes != float64(want.Bytes) || errs != float64(want.Errors) || h.GetSampleCount() != uint64(want.Ops) {
			t.Errorf("%s: the scrape after the run differs from the saved result", kind)
		}
		if mean := h.GetSampleSum() / float64(h.GetSampleCount()) * 1e9; math.Abs(mean-want.Latency.MeanNs) > 1e-6*want.Latency.MeanNs {
			t.Errorf("%s: mean latency %.1f ns from the histogram, %.1f ns in the result", kind, mean, want.Latency.MeanNs)
		}
	}
	if v := promtest.Series(got, promexport.OpsInFlight, nil).GetGauge().GetValue(); v != 0 {
		t.Errorf("%v ops in flight after the step ended", v)
	}
	r.stop(t)
}

func TestLiveMetricsOfAPlanAreLabelledByStep(t *testing.T) {
	plan := writePlan(t, `
name: two-steps
targets:
  - name: mem
    target: null://
steps:
  - name: first
    workload: {rw: randread, bs: 4k, size: 1M, ops: 2000}
  - name: second
    workload: {rw: randwrite, bs: 4k, size: 1M, ops: 3000}
`)
	dir := t.TempDir()
	r := startMetricsRun(t, dir, "(done)\n", "run", plan, "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "5m")
	r.waitSeen(t)
	got := promtest.Scrape(t, r.url)
	for _, c := range []struct {
		step, kind string
		ops        float64
	}{{"first", "read", 2000}, {"second", "write", 3000}, {"first", "write", -1}, {"second", "read", -1}} {
		m := promtest.Series(got, promexport.OpsTotal, map[string]string{"step": c.step, "kind": c.kind, "target": "null://"})
		switch {
		case c.ops < 0 && m != nil:
			t.Errorf("step %s has %s ops: %v", c.step, c.kind, m)
		case c.ops > 0 && m.GetCounter().GetValue() != c.ops:
			t.Errorf("step %s: %v %s ops, want %v", c.step, m.GetCounter().GetValue(), c.kind, c.ops)
		}
	}
	r.stop(t)
}

// An address that does not parse or is taken is bad input: one line and
// exit 2 before any I/O, as are a linger without an address and metrics
// asked of a plan's step.
func TestBadMetricsFlagsAreRefusedBeforeAnyIO(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, flags := range [][]string{
		{"--metrics-listen", "nonsense"},
		{"--metrics-listen", taken.Addr().String()},
		{"--metrics-linger", "10s"},
	} {
		dir := t.TempDir()
		for _, args := range [][]string{
			{"bench", "--target", filepath.Join(dir, "f"), "--size", "1M", "--rw", "write", "--duration", "1s"},
			{"disk", filepath.Join(dir, "f"), "--duration", "1s"},
			{"fio", "--name=x", "--filename=" + filepath.Join(dir, "f"), "--size=1M", "--rw=write", "--runtime=1"},
			{"run", "--target", filepath.Join(dir, "d"), "--duration", "1s"},
		} {
			args = append(args, flags...)
			code, stdout, stderr := cephbenchIn(t, context.Background(), dir, nil, args...)
			wantUsageError(t, strings.Join(args, " "), code, stdout, stderr)
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("%v: wrote %v", args, entries)
			}
		}
	}
	// A plan's steps run in the plan's process: the plan serves them.
	plan := writePlan(t, "name: x\nsteps:\n  - name: a\n    run: bench --target null:// --ops 10 --metrics-listen 127.0.0.1:0\n")
	dir := t.TempDir()
	code, stdout, stderr := cephbenchIn(t, context.Background(), dir, nil, "run", plan)
	wantUsageError(t, "a step with --metrics-listen", code, stdout, stderr)
	if !strings.Contains(stderr, "plan's step") {
		t.Errorf("a step with --metrics-listen: %q", stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a step with --metrics-listen: wrote %v", entries)
	}
}
