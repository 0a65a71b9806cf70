package result

// FullQueue is the share of its slots a run's queue must hold on average
// for QueueShort to call it full.
const FullQueue = 0.9

// QueueShort reports whether the run kept fewer ops in flight on average
// than FullQueue of its slots where nothing but the client, the engine or
// the target held them back, and the share it held. A run whose workload
// leaves slots empty on purpose is never short: pacing, think time, a
// byte backlog, syncs that drain the queue, reads back of its writes
// (during or after them), bounds that workers reach one by one, and runs
// cut short or out of ops. False for results saved before occupancy was
// measured.
func (r *Result) QueueShort() (held float64, short bool) {
	if r.Slots <= 0 || r.MeanInFlight <= 0 {
		return 0, false
	}
	held = r.MeanInFlight / float64(r.Slots)
	w := &r.Spec
	switch {
	case w.RateIOPS > 0 || w.RateBytes > 0 || w.ReadRate.Paced() || w.WriteRate.Paced():
	case w.ThinkTime > 0 || w.MaxBacklog > 0 || w.FsyncEvery > 0 || w.EndFsync:
	case w.VerifyWrites || w.VerifyBacklog > 0 || w.BoundsPerWorker:
	case r.StopReason != StopDuration && r.StopReason != StopOps && r.StopReason != StopBytes && r.StopReason != StopSteady:
	default:
		return held, held < FullQueue
	}
	return held, false
}
