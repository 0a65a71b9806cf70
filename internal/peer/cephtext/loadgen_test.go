package cephtext

import (
	"strings"
	"testing"

	"github.com/cephbench/cephbench/metrics"
)

// rados load-gen's line, from ../shared/reference/outputs/rados-load-gen.txt:
// the second, the throughput since the start in MB/s to three significant
// digits, the bytes in flight.
func TestLoadGenLines(t *testing.T) {
	var b strings.Builder
	p := NewLoadGenProgress(&b)
	for _, tk := range []struct {
		t, dur  float64
		read    int64
		write   int64
		pending int64
	}{
		{1, 1, 0, 0, 0},
		{2, 1, 262144, 0, 65536},
		{3, 1, 0, 0, 0},
		{4, 1, 3 << 20, 1 << 20, 4096},
		{5.03, 1.03, 1 << 20, 0, 0}, // the last second, and the wait for the ops in flight
		{5.5, 0.47, 1 << 20, 0, 0},  // a partial second: no line
	} {
		sec := metrics.Second{T: tk.t, Dur: tk.dur, Kinds: map[string]metrics.KindSecond{"read": {Bytes: tk.read}, "write": {Bytes: tk.write}}}
		p.Tick(metrics.Tick{Second: sec, InFlightBytes: tk.pending})
	}
	want := `    1: throughput=0MB/sec pending data=0
    2: throughput=0.125MB/sec pending data=65536
    3: throughput=0.0833MB/sec pending data=0
    4: throughput=1.06MB/sec pending data=4096
    5: throughput=1.04MB/sec pending data=0
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
