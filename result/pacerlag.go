package result

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/metrics"
)

// LagLimit is how late, at the 99th percentile, a paced run's generator
// may issue the ops it had a slot free for before PacerLag.Lagged says it
// lagged: ten times what the pacer takes on an idle machine, and a tenth
// of a fast pool's 4K write latency.
const LagLimit = 100 * time.Microsecond

// PacerLag is how late a paced run's generator issued the measured ops
// that had a slot free before they were due: the pacer's own lateness,
// which each op's latency, counted from its intended start, includes.
// Ops that found every slot busy at their due time are not in it: that
// wait is the target's, and is their latency.
type PacerLag struct {
	Ops int64 `json:"ops"`
	// Lag summarises Histogram, in nanoseconds.
	Lag metrics.Latency `json:"lag"`
	// Histogram is the lags' HDR histogram, V2 compressed and base64
	// encoded like Result.Histograms, so that hosts' lags merge exactly.
	Histogram string `json:"histogram"`
}

// NewPacerLag summarises and encodes h; nil when it counted no op.
func NewPacerLag(h *hdr.Histogram) (*PacerLag, error) {
	if h == nil || h.TotalCount() == 0 {
		return nil, nil
	}
	enc, err := h.EncodeV2()
	if err != nil {
		return nil, fmt.Errorf("encoding the pacer's lag: %w", err)
	}
	return &PacerLag{Ops: h.TotalCount(), Lag: metrics.LatencyOf(h), Histogram: string(enc)}, nil
}

// Lagged reports whether the generator issued ops later than LagLimit at
// the 99th percentile: then the run's latencies hold time the client,
// not the target, took.
func (p *PacerLag) Lagged() bool {
	return p != nil && p.Lag.Percentiles.At(99) > int64(LagLimit)
}

// MergePacerLags merges hosts' lags exactly; nil when none has any.
func MergePacerLags(lags []*PacerLag) (*PacerLag, error) {
	var sum *hdr.Histogram
	for _, l := range lags {
		if l == nil {
			continue
		}
		h, err := hdr.Decode([]byte(l.Histogram))
		if err != nil {
			return nil, fmt.Errorf("decoding a pacer's lag: %w", err)
		}
		if sum == nil {
			sum = metrics.NewHistogram()
		}
		sum.Merge(h)
	}
	return NewPacerLag(sum)
}
