package runner

import "unsafe"

// uintptrOf is the address of b's first byte; Go's heap does not move
// objects, so the alignment computed from it holds.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
