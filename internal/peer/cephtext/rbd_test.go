package cephtext

import (
	"strings"
	"testing"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
)

func TestByteUnitsAreCephs(t *testing.T) {
	for v, want := range map[float64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 38.98e6: "37 MiB", 8.6e9: "8 GiB"} {
		if got := byteU(v); got != want {
			t.Errorf("byteU(%g) = %q; want %q", v, got, want)
		}
	}
}

// rbd bench's layout, from ../shared/reference/outputs/rbd-bench-*.txt and
// Ceph's Bench.cc: the start line, the header, rows of SEC, OPS and the
// five-second OPS/SEC and BYTES/SEC, the closing lines.
func TestRBDLayout(t *testing.T) {
	var b strings.Builder
	RBDStart(&b, "readwrite", 70, 4096, 16, 41943040, "random")
	p := NewRBDProgress(&b)
	var finished int64
	for i, ops := range []int64{1000, 2000, 3000, 4000, 5000, 6000} {
		finished += ops
		sec := metrics.Second{T: float64(i + 1), Dur: 1, Kinds: map[string]metrics.KindSecond{"read": {Ops: ops, Bytes: ops * 4096}}}
		p.Tick(metrics.Tick{Second: sec, Finished: finished})
	}
	want := `bench  type readwrite read:write=70:30 io_size 4096 io_threads 16 bytes 41943040 pattern random
  SEC       OPS   OPS/SEC   BYTES/SEC
    1      1000      1000     3 MiB/s
    2      3000      1500     5 MiB/s
    3      6000      2000     7 MiB/s
    4     10000      2500     9 MiB/s
    5     15000      3000    11 MiB/s
    6     21000      4000    15 MiB/s
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	lat := metrics.Latency{MinNs: 1e5, MeanNs: 8e5, MaxNs: 9e6, Percentiles: metrics.Percentiles{{P: 50, Ns: 7e5}}}
	RBDSummary(&b, &result.Result{ElapsedSeconds: 2, Ops: map[string]metrics.KindSummary{
		"read":  {Ops: 7000, Bytes: 7000 * 4096, Latency: lat},
		"write": {Ops: 3000, Bytes: 3000 * 4096, Latency: lat},
	}})
	for _, line := range []string{
		"elapsed: 2   ops: 10000   ops/sec: 5000   bytes/sec: 19 MiB/s\n",
		"read_ops: 7000   read_ops/sec: 3500   read_bytes/sec: 13 MiB/s\n",
		"write_ops: 3000   write_ops/sec: 1500   write_bytes/sec: 5 MiB/s\n",
		"read_latency(ms): min 0.1 avg 0.8 p50 0.7 ",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("summary lacks %q:\n%s", line, b.String())
		}
	}
}
