// Package multihost runs one job on many client hosts at once: it gives
// each host its share, starts the agents together at one absolute time
// after measuring how far each host's clock is from the coordinator's,
// merges their per-second ticks into the run's seconds, and their results
// into one exact answer.
package multihost

import (
	"fmt"
	"time"
)

// DefaultMaxSkew is the clock difference between the coordinator and a
// host above which a run is refused: Ceph's own mon_clock_drift_allowed.
const DefaultMaxSkew = 50 * time.Millisecond

// ClockSample is one ping's round trip: the coordinator's clock when the
// ping left and when its pong came back, and the host's clock when it
// answered.
type ClockSample struct {
	Sent, Received time.Time
	Host           time.Time
}

// RoundTrip is how long the sample's ping took to come back.
func (s ClockSample) RoundTrip() time.Duration { return s.Received.Sub(s.Sent) }

// Offset is how far the host's clock was ahead of the coordinator's,
// taking the host's answer to have come halfway through the round trip.
func (s ClockSample) Offset() time.Duration {
	mid := s.Sent.Add(s.RoundTrip() / 2)
	return s.Host.Sub(mid)
}

// ClockOffset estimates a host's clock offset from samples: the offset of
// the sample with the shortest round trip, whose error is at most half
// that round trip, which it returns as the estimate's uncertainty. It
// needs at least one sample.
func ClockOffset(samples []ClockSample) (offset, uncertainty time.Duration, err error) {
	if len(samples) == 0 {
		return 0, 0, fmt.Errorf("no clock samples")
	}
	best := samples[0]
	for _, s := range samples[1:] {
		if s.RoundTrip() < best.RoundTrip() {
			best = s
		}
	}
	if best.RoundTrip() < 0 {
		return 0, 0, fmt.Errorf("a pong came back before its ping left")
	}
	return best.Offset(), best.RoundTrip() / 2, nil
}

// CheckSkew refuses a host whose clock is further than maxSkew from the
// coordinator's, for sure: beyond maxSkew by more than the estimate's
// uncertainty.
func CheckSkew(host string, offset, uncertainty, maxSkew time.Duration) error {
	if offset.Abs()-uncertainty > maxSkew {
		return fmt.Errorf("host %s: its clock is %s off this host's (±%s), more than the %s allowed (Ceph's mon_clock_drift_allowed; --max-clock-skew raises it)",
			host, offset.Round(time.Millisecond), uncertainty.Round(time.Microsecond), maxSkew)
	}
	return nil
}

// HostTime is the host's clock reading for the coordinator's time t,
// given the host's offset: what the coordinator sends as a start time.
func HostTime(t time.Time, offset time.Duration) time.Time { return t.Add(offset) }
