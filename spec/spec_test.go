package spec

import (
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	good := map[string]Size{
		"512": 512, "4k": 4096, "4K": 4096, "4KiB": 4096, "4KB": 4096, "4kb": 4096,
		"4M": 4 << 20, "4m": 4 << 20, "1G": 1 << 30, "1g": 1 << 30, "2T": 2 << 40,
		"1.5M": 3 << 19, " 64k ": 64 << 10, "0": 0,
	}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "k", "4x", "-4k", "4 kilo", "1e3", "4KK", "99999999999P"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded; want an error", in)
		}
	}
}

func TestSizeStringRoundTrips(t *testing.T) {
	for _, s := range []Size{0, 1, 512, 4096, 4 << 20, 1 << 30, 1536, 3 << 19} {
		back, err := ParseSize(s.String())
		if err != nil || back != s {
			t.Errorf("%d -> %q -> %d, %v", s, s.String(), back, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"10s": 10 * time.Second, "2m": 2 * time.Minute, "1h": time.Hour,
		"10": 10 * time.Second, "0.5": 500 * time.Millisecond, "250ms": 250 * time.Millisecond,
		"1h30m": 90 * time.Minute,
	}
	for in, want := range good {
		got, err := ParseDuration(in)
		if err != nil || got.D() != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ten", "10x", "-5s", "-5", "5 s"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) succeeded; want an error", in)
		}
	}
}

func TestParseTarget(t *testing.T) {
	cases := map[string]Target{
		"/data/x":         {"file", "/data/x"},
		"./x":             {"file", "./x"},
		"dirobj://./objs": {"dirobj", "./objs"},
		"NULL://":         {"null", ""},
		"rbd://pool/img":  {"rbd", "pool/img"},
	}
	for in, want := range cases {
		got, err := ParseTarget(in)
		if err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "://x", "a b://x"} {
		if _, err := ParseTarget(in); err == nil {
			t.Errorf("ParseTarget(%q) succeeded; want an error", in)
		}
	}
}

func TestTargetShortReadsBack(t *testing.T) {
	for _, tc := range []struct {
		t    Target
		want string
	}{
		{Target{"file", "/data/x"}, "/data/x"},
		{Target{"file", "./x"}, "./x"},
		{Target{"file", "a://b"}, "file://a://b"},
		{Target{"dirobj", "./objs"}, "dirobj://./objs"},
		{Target{"null", ""}, "null://"},
	} {
		got := tc.t.Short()
		back, err := ParseTarget(got)
		if got != tc.want || err != nil || back != tc.t {
			t.Errorf("%+v.Short() = %q, read back as %+v, %v; want %q", tc.t, got, back, err, tc.want)
		}
	}
}

func valid() Workload {
	return Workload{
		Target: Target{"null", ""}, Pattern: Random, ReadPercent: 50,
		BlockSize: 4096, Workers: 1, QueueDepth: 1, Duration: Duration(time.Second),
	}
}

func TestValidate(t *testing.T) {
	w := valid()
	if err := w.Validate(); err != nil {
		t.Fatalf("valid workload rejected: %v", err)
	}
	// rados load-gen's: ops of 1K..2M on 200 objects of 1K..4M, paced in
	// bytes, the backlog bounded; its object size is no multiple of the
	// longest op.
	lg := valid()
	lg.BlockSize, lg.MinBlockSize, lg.Objects, lg.ObjectSize, lg.MinObjectSize = 2<<20, 1<<10, 200, 3<<20+1, 1<<10
	lg.RateBytes, lg.MaxBacklog, lg.OffsetAlign = 5<<20, 10<<20, 4096
	if err := lg.Validate(); err != nil {
		t.Errorf("load-gen's workload rejected: %v", err)
	}
	bad := map[string]func(*Workload){
		"no target":       func(w *Workload) { w.Target = Target{} },
		"pattern":         func(w *Workload) { w.Pattern = "zigzag" },
		"read percent":    func(w *Workload) { w.ReadPercent = 101 },
		"block size":      func(w *Workload) { w.BlockSize = 0 },
		"object multiple": func(w *Workload) { w.ObjectSize = 6000 },
		"workers":         func(w *Workload) { w.Workers = 0 },
		"queue depth":     func(w *Workload) { w.QueueDepth = 0 },
		"submit batch":    func(w *Workload) { w.SubmitBatch = 2 },
		"negative batch":  func(w *Workload) { w.SubmitBatch = -1 },
		"batch, no queue": func(w *Workload) { w.QueueDepth, w.SubmitBatch = 8, 4 },
		"no bound":        func(w *Workload) { w.Duration = 0 },
		"rate":            func(w *Workload) { w.RateIOPS = -1 },
		"direct align":    func(w *Workload) { w.Direct = true; w.BlockSize = 1000 },
		"file vs block":   func(w *Workload) { w.FileSize = 1024 },
		"min block":       func(w *Workload) { w.MinBlockSize = 8192 },
		"min object":      func(w *Workload) { w.Objects = 4; w.ObjectSize = 8192; w.MinObjectSize = 16384 },
		"sized, no count": func(w *Workload) { w.ObjectSize = 8192; w.MinObjectSize = 1 },
		"align":           func(w *Workload) { w.OffsetAlign = -1 },
		"verify, sized":   func(w *Workload) { w.Objects = 4; w.ObjectSize = 8192; w.MinObjectSize = 4096; w.Verify = true },
		"byte rate":       func(w *Workload) { w.RateBytes = -1 },
		"two rates":       func(w *Workload) { w.RateIOPS = 10; w.RateBytes = 1 << 20 },
		"backlog":         func(w *Workload) { w.MaxBacklog = -1 },
		"direct, min":     func(w *Workload) { w.Direct = true; w.MinBlockSize = 1000 },
		"total and dirs":  func(w *Workload) { w.RateIOPS = 10; w.WriteRate.IOPS = 5 },
		"dir, two units":  func(w *Workload) { w.ReadRate = DirRate{IOPS: 5, Bytes: 4096} },
		"dir, two mins":   func(w *Workload) { w.WriteRate = DirRate{MinIOPS: 5, MinBytes: 4096} },
		"dir, negative":   func(w *Workload) { w.ReadRate.MinIOPS = -1 },
		"dirs on a mix":   func(w *Workload) { w.Mix = "get=50,put=50"; w.ReadRate.IOPS = 5 },
		"rate cycle":      func(w *Workload) { w.RateCycle = -1 },
		"rate process":    func(w *Workload) { w.RateProcess = "bursty" },
		"verify backlog":  func(w *Workload) { w.ReadPercent, w.VerifyWrites, w.VerifyBacklog = 0, true, -1 },
		"backlog, reads":  func(w *Workload) { w.VerifyBacklog = 8 },
		"batch alone":     func(w *Workload) { w.ReadPercent, w.VerifyWrites, w.VerifyBacklogBatch = 0, true, 8 },
	}
	batched := valid()
	batched.Target, batched.IOEngine, batched.QueueDepth, batched.SubmitBatch = Target{"file", "/x"}, "io_uring", 8, 4
	if err := batched.Validate(); err != nil {
		t.Errorf("io_uring at depth 8, 4 ops per submission: %v", err)
	}
	backlog := valid()
	backlog.ReadPercent, backlog.VerifyWrites, backlog.VerifyBacklog = 0, true, 8
	if err := backlog.Validate(); err != nil || backlog.BacklogBatch() != 8 {
		t.Errorf("a write-only workload reading back 8 at a time every 8: batch %d, %v", backlog.BacklogBatch(), err)
	}
	for name, mutate := range bad {
		w := valid()
		mutate(&w)
		if err := w.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, w)
		}
	}
}

func TestBoundToPassesIsWholeBlocksPerPass(t *testing.T) {
	w := Workload{Target: Target{Scheme: "file", Location: "/x"}, Pattern: Sequential, BlockSize: 4096, Workers: 1, QueueDepth: 1}
	if err := w.BoundToPasses(10*4096+5, 3); err != nil || w.TotalBytes != 30*4096 {
		t.Errorf("3 passes over 10 blocks and 5 bytes: total %s, %v", w.TotalBytes, err)
	}
	if err := w.BoundToPasses(100, 1); err == nil || !strings.Contains(err.Error(), "do not hold one block") {
		t.Errorf("a target smaller than a block: %v", err)
	}
	if err := w.BoundToPasses(1<<40, 1<<40); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("too many passes: %v", err)
	}
}

func TestParseDistribution(t *testing.T) {
	for _, s := range []string{"random", "zipf:1.2", "zipf:0.8:0.5", "pareto:0.3", "normal:5", "zoned:60/10:30/20:10/70", "zoned_abs:80/1048576:20/33554432"} {
		d, err := ParseDistribution(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if d.String() != s {
			t.Errorf("%s reads back as %s", s, d)
		}
	}
	// fio's rand-zones example: a zone without a size takes what the
	// others leave, shared evenly.
	for s, want := range map[string]string{"zoned:50/5:30/15:20/": "zoned:50/5:30/15:20/80", "zoned:50/20:25/:25/": "zoned:50/20:25/40:25/40"} {
		if d, err := ParseDistribution(s); err != nil || d.String() != want {
			t.Errorf("%s: %v, %v; want %s", s, d, err, want)
		}
	}
	if d, _ := ParseDistribution("zipf"); d.Param != 1.1 {
		t.Errorf("zipf without θ: %g, want fio's 1.1", d.Param)
	}
	for s, want := range map[string]string{
		"zipf:1": "θ", "pareto:1.5": "0 < h < 1", "normal:100": "σ", "zipf:1.2:2": "center",
		"zoned:50/10": "add up to 50", "zoned:60/60:40/60": "over 100", "zoned:a/b": "zone", "zoned:50/100:50/": "leaving nothing", "gauss": "want random",
	} {
		if _, err := ParseDistribution(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", s, err, want)
		}
	}
	w := Workload{Target: Target{Scheme: "file", Location: "x"}, Pattern: Random, BlockSize: 4096, Workers: 1, QueueDepth: 1, TotalOps: 1,
		Distribution: "zipf:1.2", RandomMap: true}
	if err := w.Validate(); err == nil || !strings.Contains(err.Error(), "random map") {
		t.Errorf("a random map with zipf: error %v, want one about the random map", err)
	}
	// A random map is of whole blocks of one size.
	w.Distribution, w.BlockSize = "", 16384
	for _, set := range []func(*Workload){
		func(w *Workload) { w.BlockSizes = "4k/50:16k/50" },
		func(w *Workload) { w.BlockAlign = 4096 },
	} {
		v := w
		set(&v)
		if err := v.Validate(); err == nil || !strings.Contains(err.Error(), "random map") {
			t.Errorf("a random map with block sizes %q, alignment %s: error %v, want one about the random map", v.BlockSizes, v.BlockAlign, err)
		}
	}
	w.BlockAlign = w.BlockSize
	if err := w.Validate(); err != nil {
		t.Errorf("a random map aligned to its block size: %v", err)
	}
}

// --rate N paces everything; R,W each direction, an empty side unpaced;
// --rate-min N sets both floors. The value prints back as it was given.
func TestRateFlags(t *testing.T) {
	for _, c := range []struct {
		in          string
		total       float64
		read, write float64
	}{
		{"500", 500, 0, 0},
		{"500,200", 0, 500, 200},
		{"500,", 0, 500, 0},
		{",2.5", 0, 0, 2.5},
	} {
		var w Workload
		f := RateFlag{W: &w}
		if err := f.Set(c.in); err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if w.RateIOPS != c.total || w.ReadRate.IOPS != c.read || w.WriteRate.IOPS != c.write || f.String() != c.in {
			t.Errorf("%q: total %g, read %g, write %g, printed %q", c.in, w.RateIOPS, w.ReadRate.IOPS, w.WriteRate.IOPS, f.String())
		}
		if err := w.Validate(); err != nil && strings.Contains(err.Error(), "rate") {
			t.Errorf("%q: %v", c.in, err)
		}
	}
	for _, bad := range []string{"x", "5,x", "-1", "1,-1"} {
		var w Workload
		if err := (RateFlag{W: &w}).Set(bad); err == nil {
			t.Errorf("--rate %q accepted", bad)
		}
	}
	var w Workload
	if err := (MinRateFlag{W: &w}).Set("100"); err != nil || w.ReadRate.MinIOPS != 100 || w.WriteRate.MinIOPS != 100 {
		t.Errorf("--rate-min 100: %v, %+v %+v", err, w.ReadRate, w.WriteRate)
	}
	if err := (MinRateFlag{W: &w}).Set(",7"); err != nil || w.ReadRate.MinIOPS != 0 || w.WriteRate.MinIOPS != 7 {
		t.Errorf("--rate-min ,7: %v, %+v %+v", err, w.ReadRate, w.WriteRate)
	}
}
