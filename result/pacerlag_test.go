package result

import (
	"testing"
	"time"

	"github.com/cephbench/cephbench/metrics"
)

// Hosts' lags merge exactly: the merged histogram holds every host's ops,
// and a host that lagged makes the merge lag at p99 only when its ops are
// more than 1% of all.
func TestPacerLagsMergeExactly(t *testing.T) {
	lagOf := func(n int, each time.Duration) *PacerLag {
		h := metrics.NewHistogram()
		for range n {
			_ = h.RecordValue(int64(each))
		}
		l, err := NewPacerLag(h)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	onTime, late := lagOf(990, 2*time.Microsecond), lagOf(10, 5*time.Millisecond)
	if onTime.Lagged() || !late.Lagged() {
		t.Fatalf("2µs lagged %v, 5ms lagged %v; want false, true", onTime.Lagged(), late.Lagged())
	}
	m, err := MergePacerLags([]*PacerLag{onTime, nil, late})
	if err != nil {
		t.Fatal(err)
	}
	if m.Ops != 1000 || m.Lag.MaxNs < int64(5*time.Millisecond)*999/1000 || m.Lagged() {
		t.Errorf("merged: %d ops, max %v, lagged %v; want 1000, 5ms, not lagged (1%% late)", m.Ops, time.Duration(m.Lag.MaxNs), m.Lagged())
	}
	if m, err := MergePacerLags([]*PacerLag{nil, nil}); m != nil || err != nil {
		t.Errorf("no lags merged to %+v, %v; want nil", m, err)
	}
	if (*PacerLag)(nil).Lagged() {
		t.Error("a run without a pacer lagged")
	}
}
