package multihost

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/promtest"
	"github.com/cephbench/cephbench/metrics/promexport"
)

// A run on many hosts served as live metrics: each host's series are its
// own, labelled with its host, and add up to its own result.
func TestLiveMetricsOfEachHostAreItsOwn(t *testing.T) {
	hosts := startAgents(t, 2, nil)
	ep, err := promexport.Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close(context.Background(), 0)
	var outcome *Outcome
	run := frontend.Following(func(ctx context.Context, j frontend.Job, out frontend.IO) error {
		var err error
		outcome, err = Printing{}.Run(ctx, j, hostsOf(hosts), Options{}, out)
		return err
	}, ep.Follow)
	if err := run(context.Background(), benchJob(nullWorkload(2*time.Second)), frontend.IO{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	got := promtest.Scrape(t, ep.URL())
	merged := outcome.Results[0]
	if len(merged.Hosts) != 2 {
		t.Fatalf("%d hosts' results", len(merged.Hosts))
	}
	for i, res := range merged.Hosts {
		host := outcome.Labels[0][i]
		labels := map[string]string{"host": host, "step": "many", "target": "null://", "kind": "read"}
		ops := promtest.Series(got, promexport.OpsTotal, labels).GetCounter().GetValue()
		count := promtest.Series(got, promexport.OpLatency, labels).GetHistogram().GetSampleCount()
		t.Logf("host %s: %v reads scraped, histogram count %d; its result has %d", host, ops, count, res.Ops["read"].Ops)
		if res.Ops["read"].Ops == 0 || ops != float64(res.Ops["read"].Ops) || count != uint64(res.Ops["read"].Ops) {
			t.Errorf("host %s: the scrape differs from its result", host)
		}
		flight := promtest.Series(got, promexport.OpsInFlight, map[string]string{"host": host})
		if flight == nil || flight.GetGauge().GetValue() != 0 {
			t.Errorf("host %s: in flight %v after the run", host, flight)
		}
	}
}
