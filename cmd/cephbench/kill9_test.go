package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/internal/killtest"
)

// A directory's files, by path under it (directories end in "/"), each
// with the digest of its data and its cephbench mark.
func listDir(t *testing.T, root string, digest bool) killtest.Items {
	items := killtest.Items{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			items[rel+"/"] = ""
			return nil
		}
		items[rel] = ""
		if digest {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			mark := make([]byte, 64)
			n, _ := unix.Getxattr(p, "user.cephbench", mark)
			items[rel] = killtest.Digest(append(b, mark[:max(n, 0)]...))
		}
		return nil
	})
	// Files appear and go while a run goes on: one gone between the
	// listing and the look at it is no longer there.
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return items
}

// plant writes files under root, and returns them as listDir shows them.
func plant(t *testing.T, root string, files map[string]string, marked ...string) killtest.Items {
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range marked {
		if err := unix.Setxattr(filepath.Join(root, name), "user.cephbench", []byte("4096"), 0); err != nil {
			t.Skipf("no user extended attributes here: %v", err)
		}
	}
	return listDir(t, root, true)
}

// kill -9 of a run on a directory, while it lays out its files, while it
// measures (bench's cephbench.N.dat and fio's JOB.N.0, which is how each
// host of a run on several hosts names its files) and while it removes
// them: cephbench cleanup leaves only the user's files, unchanged, among
// them files named like cephbench's but without its mark, and a marked one
// named like no file cephbench makes.
func TestKill9FileThenCleanup(t *testing.T) {
	t.Parallel()
	_, bin := build(t)
	dir := filepath.Join(t.TempDir(), "target")
	foreign := plant(t, dir, map[string]string{
		"cephbench.9.dat":     "a user's file, named like a worker's",
		"cephbench.1.dat.bak": "a user's copy",
		"host1.0.0":           "named like a host's file",
		"notes.txt":           "marked, but no file cephbench makes is so named",
		"sub/cephbench.0.dat": "in a directory below",
	}, "notes.txt")
	bench := func(rw, size, duration string) []string {
		return []string{"bench", "--target", dir, "--rw", rw, "--bs", "4k", "--size", size, "--workers", "4", "--duration", duration, "--quiet"}
	}
	// Removing four files takes less than a look at them: the run is
	// stopped while the harness looks, and let go on half a millisecond
	// at a time, and killed where it is seen.
	killtest.Run(t, killtest.Config{
		Bin: bin, Target: dir, Foreign: foreign, Kills: 5, Attempts: 20,
		List: func(t *testing.T, digest bool) killtest.Items { return listDir(t, dir, digest) },
		Phases: []killtest.Phase{
			{Name: "layout", Args: bench("randread", "64M", "10s"), In: killtest.Layout, Delay: 100 * time.Millisecond},
			{Name: "mid-run", Args: bench("randwrite", "4M", "10s"), In: killtest.Measuring, Delay: 1500 * time.Millisecond},
			{Name: "mid-run (fio)", Args: []string{"fio", "--name=kjob", "--directory=" + dir, "--rw=randwrite", "--bs=4k", "--size=4M",
				"--numjobs=2", "--runtime=10", "--time_based"}, In: killtest.Measuring, Delay: 1500 * time.Millisecond},
			{Name: "cleanup", Args: bench("randwrite", "16M", "1s"), In: killtest.After(1), Step: 500 * time.Microsecond},
		},
	})
}

// kill -9 of a write to a dirobj:// directory while it writes before
// measuring (--ramp), while it measures, and while it removes its objects:
// cephbench cleanup leaves only the user's files, unchanged, among them
// objects of another rados bench run.
func TestKill9DirobjThenCleanup(t *testing.T) {
	t.Parallel()
	_, bin := build(t)
	dir := filepath.Join(t.TempDir(), "objs")
	foreign := plant(t, dir, map[string]string{
		"benchmark_data_other":               "named like ours",
		"benchmark_data_otherhost_7_object0": "another run's object",
		"notes.txt":                          "a user's file",
	})
	target := "dirobj://" + dir
	write := func(extra ...string) []string {
		// Paced: a local directory takes objects faster than a listing
		// of it keeps up with.
		return append([]string{"bench", "--target", target, "--rw", "write", "--bs", "4k", "--workers", "4", "--rate", "2000", "--quiet"}, extra...)
	}
	killtest.Run(t, killtest.Config{
		Bin: bin, Target: target, Foreign: foreign, Kills: 5, Attempts: 10,
		List: func(t *testing.T, digest bool) killtest.Items { return listDir(t, dir, digest) },
		Phases: []killtest.Phase{
			{Name: "layout", Args: write("--ramp", "4s", "--duration", "10s"), In: killtest.Ramp(4 * time.Second), Delay: 1500 * time.Millisecond},
			{Name: "mid-run", Args: write("--duration", "10s"), In: killtest.Measuring, Delay: 1500 * time.Millisecond},
			{Name: "cleanup", Args: write("--duration", "3s"), In: killtest.Removing, Delay: 5 * time.Millisecond, Step: time.Millisecond},
		},
	})
}
