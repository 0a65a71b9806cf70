// Package failpoint puts named places in cephbench's code that a test can
// switch on, so that a fault lands where the test means it to, every
// time, instead of racing the run: pause the process there (SIGSTOP, for a
// harness to kill it exactly inside a phase), fail the next ops with an
// error, or delay them.
//
// The places are switched on only in a binary built with the failpoint
// build tag (`go build -tags failpoint`), from the environment variable
// CEPHBENCH_FAILPOINTS read when the process starts, or from Set in a
// test. A release build has none of it: Hit and Op do nothing and the
// variable is never read.
//
// CEPHBENCH_FAILPOINTS holds terms separated by ";", each NAME=ACTION:
//
//	pause        stop the process (SIGSTOP) at the first hit, to be killed
//	             there: the place never returns, even if the process is
//	             continued
//	pause@K      the same at the K-th hit
//	error(EIO)   fail the op with the named errno (EIO, ENOSPC, ETIMEDOUT...)
//	delay(20ms)  hold the op that long before it is issued
//	N*ACTION     only the next N hits (N ops) take the action; without
//	             N*, every hit does (pause: once)
//
// The places cephbench has:
//
//	layout   each block, file or object a run writes before it measures
//	ramp     each op a run starts in its unmeasured ramp
//	measure  each measured op a run starts
//	op       each op, before it is issued (error and delay act here)
//	remove   each item (file, object, image, a batch of keys) a run
//	         removes at its end
//	save     a run's result, before it is written
//	cleanup  cephbench cleanup, before it removes anything
package failpoint

// Names of the places in cephbench's code. A place is hit once per item
// it names (see the package comment).
const (
	Layout  = "layout"
	Ramp    = "ramp"
	Measure = "measure"
	OpPoint = "op"
	Remove  = "remove"
	Save    = "save"
	Cleanup = "cleanup"
)

// PausedLine starts the line a pause writes to stderr before it stops the
// process: "cephbench: fail point paused at NAME: hit K (pid P)".
const PausedLine = "cephbench: fail point paused at"

// EnvVar is the environment variable a failpoint build reads its points
// from when the process starts.
const EnvVar = "CEPHBENCH_FAILPOINTS"
