package frontend

import (
	"testing"
	"time"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
)

// Each clone's result has its own ops, bytes, latencies and seconds, the
// job's run time, and its share of the job's CPU.
func TestCloneFiguresAreEachClonesOwn(t *testing.T) {
	c := newCloneFigures(2)
	for i := range 30 {
		c.add(0, i%3 == 0, 4096, time.Duration(1000+i)*time.Microsecond, time.Duration(i)*50*time.Millisecond)
	}
	c.add(1, true, 8192, time.Millisecond, 1200*time.Millisecond)
	job := &result.Result{Name: "j", ElapsedSeconds: 1.5, CPU: metrics.CPU{UserSeconds: 1, SystemSeconds: 0.5}}
	rs, err := c.results(job)
	if err != nil {
		t.Fatal(err)
	}
	first, second := rs[0], rs[1]
	if first.Ops["read"].Ops != 20 || first.Ops["write"].Ops != 10 || first.Ops["write"].Bytes != 10*4096 {
		t.Errorf("clone 1: %+v; want 20 reads and 10 writes of 4 KiB", first.Ops)
	}
	if _, read := second.Ops["read"]; read || second.Ops["write"].Ops != 1 || second.Histograms["write"] == "" {
		t.Errorf("clone 2: %+v; want its one write and no reads", second.Ops)
	}
	if len(first.Series) != 2 || first.Series[0].Kinds["read"].Ops != 13 || first.Series[1].Dur != 0.5 {
		t.Errorf("clone 1's seconds %+v; want 13 reads in the first (ends 0 to 950 ms, every third a write), a second of 0.5 s", first.Series)
	}
	if first.ElapsedSeconds != 1.5 || first.CPU.UserSeconds != 0.5 || first.CPU.SystemSeconds != 0.25 {
		t.Errorf("clone 1: %v s, CPU %+v; want the job's 1.5 s and half its CPU", first.ElapsedSeconds, first.CPU)
	}
	if job.Ops != nil || job.Series != nil {
		t.Errorf("the job's own result changed: %+v", job)
	}
}
