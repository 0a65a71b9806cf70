package file

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

// The names cleanup takes for a worker's file are the ones sessions give,
// and only those.
func TestKeptWorkerFileNames(t *testing.T) {
	for name, want := range map[string]bool{
		"cephbench.0.dat": true, "cephbench.12.dat": true, "cephbench.3.1.dat": true, "job.0.0": true, "my.job.4.15": true,
		"cephbench.01.dat": false, "cephbench.x.dat": false, "job.0": false, "job.0.x": false, ".0.0": false, "notes.txt": false,
	} {
		if got := keptWorkerFile(name); got != want {
			t.Errorf("keptWorkerFile(%q) = %v, want %v", name, got, want)
		}
	}
}

// A file name format that gives two of a run's files one name is refused
// before anything is created.
func TestFileNameFormatNamesEachFileOnce(t *testing.T) {
	dir := t.TempDir()
	w := &spec.Workload{Target: spec.Target{Scheme: "file", Location: dir}, Pattern: spec.Sequential, BlockSize: 4096,
		FileSize: 8192, Workers: 2, FilesPerWorker: 2, QueueDepth: 1, TotalOps: 1, FilePrefix: "j", FileNameFormat: "$jobname.$filenum"}
	_, err := openSession(t.Context(), w)
	var usage *engine.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), `"j.0"`) {
		t.Errorf("error %v, want a usage error naming j.0", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files created", len(entries))
	}
}
