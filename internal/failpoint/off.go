//go:build !failpoint

package failpoint

// Enabled reports whether this binary was built with fail points.
const Enabled = false

// Hit is a place named name: in a release build it does nothing.
func Hit(string) {}

// Op is the place named name that an op passes before it is issued: in a
// release build it returns nil at once.
func Op(string) error { return nil }
