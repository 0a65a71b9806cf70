package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cephbench/cephbench/spec"
)

// Kind is what a target is to a plan that picks its steps by target, such
// as the built-in quick plan.
type Kind int

// The kinds of target.
const (
	// KindOther is a target no built-in plan knows how to exercise.
	KindOther Kind = iota
	// KindObjects is an object store: whole-object writes and reads.
	KindObjects
	// KindBlockImage is one block image: block writes and reads over it.
	KindBlockImage
	// KindLocalDirectory is a directory on this host: objects as files
	// and a data file in it.
	KindLocalDirectory
	// KindSharedFilesystem is a directory of a shared filesystem: block
	// writes and reads of files in it.
	KindSharedFilesystem
)

var kindNames = [...]string{"other", "objects", "block image", "local directory", "shared filesystem"}

// String names the kind: "objects", "block image" and so on.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind%d", int(k))
}

// Description is what an engine declares about its targets when it
// registers, so that nothing outside the engine's own folder needs to know
// its scheme. The zero value declares nothing optional.
type Description struct {
	// Syntax is how a target of the scheme is written, for messages:
	// "rados://POOL".
	Syntax string
	// Layout is the Geometry().Layout of every session.
	Layout Layout
	// Kind is what the target is, for plans that choose steps by target.
	Kind Kind
	// LocationNames names the '/'-separated parts of a target's location
	// (before any '?'), which plans offer as variables: {"pool", "image"}
	// makes rbd://bench/img give ${pool} bench and ${image} img.
	LocationNames []string
	// Creates, if set, reports whether a target so located is one the
	// engine creates at the workload's file size (rbd's create=true),
	// rather than one that exists with its own size and data.
	Creates func(location string) bool
	// LocalPath says the location is a path on this host: a relative
	// one is taken from the working directory of whoever names it.
	LocalPath bool
	// LocalDisks says the location is a path on this host on block
	// devices that can be watched during a run (fio's disk stats).
	LocalDisks bool
	// Cleaner, if set, removes what sessions kept (Workload.Keep) at a
	// target; engines without one keep nothing between sessions.
	Cleaner Cleaner
	// DirectFallback says sessions implement BufferedFallback: with
	// Workload.Direct they may use buffered I/O where the filesystem
	// refuses O_DIRECT.
	DirectFallback bool
	// IOEngines are the values of Workload.IOEngine sessions accept,
	// besides "" (the engine's default).
	IOEngines []string
	// FilePrefix says sessions name their per-worker files with
	// Workload.FilePrefix.
	FilePrefix bool
	// Share, if set, gives one of several hosts that run a workload at
	// once its own part of the target, so that no host touches another's
	// data: its own directory, object names or image. host labels the
	// host, unique among them and safe in a file or object name. Nil
	// means every host's target is its own (a local device, null://)
	// and hosts run the workload as given. Errors are *UsageError; Share
	// does no I/O.
	Share func(w *spec.Workload, host string) error
	// ShareRegion, when set, makes w one host's part of one target that
	// n hosts share, each writing and reading only its own region: host
	// k's, the k-th of n equal parts (0 <= k < n) in whole blocks. Nil
	// means hosts cannot share one target. Errors are *UsageError;
	// ShareRegion does no I/O.
	ShareRegion func(w *spec.Workload, k, n int) error
}

// InSubdirectory is location (PATH or PATH?QUERY) with host's directory
// under its path: what a directory target's Share gives each host.
func InSubdirectory(location, host string) string {
	loc, query, hasQuery := strings.Cut(location, "?")
	loc = strings.TrimRight(loc, "/") + "/" + host
	if hasQuery {
		loc += "?" + query
	}
	return loc
}

// InDir is t with its location, if its engine declares it a local path and
// it is relative, taken from the directory dir; empty dir leaves it as is.
func InDir(t spec.Target, dir string) spec.Target {
	if d, err := Describe(t.Scheme); err == nil && d.LocalPath && dir != "" && t.Location != "" && !filepath.IsAbs(t.Location) {
		t.Location = filepath.Join(dir, t.Location)
	}
	return t
}

// BufferedFallback is implemented by sessions that fall back to buffered
// I/O when the workload asks for direct I/O and the filesystem refuses
// O_DIRECT: the result then says that it measured the page cache. It is
// safe for concurrent use with Do.
type BufferedFallback interface {
	// DirectFallback reports whether any I/O of the session so far went
	// through the page cache instead of O_DIRECT.
	DirectFallback() bool
}

// Check returns a *UsageError if w asks for something the engine does not
// declare (an I/O engine, a file prefix). It does no I/O.
func (d Description) Check(w *spec.Workload) error {
	switch {
	case w.IOEngine != "" && len(d.IOEngines) == 0:
		return Usagef("I/O engine %s drives files and block devices, not %s:// targets", w.IOEngine, w.Target.Scheme)
	case w.IOEngine != "" && !slices.Contains(d.IOEngines, w.IOEngine):
		return Usagef("invalid I/O engine %q (want %s)", w.IOEngine, orList(d.IOEngines))
	case w.FilePrefix != "" && !d.FilePrefix:
		return Usagef("a file prefix names files in a directory, not in %s:// targets", w.Target.Scheme)
	}
	return nil
}

// orList joins "a", "b", "c" as "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return fmt.Sprintf("%s or %s", strings.Join(items[:len(items)-1], ", "), items[len(items)-1])
}
