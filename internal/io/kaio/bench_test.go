package kaio

import (
	"math/rand/v2"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// benchFileEnv names an existing file to read instead of laying out a new
// one: the file fio read, to compare on the same blocks.
const benchFileEnv = "KAIO_BENCH_FILE"

// benchFileSize is the size of the file laid out, fio's --size=1G: larger
// than any cache that would flatter small random reads.
const benchFileSize = 1 << 30

// benchFile opens, with O_DIRECT, the file of benchFileEnv or a new one of
// benchFileSize bytes of data (not holes, which a filesystem reads without
// touching the disk), removed after the benchmark.
func benchFile(b *testing.B) *os.File {
	path := os.Getenv(benchFileEnv)
	if path == "" {
		var dir string
		for _, d := range []string{"/var/tmp", os.TempDir()} {
			if probe, err := os.CreateTemp(d, "kaio-probe"); err == nil {
				f, err := os.OpenFile(probe.Name(), os.O_RDONLY|unix.O_DIRECT, 0)
				probe.Close()
				os.Remove(probe.Name())
				if err == nil {
					f.Close()
					dir = d
					break
				}
			}
		}
		if dir == "" {
			b.Skip("no filesystem here takes O_DIRECT")
		}
		f, err := os.CreateTemp(dir, "kaio-bench")
		if err != nil {
			b.Fatal(err)
		}
		path = f.Name()
		b.Cleanup(func() { os.Remove(path) })
		chunk := make([]byte, 1<<20)
		for off := int64(0); off < benchFileSize; off += int64(len(chunk)) {
			pattern(chunk, int(off>>20))
			if _, err := f.WriteAt(chunk, off); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

// BenchmarkKaioRandRead4KDirectQD64 keeps 64 random 4 KiB direct reads in
// flight on one file, as fio --rw=randread --bs=4k --direct=1 --iodepth=64
// does, reaping at least one completion per call as fio's default
// iodepth_batch_complete_min=1 does, and reports ops/s.
func BenchmarkKaioRandRead4KDirectQD64(b *testing.B) {
	const depth = 64
	f := benchFile(b)
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	blocks := fi.Size() / bs
	if blocks < depth {
		b.Fatalf("%s holds %d blocks: too few for the benchmark", f.Name(), blocks)
	}
	for _, mech := range mechanisms {
		b.Run(mech, func(b *testing.B) {
			q, err := New(mech, depth)
			if err != nil {
				b.Fatal(err)
			}
			defer q.Close()
			bufs := make([][]byte, depth)
			m, err := unix.Mmap(-1, 0, depth*bs, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
			if err != nil {
				b.Fatal(err)
			}
			defer unix.Munmap(m)
			for i := range bufs {
				bufs[i] = m[i*bs : (i+1)*bs]
			}
			rng := rand.New(rand.NewPCG(1, 2))
			fd := int(f.Fd())
			issued, done := 0, 0
			prep := func(slot int) {
				if err := q.Prep(slot, fd, false, bufs[slot], rng.Int64N(blocks)*bs); err != nil {
					b.Fatal(err)
				}
				issued++
			}
			out := make([]Completion, depth)
			b.ResetTimer()
			for slot := 0; slot < depth && issued < b.N; slot++ {
				prep(slot)
			}
			for done < b.N {
				n, err := q.Wait(1, -1, out)
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range out[:n] {
					if c.Res != bs {
						b.Fatalf("read returned %d", c.Res)
					}
					done++
					if issued < b.N {
						prep(c.Slot)
					}
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
