package file

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// cleanKept removes what cephbench laid out and kept (--keep), or a
// killed run left, at path: path itself if it is a regular file carrying
// cephbench's mark, or, in a directory, the marked per-worker files:
// cephbench.N.dat or cephbench.N.F.dat, or PREFIX.N.F with a file prefix
// (a fio job's name, or the host's in a run on several hosts), F counting
// a worker's files from 0, or any name a file name format gave (the files
// a session created for its workers carry workerAttr). Files without the
// mark, devices and everything else stay.
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
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	// Every name, not cephbench.0.dat onwards until one is missing: a run
	// killed while removing its files leaves the later ones.
	var errs error
	for _, e := range entries {
		if p := filepath.Join(path, e.Name()); keptWorkerFile(e.Name()) || hasAttr(p, workerAttr) {
			errs = errors.Join(errs, removeIfMarked(p))
		}
	}
	return errs
}

// keptWorkerFile reports whether name is how a session names a worker's
// file: cephbench.N.dat, cephbench.N.F.dat, or PREFIX.N.F.
func keptWorkerFile(name string) bool {
	if n, ok := strings.CutPrefix(name, "cephbench."); ok {
		if n, ok := strings.CutSuffix(n, ".dat"); ok {
			i, f, several := strings.Cut(n, ".")
			if number(i) && (!several || number(f)) {
				return true
			}
		}
	}
	i := strings.LastIndexByte(name, '.')
	if i < 0 || !number(name[i+1:]) {
		return false
	}
	rest := name[:i]
	j := strings.LastIndexByte(rest, '.')
	return j > 0 && number(rest[j+1:])
}

// hasAttr reports whether path carries the extended attribute name.
func hasAttr(path, name string) bool {
	var buf [32]byte
	_, err := unix.Lgetxattr(path, name, buf[:])
	return err == nil || errors.Is(err, unix.ERANGE)
}

// number reports whether s is a decimal number as strconv.Itoa writes it.
func number(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == "" && (s == "0" || s[0] != '0')
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
