package frontend

import (
	"fmt"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
)

// cloneFigures are each clone's (worker's) own reads and writes of a fio
// job, counted from its ops as they complete, for the sections fio prints
// per clone without group_reporting. Add is safe for concurrent use.
type cloneFigures struct {
	clones []*clone
}

// clone is one clone's figures: per direction (read, write) its latency
// histogram and, per second since the measured start, ops and bytes.
type clone struct {
	mu       sync.Mutex
	hist     [2]*hdr.Histogram
	ops      [2][]int64
	bytes    [2][]int64
	opsAll   [2]int64
	bytesAll [2]int64
}

var cloneKinds = [2]string{"read", "write"}

func newCloneFigures(n int) *cloneFigures {
	c := &cloneFigures{clones: make([]*clone, n)}
	for i := range c.clones {
		c.clones[i] = &clone{}
	}
	return c
}

// add counts an op of worker that moved size bytes, took lat and ended
// at end since the measured start.
func (c *cloneFigures) add(worker int, write bool, size int64, lat, end time.Duration) {
	if worker < 0 || worker >= len(c.clones) {
		return
	}
	d := 0
	if write {
		d = 1
	}
	cl := c.clones[worker]
	sec := int(end / time.Second)
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.hist[d] == nil {
		cl.hist[d] = metrics.NewHistogram()
	}
	cl.hist[d].RecordValue(min(max(int64(lat), cl.hist[d].LowestTrackableValue()), cl.hist[d].HighestTrackableValue()))
	for len(cl.ops[d]) <= sec {
		cl.ops[d], cl.bytes[d] = append(cl.ops[d], 0), append(cl.bytes[d], 0)
	}
	cl.ops[d][sec]++
	cl.bytes[d][sec] += size
	cl.opsAll[d]++
	cl.bytesAll[d] += size
}

// results are each clone's result: job's, the whole job's, with the
// clone's own ops, bytes, latencies and series, and an even share of its
// CPU.
func (c *cloneFigures) results(job *result.Result) ([]*result.Result, error) {
	out := make([]*result.Result, len(c.clones))
	n := float64(len(c.clones))
	for i, cl := range c.clones {
		cl.mu.Lock()
		r := *job
		r.Ops, r.Histograms, r.Series = map[string]metrics.KindSummary{}, map[string]string{}, nil
		r.CPU.UserSeconds, r.CPU.SystemSeconds = job.CPU.UserSeconds/n, job.CPU.SystemSeconds/n
		for d, kind := range cloneKinds {
			if cl.hist[d] == nil {
				continue
			}
			enc, err := cl.hist[d].EncodeV2()
			if err != nil {
				cl.mu.Unlock()
				return nil, fmt.Errorf("clone %d: the %s histogram: %w", i+1, kind, err)
			}
			r.Histograms[kind] = string(enc)
			r.Ops[kind] = metrics.KindSummary{Ops: cl.opsAll[d], Bytes: cl.bytesAll[d], Latency: metrics.LatencyOf(cl.hist[d])}
		}
		r.Series = cl.series(job.ElapsedSeconds)
		cl.mu.Unlock()
		out[i] = &r
	}
	return out, nil
}

// series is the clone's per-second ops and bytes, the last second cut at
// elapsed seconds, the job's measured time.
func (cl *clone) series(elapsed float64) []metrics.Second {
	secs := max(len(cl.ops[0]), len(cl.ops[1]))
	out := make([]metrics.Second, secs)
	for s := range out {
		end := min(float64(s+1), max(elapsed, float64(s)))
		out[s] = metrics.Second{T: end, Dur: end - float64(s), Kinds: map[string]metrics.KindSecond{}}
		for d, kind := range cloneKinds {
			if cl.hist[d] == nil {
				continue
			}
			var ks metrics.KindSecond
			if s < len(cl.ops[d]) {
				ks.Ops, ks.Bytes = cl.ops[d][s], cl.bytes[d][s]
			}
			out[s].Kinds[kind] = ks
		}
	}
	return out
}
