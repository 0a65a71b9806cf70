// Package atomicfile writes result files so that a crash or a full disk
// never leaves half of one where a reader looks.
package atomicfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CreateNewJSON is CreateNew of v as indented JSON.
func CreateNewJSON(path string, v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", err
	}
	return CreateNew(path, append(b, '\n'))
}

// WriteJSON writes v as indented JSON to path, creating its directory,
// through a temporary file renamed over path once complete.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return Write(path, append(b, '\n'))
}

// Write writes b to path, creating its directory, through a temporary file
// of its own (two writers never share one) renamed over path once
// complete.
func Write(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	err = errors.Join(err, f.Chmod(0o644), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name()) // ours, half written
	}
	return err
}

// MaxSuffix bounds the suffixes tried for a taken name: past it, the
// folder is not one a person could browse anyway.
const MaxSuffix = 10000

// Suffixed is the n-th candidate for name when names are claimed: name
// itself, then name-2, name-3, ...
func Suffixed(name string, n int) string {
	if n == 1 {
		return name
	}
	return fmt.Sprintf("%s-%d", name, n)
}

// ClaimDir creates the folder dir, its parent as needed, or, when dir is
// taken, the first free of dir-2, dir-3, ...; it returns the folder it
// made. Creation is exclusive (mkdir), so that runs started at once, on
// one host or on hosts sharing a network folder, never share a folder.
func ClaimDir(dir string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	for n := 1; n <= MaxSuffix; n++ {
		d := Suffixed(dir, n)
		err := os.Mkdir(d, 0o755)
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("%s and the %d names after it are taken", dir, MaxSuffix-1)
}

// CreateNew writes b to path, or, when path is taken, to the first free of
// its name with -2, -3, ... before its extension, and returns the path
// written. The file appears whole (written aside, then linked, which fails
// on a taken name), and never in place of another.
func CreateNew(path string, b []byte) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name()) // linked where it belongs, or unwanted
	_, err = f.Write(b)
	if err = errors.Join(err, f.Chmod(0o644), f.Close()); err != nil {
		return "", err
	}
	ext := filepath.Ext(path)
	name := strings.TrimSuffix(path, ext)
	for n := 1; n <= MaxSuffix; n++ {
		p := Suffixed(name, n) + ext
		err := os.Link(f.Name(), p)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			// A filesystem without hard links: exclusive, if not
			// atomic.
			err = writeExclusive(p, b)
		}
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("%s and the %d names after it are taken", path, MaxSuffix-1)
}

func writeExclusive(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Close()); err != nil {
		_ = os.Remove(path) // ours, half written
	}
	return err
}
