package step

import "github.com/cephbench/cephbench/internal/peer/loadgen"

// Front is the command a step was asked for with and that command's
// options beyond the workload: what it does around the run and how it
// prints it, so that the step runs and prints the same wherever it runs.
// Command names the command ("bench", "rados bench", "fio", ...); the
// field of that command's options, if it has any, is set and the others
// are nil.
type Front struct {
	Command string `json:"command"`
	Fio     *Fio   `json:"fio,omitempty"`
	// Net is net client's: the server and the test's parameters.
	Net *Net `json:"net,omitempty"`
	// S3 is an s3 bench phase's options.
	S3         *S3         `json:"s3,omitempty"`
	RadosBench *RadosBench `json:"rados_bench,omitempty"`
	RBDBench   *RBDBench   `json:"rbd_bench,omitempty"`
	// LoadGen is rados load-gen's options; the step's workload is the one
	// they make (loadgen.Config.Workload).
	LoadGen *loadgen.Config `json:"load_gen,omitempty"`
}
