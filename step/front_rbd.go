package step

// RBDBench is rbd bench's options beyond the workload.
type RBDBench struct {
	// IOType is the word rbd bench's start line and the step's name use:
	// "read" (the workload only reads), "readwrite" (--io-type readwrite
	// or rw, or a mix) or "write".
	IOType string `json:"io_type"`
}
