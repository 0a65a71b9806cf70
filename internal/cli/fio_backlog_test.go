package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A write-only job with verify_backlog reads back what it wrote as it
// goes, and the verify after its writes what is left: fio 3.33 and
// cephbench both report each block written once and read back once (256
// reads and 256 writes of 1 MiB), whatever the batch or the order, with
// no error; their per-op logs show the same reads back between the same
// writes, and in a sequential job the same blocks.
func TestFioVerifyBacklogReadsBackEveryBlockOnce(t *testing.T) {
	for _, c := range []struct {
		options string
		offsets bool // fio reads back a random job's blocks by offset, cephbench in the order written
	}{
		{"rw=write", true},
		{"rw=write\nverify_backlog_batch=4", true},
		{"rw=randwrite\nverify_backlog_batch=24", false},
	} {
		job := fmt.Sprintf("[backlog]\n%s\nbs=4k\nsize=1m\nverify=crc32c\nverify_backlog=16\nioengine=psync\nfilename=backlog.dat\nwrite_lat_log=lat\nlog_offset=1\n", c.options)
		want := dirCounts{IOs: 256, Bytes: 1 << 20}
		var logs [2][]string
		for i, run := range []struct {
			who string
			run func(*testing.T, string, ...string) ([]controlJob, int)
		}{{"fio", fioControlJobs}, {"cephbench fio", ourFio}} {
			dir := t.TempDir() // each writes a new file: cephbench will not overwrite fio's data
			writeJobFile(t, dir, job)
			jobs, code := run.run(t, dir, "job.fio")
			if j := jobs[0]; code != 0 || j.Error != 0 || j.Read != want || j.Write != want {
				t.Errorf("%s, %q: exit %d, error %d, reads %+v, writes %+v; want exit 0, no error, %+v each way", run.who, c.options, code, j.Error, j.Read, j.Write, want)
			}
			logs[i] = opsLogged(t, filepath.Join(dir, "lat_clat.1.log"), c.offsets)
		}
		if !slices.Equal(logs[0], logs[1]) {
			t.Errorf("%q: ops in fio's log\n%v\nand in cephbench's\n%v", c.options, logs[0], logs[1])
		}
	}
}

// opsLogged lists the ops of a per-op latency log written with
// log_offset=1, in order: their direction (0 read, 1 write), and their
// offset if offsets.
func opsLogged(t *testing.T, path string, offsets bool) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 5 {
			t.Fatalf("%s: %q has no offset", path, line)
		}
		op := strings.TrimSpace(f[2])
		if offsets {
			op += "@" + strings.TrimSpace(f[4])
		}
		ops = append(ops, op)
	}
	return ops
}
