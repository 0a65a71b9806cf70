package fiolog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/peer/fioreport"
)

func read(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// op is a sample of clone 0 ending at end ms, taking lat.
func op(write bool, end int, lat time.Duration, offset int64) Sample {
	e := time.Duration(end) * time.Millisecond
	return Sample{Write: write, Offset: offset, Size: 4096, Start: e - lat, End: e}
}

// With log_avg_msec, the lat logs write a window's mean (rounded, or its
// largest value with log_max_value) when an op ends a window or the job
// ends; bw and iops write each whole window's rate in KiB/s and ops/s.
func TestAveragedWindows(t *testing.T) {
	for _, maxValue := range []bool{false, true} {
		dir := t.TempDir()
		name := filepath.Join(dir, "x")
		l, err := Open(Options{BW: name, Lat: name, IOPS: name, AvgMsec: 100, MaxValue: maxValue, PerJob: true}, 3, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []Sample{
			op(false, 10, 1000, 0), op(false, 50, 2001, 4096), // window 0: mean 1500.5
			op(true, 60, 7000, 0),
			op(false, 120, 4000, 0), // ends window 0 at 120: 1000, 2001, 4000
			op(false, 150, 9000, 0), // window 1, open at the end
		} {
			l.Add(s)
		}
		if err := l.Close(250 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		wantLat := []string{"120, 2334, 0, 0, 0", "250, 9000, 0, 0, 0", "250, 7000, 1, 0, 0"} // at the end, reads first, as fio
		if maxValue {
			wantLat[0] = "120, 4000, 0, 0, 0"
		}
		for _, kind := range []string{"lat", "clat"} {
			if got := read(t, name+"_"+kind+".3.log"); strings.Join(got, "|") != strings.Join(wantLat, "|") {
				t.Errorf("log_max_value=%v: %s log %q; want %q", maxValue, kind, got, wantLat)
			}
		}
		// Windows 0 and 1 are whole by 250 ms; window 2 is not.
		wantBW := []string{"100, 80, 0, 0, 0", "100, 40, 1, 0, 0", "200, 80, 0, 0, 0"}
		if got := read(t, name+"_bw.3.log"); strings.Join(got, "|") != strings.Join(wantBW, "|") {
			t.Errorf("bw log %q; want %q (2 and 1 ops of 4 KiB in 100 ms)", got, wantBW)
		}
		wantIOPS := []string{"100, 20, 0, 0, 0", "100, 10, 1, 0, 0", "200, 20, 0, 0, 0"}
		if got := read(t, name+"_iops.3.log"); strings.Join(got, "|") != strings.Join(wantIOPS, "|") {
			t.Errorf("iops log %q; want %q", got, wantIOPS)
		}
		if got := read(t, name+"_slat.3.log"); len(got) != 1 || got[0] != "" {
			t.Errorf("slat log %q; want it empty: cephbench measures no submission latency", got)
		}
	}
}

// Every op is a line with log_avg_msec=0: bw from its size and latency,
// iops 1, its offset with log_offset, the priority in hex with log_prio.
func TestEveryOpLines(t *testing.T) {
	name := filepath.Join(t.TempDir(), "y")
	l, err := Open(Options{BW: name, IOPS: name, Offset: true, Prio: true, PerJob: true}, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := op(true, 7, 2*time.Millisecond, 8192)
	s.Clone = 1
	l.Add(s)
	if err := l.Close(time.Second); err != nil {
		t.Fatal(err)
	}
	if got := read(t, name+"_bw.2.log"); len(got) != 1 || got[0] != "7, 2048, 1, 4096, 8192, 0x0000" {
		t.Errorf("bw log of clone 2: %q", got)
	}
	if got := read(t, name+"_iops.2.log"); len(got) != 1 || got[0] != "7, 1, 1, 4096, 8192, 0x0000" {
		t.Errorf("iops log of clone 2: %q", got)
	}
	if got := read(t, name+"_bw.1.log"); len(got) != 1 || got[0] != "" {
		t.Errorf("bw log of clone 1, which did nothing: %q", got)
	}
}

// The histogram log writes a window's counts in fio's bins, merged
// 2^coarseness at a time, once an op ends log_hist_msec after the window
// began; without per_job_logs every clone's lines go to one file, clone by
// clone.
func TestHistogramWindows(t *testing.T) {
	name := filepath.Join(t.TempDir(), "h")
	l, err := Open(Options{Hist: name, HistMsec: 100, HistCoarseness: 2}, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	for clone := range 2 {
		for _, s := range []Sample{op(false, 5, 1000, 0), op(false, 50, 1000, 0), op(false, 105, 50, 0), op(false, 150, 1000, 0)} {
			s.Clone = clone
			l.Add(s)
		}
	}
	if err := l.Close(time.Second); err != nil {
		t.Fatal(err)
	}
	lines := read(t, name+"_clat_hist.log")
	if len(lines) != 2 {
		t.Fatalf("%d lines; want one per clone (the window from 5 ms ends at 105 ms)", len(lines))
	}
	cols := strings.Split(lines[0], ", ")
	if len(cols) != 3+fioreport.PlatBins/4 || strings.Join(cols[:3], ", ") != "105, 0, 4096" {
		t.Fatalf("line %.60q... of %d columns; want 105, 0, 4096 and %d bins", lines[0], len(cols), fioreport.PlatBins/4)
	}
	counts := map[int]string{}
	for i, c := range cols[3:] {
		if c != "0" {
			counts[i] = c
		}
	}
	thousand, fifty := fioreport.PlatIndex(1000)/4, fioreport.PlatIndex(50)/4
	if len(counts) != 2 || counts[thousand] != "2" || counts[fifty] != "1" {
		t.Errorf("bins %v; want 2 in bin %d (1000 ns) and 1 in bin %d (50 ns)", counts, thousand, fifty)
	}
	if lines[1] != lines[0] {
		t.Errorf("the second clone's line differs from the first's for the same ops")
	}
}
