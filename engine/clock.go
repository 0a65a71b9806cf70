package engine

import "time"

var epoch = time.Now()

// Now is the monotonic clock every latency is measured on: time since an
// arbitrary process-wide epoch. Engines that stamp completions themselves
// (for example in a C completion callback reading CLOCK_MONOTONIC) convert
// to this base.
func Now() time.Duration { return time.Since(epoch) }
