package file_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
)

// benchFileEnv names an existing file to read instead of laying out a new
// one: the file fio read, to compare on the same blocks.
const benchFileEnv = "KAIO_BENCH_FILE"

// benchFile returns the file of benchFileEnv, or lays out one of 1 GiB,
// fio's --size=1G, in /var/tmp (rarely tmpfs, so O_DIRECT works), removed
// after the benchmark.
func benchFile(b *testing.B) string {
	if path := os.Getenv(benchFileEnv); path != "" {
		return path
	}
	dir, err := os.MkdirTemp("/var/tmp", "cephbench-bench")
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "data")
	w := &spec.Workload{
		Target:    spec.Target{Scheme: "file", Location: path},
		Pattern:   spec.Random,
		BlockSize: 4 << 10, FileSize: 1 << 30,
		Workers: 1, QueueDepth: 1, TotalOps: 1,
		Keep: true,
	}
	s, err := engine.Open(context.Background(), w)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkKaioRunnerRandRead4KDirectQD64 runs fio's job --rw=randread
// --bs=4k --direct=1 --iodepth=64 through the runner, one worker, with
// each I/O engine, and reports ops/s as a user's run would see them.
func BenchmarkKaioRunnerRandRead4KDirectQD64(b *testing.B) {
	path := benchFile(b)
	for _, ioengine := range []string{"psync", "libaio", "io_uring"} {
		b.Run(ioengine, func(b *testing.B) {
			w := &spec.Workload{
				Target:      spec.Target{Scheme: "file", Location: path},
				Pattern:     spec.Random,
				ReadPercent: 100,
				BlockSize:   4 << 10,
				Workers:     1,
				QueueDepth:  64,
				TotalOps:    int64(b.N),
				IOEngine:    ioengine,
				Direct:      true,
			}
			s, err := engine.Open(context.Background(), w)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			b.ResetTimer()
			out, err := runner.Run(context.Background(), s, w, runner.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if sum := out.Summaries()["read"]; sum.Errors > 0 {
				b.Fatalf("%d reads failed", sum.Errors)
			}
			b.ReportMetric(float64(b.N)/out.Elapsed.Seconds(), "ops/s")
		})
	}
}
