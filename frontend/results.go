package frontend

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/io/atomicfile"
)

// A result's size, for the room a run checks for before it starts: the
// JSON (a cluster's state before and after holds most of it) and the
// tick log's intervals, a few op kinds' histograms each. Measured results
// are well under both.
const (
	resultBytes      = 256 << 10
	tickBytesASecond = 4 << 10
	// unboundedSeconds is the length assumed of a run bounded by ops or
	// bytes rather than time.
	unboundedSeconds = 600
)

// PrepareResults readies j's results before any of its I/O. It checks
// that each folder its steps save in exists or can be made, takes new
// files, and has room for the steps' results; then it makes the job's own
// results folder (a disk or s3 bench job's) exclusively, under a new name
// (-2, -3, ...) when another run took it, and moves its steps' saves
// into it. Its errors are *engine.UsageError naming the folder. Once the
// job has run, done removes that folder if nothing was saved in it (the
// job failed before it measured).
func PrepareResults(j Job) (prepared Job, done func(), err error) {
	done = func() {}
	need := map[string]int64{}
	for _, st := range j.Steps {
		if st.Save == "" {
			continue
		}
		seconds := time.Duration(st.Workload.Ramp + st.Workload.Duration).Seconds()
		if st.Workload.Duration == 0 {
			seconds = unboundedSeconds
		}
		need[filepath.Dir(st.Save)] += resultBytes + int64(seconds)*tickBytesASecond
	}
	for dir, bytes := range need {
		if err := canSave(dir, bytes); err != nil {
			return j, done, engine.Usagef("cannot save results in %s: %v", dir, err)
		}
	}
	folder := j.folder()
	if folder == nil || *folder == "" {
		return j, done, nil
	}
	existed := nearestExisting(filepath.Dir(*folder))
	claimed, err := atomicfile.ClaimDir(*folder)
	if err != nil {
		return j, done, engine.Usagef("cannot make the results folder %s: %v", *folder, err)
	}
	j.Steps = append(j.Steps[:0:0], j.Steps...)
	for i, st := range j.Steps {
		if st.Save != "" && filepath.Dir(st.Save) == filepath.Clean(*folder) {
			j.Steps[i].Save = filepath.Join(claimed, filepath.Base(st.Save))
		}
	}
	j.setFolder(claimed)
	done = func() {
		// The folder and the parents made for it, while empty.
		for d := claimed; d != existed; d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				return
			}
		}
	}
	return j, done, nil
}

// nearestExisting is path or the nearest of its parents that exists.
func nearestExisting(path string) string {
	for {
		if _, err := os.Lstat(path); err == nil || filepath.Dir(path) == path {
			return path
		}
		path = filepath.Dir(path)
	}
}

// folder is the job's own results folder, made for its run, if it has
// one.
func (j Job) folder() *string {
	switch {
	case j.Disk != nil:
		return &j.Disk.Results
	case j.S3 != nil:
		return &j.S3.Results
	}
	return nil
}

// setFolder points the job's options, copied, at its results folder.
func (j *Job) setFolder(dir string) {
	switch {
	case j.Disk != nil:
		d := *j.Disk
		d.Results, j.Disk = dir, &d
	case j.S3 != nil:
		s := *j.S3
		s.Results, j.S3 = dir, &s
	}
}

// canSave says why results of about need bytes cannot be saved in dir:
// the nearest folder of its path that exists is not a folder, cannot be
// written, or has less room; nil when they can.
func canSave(dir string, need int64) error {
	existing := nearestExisting(dir)
	if fi, err := os.Stat(existing); err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", existing)
	}
	if err := unix.Access(existing, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("%s cannot be written: %w", existing, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(existing, &st); err != nil {
		return err
	}
	if free := int64(st.Bavail) * st.Bsize; free < need {
		return fmt.Errorf("%s free, and its results need about %s: free some space or save them elsewhere (--results)", bytesText(free), bytesText(need))
	}
	return nil
}

// bytesText is n bytes in binary units, as a person would say it.
func bytesText(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f, u = f/1024, u+1
	}
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", f), "0"), ".") + " " + units[u]
}
