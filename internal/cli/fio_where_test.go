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
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
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
	return sideBySideOn(t, job, nil)
}

// sideBySideOn is sideBySide with the directories of the files prepared
// by setup first (nil: nothing).
func sideBySideOn(t *testing.T, job string, setup func(dir string)) (fioSum, cbSum fioTotals, fioOffsets map[int]map[string][]int64, fioFiles, cbFiles map[string]int64) {
	t.Helper()
	fioBin, err := exec.LookPath("fio")
	if err != nil {
		t.Skip("fio is not installed (scripts/install-deps.sh installs it): cannot compare with it")
	}
	fioDir, cbDir, logDir := t.TempDir(), t.TempDir(), t.TempDir()
	if setup != nil {
		setup(fioDir)
		setup(cbDir)
	}
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
	if plan.Jobs[0].WholeTarget {
		if err := w.BoundToPasses(spec.Size(size), plan.Jobs[0].Passes()); err != nil {
			t.Fatal(err)
		}
	}
	geo := engine.Geometry{Layout: engine.Blocks, Files: w.Workers * max(w.FilesPerWorker, 1), Size: size}
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
// nrfiles gives each clone several files, JOBNAME.N.F, which
// file_service_type takes in turn. The files both leave (names and
// sizes), the totals, and the blocks each clone touches (fio's iops log
// against cephbench's generators) are the same: in the same order for
// sequential jobs, which shows the files taken in the same turns; as a
// set for random ones, where fio's random map touches each block of a
// region once per pass.
func TestFioOffsetsAgreeWithFio(t *testing.T) {
	const global = "[global]\ndirectory=DIR\nioengine=psync\n"
	for _, c := range []struct {
		name, job string
		ordered   bool // sequential: the same offsets in the same order
	}{
		{"offset_increment", global + "bs=4k\nrw=write\ngroup_reporting=1\n[j]\nsize=8m\noffset=2m\nnumjobs=2\noffset_increment=1m\n", true},
		{"random_map", global + "bs=4k\nrw=randwrite\n[r]\nsize=4m\noffset=3m\n", false},
		{"random_map_clones", global + "bs=4k\nrw=randwrite\ngroup_reporting=1\nloops=2\n[rc]\nsize=1m\nnumjobs=4\n", false},
		{"filesize", global + "bs=16k\nrw=randread\n[f]\nfilesize=8m\noffset=1m\n", false},
		{"nrfiles", global + "bs=4k\nrw=randwrite\n[n]\nsize=8m\nnrfiles=4\n", false},
		{"roundrobin", global + "bs=4k\nrw=write\n[n]\nsize=2m\nnrfiles=2\nfile_service_type=roundrobin:3\n", true},
		{"sequential", global + "bs=8k\nrw=read\ngroup_reporting=1\n[s]\nfilesize=1m\nnrfiles=3\nnumjobs=2\nfile_service_type=sequential\n", true},
		{"random_service", global + "bs=4k\nrw=randread\n[rs]\nfilesize=1m\nnrfiles=3\nfile_service_type=random:4\n", false},
		{"filename_format", global + "bs=4k\nrw=write\n[ff]\nsize=256k\nnrfiles=2\nnumjobs=2\nfilename_format=data-$clientuid-$jobname-$filenum.$jobnum\n", true},
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
			sameBlocks(t, generatedOffsets(t, c.job, t.TempDir(), largest, 1), logged, c.ordered)
		})
	}
}

// size=N% and offset=N%: of filesize= for the files a job lays out (fio
// lays out only the part it addresses), or of an existing file's size.
// The totals, the files and the blocks each clone touches are fio's.
func TestFioPercentagesAgreeWithFio(t *testing.T) {
	data := func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "data"), make([]byte, 8<<20), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const global = "[global]\nioengine=psync\nbs=4k\n"
	for _, c := range []struct {
		name, job string
		setup     func(string)
		ordered   bool
	}{
		{"size_of_filesize", global + "directory=DIR\nrw=write\n[p]\nfilesize=8m\nsize=50%\n", nil, true},
		{"offset_of_a_file", global + "filename=DIR/data\nrw=read\n[o]\noffset=25%\n", data, true},
		{"size_of_a_file", global + "filename=DIR/data\nrw=randread\ngroup_reporting=1\n[s]\nsize=50%\nnumjobs=2\noffset_increment=1m\n", data, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fioSum, cbSum, logged, fioFiles, cbFiles := sideBySideOn(t, c.job, c.setup)
			if cbSum != fioSum {
				t.Errorf("cephbench's totals %+v, fio's %+v", cbSum, fioSum)
			}
			if !maps.Equal(cbFiles, fioFiles) {
				t.Errorf("cephbench left files %v, fio %v", cbFiles, fioFiles)
			}
			dir := t.TempDir()
			if c.setup != nil {
				c.setup(dir)
			}
			sameBlocks(t, generatedOffsets(t, c.job, dir, slices.Max(slices.Collect(maps.Values(cbFiles))), 1), logged, c.ordered)
		})
	}
}

// A filesize range makes each file its own size, drawn at random: fio and
// cephbench draw them apart, so the sizes differ but both keep within the
// range, in whole blocks, with the same names, and a size= within the
// smallest files makes the same number of ops.
func TestFioFilesizeRangeAgreesWithFio(t *testing.T) {
	job := "[global]\ndirectory=DIR\nioengine=psync\nbs=4k\nrw=randwrite\n[fr]\nnrfiles=4\nfilesize=1m-3m\nsize=4m\n"
	fioSum, cbSum, _, fioFiles, cbFiles := sideBySide(t, job)
	if cbSum != fioSum {
		t.Errorf("cephbench's totals %+v, fio's %+v", cbSum, fioSum)
	}
	if got, want := slices.Sorted(maps.Keys(cbFiles)), slices.Sorted(maps.Keys(fioFiles)); !slices.Equal(got, want) {
		t.Errorf("cephbench left files %v, fio %v", got, want)
	}
	distinct := map[int64]bool{}
	for name, size := range cbFiles {
		if size < 1<<20 || size > 3<<20 || size%4096 != 0 {
			t.Errorf("%s: %d bytes, want whole 4k blocks in 1m..3m", name, size)
		}
		distinct[size] = true
	}
	if len(distinct) < 2 {
		t.Errorf("every file is %v bytes: the sizes are not drawn", cbFiles)
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

// A job's several files, kept, are what cephbench cleanup removes: every
// file it laid out, named as fio names them or as filename_format says,
// and neither a file of the same shape of name that cephbench did not
// write nor anything else.
func TestFioNrfilesKeptThenCleanedUp(t *testing.T) {
	for _, c := range []struct {
		format     string
		user, ours []string
	}{
		{"", []string{"n.0.7", "notes.txt"}, []string{"n.0.0", "n.0.1", "n.1.0", "n.1.1"}},
		{"filename_format=f$filenum-$jobnum.img\n", []string{"f9-0.img", "notes.txt"}, []string{"f0-0.img", "f0-1.img", "f1-0.img", "f1-1.img"}},
	} {
		dir := t.TempDir()
		job := filepath.Join(t.TempDir(), "job.fio")
		text := "[n]\ndirectory=" + dir + "\nioengine=psync\nbs=4k\nrw=write\nsize=64k\nnrfiles=2\nnumjobs=2\n" + c.format
		if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, name := range c.user {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("user data"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fio(t, "--keep=1", job)
		want := slices.Sorted(slices.Values(append(slices.Clone(c.user), c.ours...)))
		if got := slices.Sorted(maps.Keys(fileSizes(t, dir))); !slices.Equal(got, want) {
			t.Fatalf("%s: after the run with --keep, %v; want %v", c.format, got, want)
		}
		if code, out, errOut := cephbench(t, t.Context(), "cleanup", dir); code != 0 {
			t.Fatalf("cleanup: exit %d\n%s%s", code, out, errOut)
		}
		if got := slices.Sorted(maps.Keys(fileSizes(t, dir))); !slices.Equal(got, c.user) {
			t.Errorf("%s: after cleanup, %v; want only the user's files %v", c.format, got, c.user)
		}
	}
}

// bench (and so plans, whose workloads are bench's flags) takes the same
// regions, files and distributions: two files per worker, each laid out
// to hold its region after the offset, and the bound's bytes written; a
// bad distribution is one line naming it, exit 2; cleanup removes the
// kept files.
func TestBenchWhereFlags(t *testing.T) {
	dir, out := t.TempDir(), filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := cephbench(t, t.Context(), "bench", "--target", dir, "--rw", "randwrite", "--bs", "4k", "--size", "256k",
		"--offset", "64k", "--nrfiles", "2", "--workers", "2", "--random-map", "--file-service", "random:2", "--total", "1M", "--keep", "--quiet", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if w := r.Ops["write"]; w.Bytes != 1<<20 || w.Errors != 0 {
		t.Errorf("wrote %d bytes, %d errors; want 1 MiB", w.Bytes, w.Errors)
	}
	want := map[string]int64{"cephbench.0.0.dat": 320 << 10, "cephbench.0.1.dat": 320 << 10, "cephbench.1.0.dat": 320 << 10, "cephbench.1.1.dat": 320 << 10}
	if got := fileSizes(t, dir); !maps.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	code, stdout, stderr = cephbench(t, t.Context(), "bench", "--target", dir, "--rw", "randread", "--distribution", "zipf:1", "--total", "1M")
	wantUsageError(t, "zipf:1", code, stdout, stderr)
	if !strings.Contains(stderr, "zipf") {
		t.Errorf("the error does not name the distribution: %q", stderr)
	}
	if code, _, stderr := cephbench(t, t.Context(), "cleanup", dir); code != 0 || len(fileSizes(t, dir)) != 0 {
		t.Errorf("cleanup: exit %d, %s; left %v", code, stderr, fileSizes(t, dir))
	}
}

// sameBlocks checks that each clone's blocks as cephbench generates them
// (gen) are those fio logged, over all its directions; in order unless
// ordered is false.
func sameBlocks(t *testing.T, gen map[int][]int64, logged map[int]map[string][]int64, ordered bool) {
	t.Helper()
	for clone, dirs := range logged {
		var want []int64
		for _, offs := range dirs {
			want = append(want, offs...)
		}
		got := gen[clone]
		if !ordered {
			got, want = sortedCopy(got), sortedCopy(want)
		}
		if !slices.Equal(got, want) {
			t.Errorf("clone %d: cephbench touches %d blocks, %v...; fio %d, %v...", clone, len(got), got[:min(8, len(got))], len(want), want[:min(8, len(want))])
		}
	}
}
