package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// cleanKept removes what cephbench laid out and kept (--keep) at path:
// path itself if it is a regular file carrying cephbench's mark, or, in a
// directory, the marked per-worker files (cephbench.N.dat). Files without
// the mark, devices and everything else stay.
func cleanKept(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().IsRegular() {
		return removeIfMarked(path)
	}
	if !fi.IsDir() {
		return nil
	}
	var errs error
	for i := 0; ; i++ {
		p := filepath.Join(path, fmt.Sprintf("cephbench.%d.dat", i))
		if _, err := os.Lstat(p); err != nil {
			break
		}
		errs = errors.Join(errs, removeIfMarked(p))
	}
	return errs
}

func removeIfMarked(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return err
	}
	var buf [32]byte
	if _, err := unix.Getxattr(path, markAttr, buf[:]); err != nil && !errors.Is(err, unix.ERANGE) {
		return nil // not ours
	}
	return os.Remove(path)
}
