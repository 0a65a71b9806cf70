package file

import "testing"

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
