package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/internal/failpoint"
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
// host of a run on several hosts names its files), while it removes them
// and while it saves its result: cephbench cleanup leaves only the user's
// files, unchanged, among them files named like cephbench's but without
// its mark, and a marked one named like no file cephbench makes.
func TestKill9FileThenCleanup(t *testing.T) {
	t.Parallel()
	bin := buildFailpoints(t)
	dir := filepath.Join(t.TempDir(), "target")
	foreign := plant(t, dir, map[string]string{
		"cephbench.9.dat":     "a user's file, named like a worker's",
		"cephbench.1.dat.bak": "a user's copy",
		"host1.0.0":           "named like a host's file",
		"notes.txt":           "marked, but no file cephbench makes is so named",
		"sub/cephbench.0.dat": "in a directory below",
	}, "notes.txt")
	bench := func(rw, size string, extra ...string) []string {
		return append([]string{"bench", "--target", dir, "--rw", rw, "--bs", "4k", "--size", size, "--workers", "4", "--quiet"}, extra...)
	}
	killtest.Run(t, killtest.Config{
		Bin: bin, Target: dir, Foreign: foreign, Kills: 5,
		List: func(t *testing.T, digest bool) killtest.Items { return listDir(t, dir, digest) },
		Phases: []killtest.Phase{
			// 16 MiB a worker: 16 layout writes of 1 MiB each.
			{Name: "layout", Args: bench("randread", "64M", "--duration", "10s"), Point: failpoint.Layout, Hits: 16},
			{Name: "mid-run", Args: bench("randwrite", "4M", "--duration", "10s"), Point: failpoint.Measure, Hits: 2000, Saved: true},
			{Name: "mid-run (fio)", Args: []string{"fio", "--name=kjob", "--directory=" + dir, "--rw=randwrite", "--bs=4k", "--size=4M",
				"--numjobs=2", "--runtime=10", "--time_based"}, Point: failpoint.Measure, Hits: 2000, Saved: true},
			{Name: "removal", Args: bench("randwrite", "4M", "--ops", "200"), Point: failpoint.Remove, Hits: 4, Saved: true},
			{Name: "save", Args: bench("randwrite", "4M", "--ops", "200"), Point: failpoint.Save, Hits: 1, Empty: true, Saved: true},
		},
	})
}

// kill -9 of a write to a dirobj:// directory while it writes before
// measuring (--ramp), while it measures, and while it removes its objects,
// and of the cleanup after it: cephbench cleanup leaves only the user's
// files, unchanged, among them objects of another rados bench run.
func TestKill9DirobjThenCleanup(t *testing.T) {
	t.Parallel()
	bin := buildFailpoints(t)
	dir := filepath.Join(t.TempDir(), "objs")
	foreign := plant(t, dir, map[string]string{
		"benchmark_data_other":               "named like ours",
		"benchmark_data_otherhost_7_object0": "another run's object",
		"notes.txt":                          "a user's file",
	})
	target := "dirobj://" + dir
	write := func(extra ...string) []string {
		return append([]string{"bench", "--target", target, "--rw", "write", "--bs", "4k", "--workers", "4", "--quiet"}, extra...)
	}
	killtest.Run(t, killtest.Config{
		Bin: bin, Target: target, Foreign: foreign, Kills: 5,
		List: func(t *testing.T, digest bool) killtest.Items { return listDir(t, dir, digest) },
		Phases: []killtest.Phase{
			// Ramp hit 1 comes before the first object is written.
			{Name: "ramp", Args: write("--ramp", "1m", "--duration", "10s"), Point: failpoint.Ramp, Hits: 500, Empty: true},
			{Name: "mid-run", Args: write("--duration", "10s"), Point: failpoint.Measure, Hits: 2000, Saved: true},
			{Name: "removal", Args: write("--ops", "500"), Point: failpoint.Remove, Hits: 500, Saved: true, Cleanup: true},
		},
	})
}

// A release build has no fail points: one switched on in its environment
// changes nothing, where the same run of a failpoint build stops.
func TestReleaseBuildIgnoresFailPoints(t *testing.T) {
	t.Parallel()
	_, bin := build(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "bench", "--target", filepath.Join(dir, "f"), "--rw", "write", "--size", "1M", "--ops", "10", "--quiet",
		"--results", dir)
	cmd.Env = append(os.Environ(), failpoint.EnvVar+"=save=pause;layout=pause;op=error(EIO)")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), failpoint.PausedLine) || !strings.Contains(string(out), "errors: none") {
		t.Fatalf("%v: want a run that ignores the fail points\n%s", err, out)
	}
}
