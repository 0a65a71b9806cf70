package cli

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/internal/peer/fiojob"
	"github.com/cephbench/cephbench/workload"
)

// fioTotals is what a size-bounded job must do the same in fio and
// cephbench: ops and bytes per direction, over all its jobs.
type fioTotals struct{ ReadOps, ReadBytes, WriteOps, WriteBytes int64 }

// totalsOf sums fio's JSON output over its jobs.
func totalsOf(t *testing.T, out []byte) fioTotals {
	t.Helper()
	type dir struct {
		IOBytes  int64 `json:"io_bytes"`
		TotalIOs int64 `json:"total_ios"`
	}
	var doc struct {
		Jobs []struct{ Read, Write dir }
	}
	// fio may print notes before the JSON.
	if i := strings.IndexByte(string(out), '{'); i > 0 {
		out = out[i:]
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("fio JSON: %v\n%s", err, out)
	}
	var s fioTotals
	for _, j := range doc.Jobs {
		s.ReadOps += j.Read.TotalIOs
		s.ReadBytes += j.Read.IOBytes
		s.WriteOps += j.Write.TotalIOs
		s.WriteBytes += j.Write.IOBytes
	}
	return s
}

// sideBySide runs job (a job file in which DIR stands for the directory
// of its files) in fio 3.33, with an iops log of every I/O's offset, and
// in cephbench, each in a directory of its own. It returns their totals,
// fio's logged offsets per clone and direction, and the sizes of the
// files each left (cephbench keeps its files for the comparison).
func sideBySide(t *testing.T, job string) (fioSum, cbSum fioTotals, fioOffsets map[int]map[string][]int64, fioFiles, cbFiles map[string]int64) {
	t.Helper()
	fioBin, err := exec.LookPath("fio")
	if err != nil {
		t.Skip("fio is not installed (scripts/install-deps.sh installs it): cannot compare with it")
	}
	fioDir, cbDir, logDir := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(dir string) string {
		p := filepath.Join(t.TempDir(), "job.fio")
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(job, "DIR", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cmd := exec.Command(fioBin, "--output-format=json", "--write_iops_log="+filepath.Join(logDir, "x"), "--log_offset=1", write(fioDir))
	cmd.Dir = logDir
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("fio: %v\n%s%s", err, out, ee.Stderr)
	} else if err != nil {
		t.Fatalf("fio: %v", err)
	}
	stdout, _ := fio(t, "--output-format=json", "--keep=1", write(cbDir))
	return totalsOf(t, out), totalsOf(t, []byte(stdout)), iopsLogOffsets(t, logDir), fileSizes(t, fioDir), fileSizes(t, cbDir)
}

// iopsLogOffsets reads fio's iops logs (x_iops.N.log, one per clone N
// from 1, log_offset=1): the offset of each I/O, by clone and direction.
func iopsLogOffsets(t *testing.T, dir string) map[int]map[string][]int64 {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "x_iops.*.log"))
	out := map[int]map[string][]int64{}
	for _, p := range paths {
		clone, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "x_iops."), ".log"))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		out[clone-1] = map[string][]int64{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// time, value, direction (0 read, 1 write), bs, offset, prio
			fields := strings.Split(sc.Text(), ",")
			if len(fields) < 5 {
				t.Fatalf("%s: %q has no offset", p, sc.Text())
			}
			dir := map[string]string{"0": "read", "1": "write"}[strings.TrimSpace(fields[2])]
			off, err := strconv.ParseInt(strings.TrimSpace(fields[4]), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", p, sc.Text(), err)
			}
			out[clone-1][dir] = append(out[clone-1][dir], off)
		}
		f.Close()
	}
	return out
}

// fileSizes is the size of each regular file in dir, by name.
func fileSizes(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int64{}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			sizes[e.Name()] = fi.Size()
		}
	}
	return sizes
}

// generatedOffsets parses job (DIR: dir) as cephbench does and runs the
// generators of its workload over files of size bytes: each worker's
// offsets, one per op of its share of the size bound.
func generatedOffsets(t *testing.T, job, dir string, size int64, seed uint64) map[int][]int64 {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(job, "DIR", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := fiojob.Parse([]string{p}, nil, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	w := plan.Jobs[0].Workload
	geo := engine.Geometry{Layout: engine.Blocks, Files: w.Workers, Size: size}
	perWorker := int64(w.TotalBytes) / int64(w.BlockSize) / int64(w.Workers)
	out := map[int][]int64{}
	for worker := range w.Workers {
		g := workload.New(&w, geo, worker, &workload.Shared{}, seed)
		op := &engine.Op{Buf: make([]byte, w.BlockSize)}
		for range perWorker {
			if !g.Next(op) {
				t.Fatalf("worker %d ran out of ops", worker)
			}
			out[worker] = append(out[worker], op.Offset)
		}
	}
	return out
}

// sortedCopy returns s sorted, leaving s alone.
func sortedCopy(s []int64) []int64 {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// fio's offset and offset_increment: clone N addresses size bytes from
// offset+N*increment of its own file, laid out to end there; with filesize,
// the file is filesize bytes and the clone addresses what follows offset.
// The files both leave, the totals, and the very blocks each clone touches
// (fio's iops log against cephbench's generators) are the same; a random
// job, with fio's random map, touches each block of its region once.
func TestFioOffsetsAgreeWithFio(t *testing.T) {
	for _, c := range []struct{ name, job string }{
		{"offset_increment", "[global]\ndirectory=DIR\nbs=4k\nioengine=psync\nrw=write\ngroup_reporting=1\n[j]\nsize=8m\noffset=2m\nnumjobs=2\noffset_increment=1m\n"},
		{"random map", "[global]\ndirectory=DIR\nbs=4k\nioengine=psync\nrw=randwrite\n[r]\nsize=4m\noffset=3m\n"},
		{"filesize", "[global]\ndirectory=DIR\nbs=16k\nioengine=psync\nrw=randread\n[f]\nfilesize=8m\noffset=1m\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fioSum, cbSum, logged, fioFiles, cbFiles := sideBySide(t, c.job)
			if cbSum != fioSum {
				t.Errorf("cephbench's totals %+v, fio's %+v", cbSum, fioSum)
			}
			if !maps.Equal(cbFiles, fioFiles) {
				t.Errorf("cephbench left files %v, fio %v", cbFiles, fioFiles)
			}
			largest := slices.Max(slices.Collect(maps.Values(cbFiles)))
			gen := generatedOffsets(t, c.job, t.TempDir(), largest, 1)
			for clone, dirs := range logged {
				var fioOffs []int64
				for _, offs := range dirs {
					fioOffs = append(fioOffs, offs...)
				}
				got, want := sortedCopy(gen[clone]), sortedCopy(fioOffs)
				if !slices.Equal(got, want) {
					t.Errorf("clone %d: cephbench touches %d blocks, %d..%d; fio %d, %d..%d",
						clone, len(got), got[0], got[len(got)-1], len(want), want[0], want[len(want)-1])
				}
				if len(slices.Compact(want)) != len(got) {
					t.Errorf("clone %d: fio touched a block twice, which this test assumes it does not", clone)
				}
			}
		})
	}
}

// hottestShare is the share of ops, in percent, on the hottest tenth of
// blocks of blocks: 10 when every block gets the same.
func hottestShare(offsets []int64, bs, blocks int64) float64 {
	counts := make([]int, blocks)
	for _, off := range offsets {
		counts[off/bs]++
	}
	slices.SortFunc(counts, func(a, b int) int { return b - a })
	hot := 0
	for _, n := range counts[:blocks/10] {
		hot += n
	}
	return 100 * float64(hot) / float64(len(offsets))
}

// random_distribution and norandommap: on a 32 MiB file of 4k blocks read
// 8192 times, the hottest tenth of the blocks gets the share of the reads
// that fio's own iops log shows, within a few points, and fio's figure is
// what each distribution must give (a uniform random map exactly 10%, a
// zipf:1.2 over half), so that a distribution ignored or swapped for
// another fails.
func TestFioDistributionsAgreeWithFio(t *testing.T) {
	const bs, blocks = 4096, 8192
	// Subtest names go into the files' directory, where fio reads '#' as
	// a comment and ':' as a list of directories.
	for _, c := range []struct {
		name, options string
		min, max      float64 // fio's figure must lie within, and cephbench's
	}{
		{"random_map", "", 9.99, 10.01},
		{"norandommap", "norandommap", 25, 36},
		{"zipf", "random_distribution=zipf:1.2", 85, 100},
		{"pareto", "random_distribution=pareto:0.3", 50, 65},
		{"normal", "random_distribution=normal:5", 45, 65},
		{"zoned", "random_distribution=zoned:60/10:30/20:10/70", 58, 67},
		{"zoned_abs", "random_distribution=zoned_abs:80/1m:20/31m", 85, 93},
		{"randseed_zipf", "randseed=42\nrandom_distribution=zipf:0.8", 55, 70},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := "[global]\ndirectory=DIR\nbs=4k\nioengine=psync\nrw=randread\nsize=32m\n[d]\n" + c.options + "\n"
			fioSum, cbSum, logged, _, _ := sideBySide(t, job)
			if cbSum != fioSum {
				t.Errorf("cephbench's totals %+v, fio's %+v", cbSum, fioSum)
			}
			fioShare := hottestShare(logged[0]["read"], bs, blocks)
			cbShare := hottestShare(generatedOffsets(t, job, t.TempDir(), bs*blocks, 7)[0], bs, blocks)
			t.Logf("%s: hottest 10%% of the blocks get %.1f%% of fio's reads, %.1f%% of cephbench's", c.name, fioShare, cbShare)
			if fioShare < c.min || fioShare > c.max {
				t.Errorf("fio's figure %.1f%% is outside %g..%g%%: the test's expectation is wrong", fioShare, c.min, c.max)
			}
			if cbShare < fioShare-4 || cbShare > fioShare+4 {
				t.Errorf("cephbench's hottest 10%% get %.1f%%, fio's %.1f%%: more than 4 points apart", cbShare, fioShare)
			}
		})
	}
}
