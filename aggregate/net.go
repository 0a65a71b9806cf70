package aggregate

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/result/netresult"
	"github.com/cephbench/cephbench/spec"
)

const netSchema = netresult.Schema

// loadNet reads a network result as a result with one op kind per
// direction ("up" is client to server), counted by the receiver, and the
// round-trip latency as each kind's latency.
func loadNet(path string, b []byte) (*result.Result, error) {
	var n netresult.Result
	if err := json.Unmarshal(b, &n); err != nil {
		return nil, fmt.Errorf("%s: not a cephbench net result: %w", path, err)
	}
	r := &result.Result{
		Schema: result.Schema, Version: n.Version, Name: n.Name,
		Spec:     spec.Workload{Name: n.Name, Target: spec.Target{Scheme: "net", Location: n.Server}, Workers: n.Params.Streams, QueueDepth: 1},
		Measures: result.MeasuresNetwork, Host: n.ClientHost, Start: n.Start, End: n.End, ElapsedSeconds: n.End.Sub(n.Start).Seconds(),
		StopReason: "time", Interrupted: n.Interrupted, Notes: n.Notes, Plan: n.Plan,
		Ops: map[string]metrics.KindSummary{}, Errors: map[string]int64{}, Histograms: map[string]string{},
	}
	for _, d := range []struct {
		kind string
		t    *netresult.Throughput
	}{{"up", n.Up}, {"down", n.Down}} {
		if d.t == nil {
			continue
		}
		s := metrics.KindSummary{Bytes: d.t.Receiver.Bytes}
		per := d.t.PerSecond
		s.BandwidthBps = metrics.Stats{Mean: d.t.Receiver.BitsPerSec / 8, Min: per.Min / 8, Max: per.Max / 8, Stddev: per.Stddev / 8, Samples: per.Samples}
		if n.RTT != nil {
			s.Latency = n.RTT.Latency
			r.Histograms[d.kind] = n.RTT.Histogram
		}
		r.Ops[d.kind] = s
	}
	for _, iv := range n.Series {
		sec := metrics.Second{T: iv.End, Dur: iv.End - iv.Start, Kinds: map[string]metrics.KindSecond{}}
		if iv.Up != nil {
			sec.Kinds["up"] = metrics.KindSecond{Bytes: iv.Up.Bytes}
		}
		if iv.Down != nil {
			sec.Kinds["down"] = metrics.KindSecond{Bytes: iv.Down.Bytes}
		}
		r.Series = append(r.Series, sec)
	}
	if r.ElapsedSeconds <= 0 {
		r.ElapsedSeconds = time.Duration(n.Params.Duration).Seconds()
	}
	return r, nil
}
