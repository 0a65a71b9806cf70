// Package netbench is cephbench's network baseline: TCP throughput between
// two hosts, per second and in total, with the kernel's retransmit counts,
// and round-trip latency percentiles from a ping-pong phase, over a small
// protocol of its own (see proto.go). A Server serves one test at a time;
// RunClient runs one test against it and returns both ends' figures.
package netbench

import "github.com/cephbench/cephbench/result/netresult"

// The test's parameters and result, in netresult so that readers of
// results need not link this package.
type (
	Direction = netresult.Direction
	Params    = netresult.Params
	Result    = netresult.Result
	Interval  = netresult.Interval
)

// The modes and directions, and the result's schema.
const (
	Forward    = netresult.Forward
	Reverse    = netresult.Reverse
	Bidir      = netresult.Bidir
	Up         = netresult.Up
	Down       = netresult.Down
	Schema     = netresult.Schema
	rttMessage = 64 // bytes per ping-pong message
)

// bitsPerSec is a rate, 0 over no time.
func bitsPerSec(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(bytes) * 8 / seconds
}
