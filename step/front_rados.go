package step

import "fmt"

// RadosBench is rados bench's options beyond the workload.
type RadosBench struct {
	// Mode is "write", "seq" or "rand". A seq or rand step's workload
	// reads; its block size, object size and (seq) op count are those of
	// the last write, which its run reads from the pool's metadata object.
	Mode string `json:"mode"`
	// Format is how the results print: "plain" (rados bench's table and
	// summary), "json" or "json-pretty" (rados bench's JSON document).
	Format string `json:"format"`
}

// Validate reports a mode or format rados bench does not have, in the
// words of its command line.
func (r *RadosBench) Validate() error {
	switch {
	case r.Mode != "write" && r.Mode != "seq" && r.Mode != "rand":
		return fmt.Errorf("invalid bench mode %q (want write, seq or rand)", r.Mode)
	case r.Format != "plain" && r.Format != "json" && r.Format != "json-pretty":
		return fmt.Errorf("invalid --format %q (want plain, json or json-pretty)", r.Format)
	}
	return nil
}
