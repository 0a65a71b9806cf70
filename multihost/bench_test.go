package multihost

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/agent"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/step"
)

// sixteenHostsSecond is one second of a read run on each of 16 hosts, as
// their agents send it: some 100,000 reads each, latencies spread from
// microseconds to milliseconds as a loaded client's are.
func sixteenHostsSecond(b *testing.B, n int) [][]byte {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	lines := make([][]byte, 16)
	for h := range lines {
		hist := metrics.NewHistogram()
		for range 100_000 {
			hist.RecordValue(int64(2_000 * (1 + rng.ExpFloat64()*rng.ExpFloat64()*5)))
		}
		t := metrics.Tick{Second: metrics.Second{T: float64(n + 1), Dur: 1, Kinds: map[string]metrics.KindSecond{
			"read": metrics.NewKindSecond(hist.TotalCount(), 4096*hist.TotalCount(), 0, 2_000, hist),
		}}, Histograms: map[string]*hdr.Histogram{"read": hist}}
		wt, err := agent.EncodeTick(t)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := agent.NewEncoder(&buf).Encode(agent.Tick{Step: 0, Tick: wt}); err != nil {
			b.Fatal(err)
		}
		lines[h] = buf.Bytes()
	}
	return lines
}

// BenchmarkCoordinatorSecondOfSixteenHosts is what the coordinator does
// each second of a run on 16 hosts: read every host's tick and merge
// them into the run's second.
func BenchmarkCoordinatorSecondOfSixteenHosts(b *testing.B) {
	lines := sixteenHostsSecond(b, 0)
	j := frontend.Job{Command: "bench", Steps: []step.Step{{Name: "many"}}}
	r := &run{opts: Options{Opened: func(int) metrics.Subscriber { return func(metrics.Tick) {} }}.withDefaults(), job: j, steps: make([]*stepRun, 1)}
	for i := range lines {
		r.links = append(r.links, &link{host: Host{Label: string(rune('a' + i))}, enc: agent.NewEncoder(io.Discard), results: map[int]*result.Result{}})
	}
	r.ready = map[int]int{}
	r.heard, r.over, r.running = make([]time.Time, 16), make([]bool, 16), make([]bool, 16)
	if err := r.start(0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for i, line := range lines {
			m, err := agent.NewDecoder(bytes.NewReader(line)).Decode()
			if err != nil {
				b.Fatal(err)
			}
			if err := r.handle(i, m); err != nil {
				b.Fatal(err)
			}
		}
	}
}
