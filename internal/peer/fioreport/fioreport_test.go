package fioreport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	_ "github.com/cephbench/cephbench/engine/null"
	"github.com/cephbench/cephbench/internal/io/diskstats"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/runner"
	"github.com/cephbench/cephbench/spec"
)

// slowSession is a synchronous target whose ops take 200 µs each.
type slowSession struct{}

func (slowSession) Geometry() engine.Geometry {
	return engine.Geometry{Layout: engine.Blocks, Files: 1, Size: 1 << 30}
}

func (slowSession) Do(context.Context, *engine.Op) error {
	time.Sleep(200 * time.Microsecond)
	return nil
}

func (slowSession) Close(context.Context) error { return nil }

// The results of two real runs, made once for every test: a randrw on the
// null engine's asynchronous queues at depth 32, and four workers (fio's
// numjobs=4) on a synchronous target. Both run past two whole seconds of
// the series, so they have bandwidth samples.
var fixture struct {
	once        sync.Once
	async, sync *result.Result
	err         error
}

func runOn(s engine.Session, w *spec.Workload) (*result.Result, error) {
	var series []metrics.Second
	keep := func(t metrics.Tick) { series = append(series, t.Second) }
	o, err := runner.Run(context.Background(), s, w, runner.Options{Seed: 1, Subscribers: []metrics.Subscriber{keep}})
	if err != nil {
		return nil, err
	}
	r, err := o.Result(w.Name, w, result.ThisHost())
	if r != nil {
		r.Series = series
	}
	return r, err
}

func results(t *testing.T) (async, sync *result.Result) {
	t.Helper()
	fixture.once.Do(func() {
		w := spec.Workload{Name: "randrw", Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 50,
			BlockSize: 4096, Workers: 1, QueueDepth: 32, Duration: spec.Duration(2300 * time.Millisecond)}
		s, err := engine.Open(context.Background(), &w)
		if err != nil {
			fixture.err = err
			return
		}
		if fixture.async, fixture.err = runOn(s, &w); fixture.err != nil {
			return
		}
		w = spec.Workload{Name: "rw", Target: spec.Target{Scheme: "slow"}, Pattern: spec.Sequential, ReadPercent: 50,
			BlockSize: 1 << 20, Workers: 4, QueueDepth: 1, Duration: spec.Duration(2100 * time.Millisecond)}
		fixture.sync, fixture.err = runOn(slowSession{}, &w)
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return fixture.async, fixture.sync
}

// The disk of fio-randrw-normal.txt.
var vda = diskstats.Usage{Name: "vda", Figures: diskstats.Figures{ReadIOs: 144811, WriteIOs: 144989, WriteMerges: 6,
	ReadTicks: 29517, WriteTicks: 29039, InQueue: 58557, Util: 84.97}}

// randrwReport is the report of fio-randrw-normal.txt's job, run by
// cephbench.
func randrwReport(res *result.Result) *Report {
	return &Report{
		Version: "cephbench-test", Time: time.Date(2026, 11, 30, 9, 2, 15, 0, time.UTC), PID: 8738,
		GlobalOptions: []Option{{"direct", "1"}, {"iodepth", "32"}, {"rw", "randrw"}, {"bs", "4k"}},
		Groups: []Group{{Jobs: []Job{{Name: "Rand_Read_Write_Test", Result: res, NumJobs: 1, RW: "randrw",
			IOEngine: "libaio", BlockSize: 4096, IODepth: 32}}}},
		Disks: []diskstats.Usage{vda},
	}
}

func render(t *testing.T, write func(io.Writer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// fioJSON is what consumers of fio's JSON read: fio-plot (jobname, fio
// version, iops, bw, lat_ns.mean, clat_ns.percentile), kubestr (iops, bw,
// clat_ns.mean), pbench (the rates' samples, latency summaries and
// percentiles, cpu, depths) and the disk figures.
type fioJSON struct {
	Version string `json:"fio version"`
	Time    int64  `json:"timestamp"`
	Jobs    []struct {
		Name         string             `json:"jobname"`
		Group        int                `json:"groupid"`
		Read         fioDirection       `json:"read"`
		Write        fioDirection       `json:"write"`
		UsrCPU       float64            `json:"usr_cpu"`
		SysCPU       float64            `json:"sys_cpu"`
		Ctx          int64              `json:"ctx"`
		Minf         int64              `json:"minf"`
		JobRuntime   int64              `json:"job_runtime"`
		IODepthLevel map[string]float64 `json:"iodepth_level"`
		Submit       map[string]float64 `json:"iodepth_submit"`
		LatencyNs    map[string]float64 `json:"latency_ns"`
		LatencyUs    map[string]float64 `json:"latency_us"`
		LatencyMs    map[string]float64 `json:"latency_ms"`
	} `json:"jobs"`
	Disks []struct {
		Name    string  `json:"name"`
		ReadIOs uint64  `json:"read_ios"`
		Util    float64 `json:"util"`
	} `json:"disk_util"`
}

type fioLatency struct {
	Min, Max   int64
	Mean       float64
	Stddev     float64
	N          int64
	Percentile map[string]int64
}

type fioDirection struct {
	IOBytes     int64      `json:"io_bytes"`
	IOKBytes    int64      `json:"io_kbytes"`
	BWBytes     int64      `json:"bw_bytes"`
	BW          int64      `json:"bw"`
	IOPS        float64    `json:"iops"`
	Runtime     int64      `json:"runtime"`
	TotalIOs    int64      `json:"total_ios"`
	Slat        fioLatency `json:"slat_ns"`
	Clat        fioLatency `json:"clat_ns"`
	Lat         fioLatency `json:"lat_ns"`
	BWMin       int64      `json:"bw_min"`
	BWMax       int64      `json:"bw_max"`
	BWMean      float64    `json:"bw_mean"`
	BWSamples   int        `json:"bw_samples"`
	IOPSMin     int64      `json:"iops_min"`
	IOPSMax     int64      `json:"iops_max"`
	IOPSMean    float64    `json:"iops_mean"`
	IOPSStddev  float64    `json:"iops_stddev"`
	IOPSSamples int        `json:"iops_samples"`
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))+1e-6
}

func TestJSONHasTheResultsFigures(t *testing.T) {
	res, _ := results(t)
	out := render(t, func(b io.Writer) error { return randrwReport(res).WriteJSON(b) })
	var got fioJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Version != "cephbench-test" || len(got.Jobs) != 1 || got.Jobs[0].Name != "Rand_Read_Write_Test" ||
		got.Time != time.Date(2026, 11, 30, 9, 2, 15, 0, time.UTC).Unix() {
		t.Fatalf("top level %+v", got)
	}
	job := got.Jobs[0]
	runtime := int64(res.ElapsedSeconds * 1000)
	for kind, d := range map[string]fioDirection{"read": job.Read, "write": job.Write} {
		ks := res.Ops[kind]
		if d.TotalIOs != ks.Ops || d.IOBytes != ks.Bytes || d.IOKBytes != ks.Bytes>>10 || d.Runtime != runtime {
			t.Errorf("%s: %d ios, %d bytes over %d ms; the result has %d, %d over %d", kind, d.TotalIOs, d.IOBytes, d.Runtime, ks.Ops, ks.Bytes, runtime)
		}
		// fio's rates are over its whole-millisecond run time...
		if !near(d.IOPS, float64(ks.Ops)*1000/float64(runtime), 1e-9) || d.BWBytes != ks.Bytes*1000/runtime || d.BW != d.BWBytes/1024 {
			t.Errorf("%s: iops %f, bw %d KiB/s (%d B/s) for %d ops, %d bytes in %d ms", kind, d.IOPS, d.BW, d.BWBytes, ks.Ops, ks.Bytes, runtime)
		}
		// ...so they are the result's within a millisecond's share.
		if !near(d.IOPS, ks.IOPS.Mean, 1.0/float64(runtime)) || !near(float64(d.BWBytes), ks.BandwidthBps.Mean, 1.0/float64(runtime)) {
			t.Errorf("%s: iops %f and %d B/s; the result says %f and %f", kind, d.IOPS, d.BWBytes, ks.IOPS.Mean, ks.BandwidthBps.Mean)
		}
		l := ks.Latency
		if d.Clat.N != ks.Ops || d.Clat.Min != l.MinNs || d.Clat.Max != l.MaxNs || !near(d.Clat.Mean, l.MeanNs, 1e-9) ||
			!near(d.Clat.Stddev, l.StddevNs*math.Sqrt(float64(ks.Ops)/float64(ks.Ops-1)), 1e-9) {
			t.Errorf("%s: clat %+v; the result's latency %+v", kind, d.Clat, l)
		}
		if d.Lat.N != d.Clat.N || d.Lat.Mean != d.Clat.Mean || d.Lat.Percentile != nil || d.Slat.N != 0 {
			t.Errorf("%s: lat %+v and slat %+v: lat is clat, without percentiles; slat is not measured", kind, d.Lat, d.Slat)
		}
		if len(d.Clat.Percentile) != len(DefaultPercentiles) {
			t.Errorf("%s: %d percentiles", kind, len(d.Clat.Percentile))
		}
		for _, p := range metrics.ReportedPercentiles {
			if v := d.Clat.Percentile[strconv.FormatFloat(p, 'f', 6, 64)]; v != l.Percentiles.At(p) {
				t.Errorf("%s: p%g is %d; the result's is %d", kind, p, v, l.Percentiles.At(p))
			}
		}
		if d.BWMin != int64(ks.BandwidthBps.Min/1024) || d.BWMax != int64(ks.BandwidthBps.Max/1024) ||
			d.IOPSMin != int64(ks.IOPS.Min) || d.IOPSMax != int64(ks.IOPS.Max) || !near(d.IOPSStddev, ks.IOPS.Stddev, 1e-6) ||
			d.BWSamples != ks.BandwidthBps.Samples || d.IOPSSamples != ks.IOPS.Samples || d.IOPSSamples < 2 {
			t.Errorf("%s: sampled rates %+v; the result's %+v and %+v", kind, d, ks.IOPS, ks.BandwidthBps)
		}
		var iops, kib float64
		for _, sec := range res.Series {
			if sec.Dur >= 0.5 {
				iops += float64(sec.Kinds[kind].Ops) / sec.Dur / float64(d.IOPSSamples)
				kib += float64(sec.Kinds[kind].Bytes) / sec.Dur / 1024 / float64(d.IOPSSamples)
			}
		}
		if !near(d.IOPSMean, iops, 1e-9) || !near(d.BWMean, kib, 1e-9) {
			t.Errorf("%s: sampled means %f iops, %f KiB/s; the series' %f, %f", kind, d.IOPSMean, d.BWMean, iops, kib)
		}
	}

	cpu := res.CPU
	if !near(job.UsrCPU, 100*cpu.UserSeconds/cpu.WallSeconds, 1e-6) || !near(job.SysCPU, 100*cpu.SystemSeconds/cpu.WallSeconds, 1e-6) ||
		job.Ctx != cpu.ContextSwitches || job.Ctx == 0 || job.Minf != cpu.MinorFaults || job.JobRuntime != int64(cpu.WallSeconds*1000) {
		t.Errorf("cpu usr %f sys %f ctx %d minf %d runtime %d; the result's %+v", job.UsrCPU, job.SysCPU, job.Ctx, job.Minf, job.JobRuntime, cpu)
	}
	var depths, lat float64
	for _, v := range job.IODepthLevel {
		depths += v
	}
	for _, m := range []map[string]float64{job.LatencyNs, job.LatencyUs, job.LatencyMs} {
		for _, v := range m {
			lat += v
		}
	}
	// Buckets with anything in them show at least 0.1% (depths) or 0.01%
	// (latencies), so the sums run a little over 100.
	if job.IODepthLevel["32"] < 99 || depths < 100 || depths > 101 || job.Submit["4"] != 100 || lat < 99.99 || lat > 100.5 {
		t.Errorf("depths %v (sum %g), submit %v, latencies sum to %g", job.IODepthLevel, depths, job.Submit, lat)
	}
	if len(got.Disks) != 1 || got.Disks[0].Name != "vda" || got.Disks[0].ReadIOs != 144811 || got.Disks[0].Util != 84.97 {
		t.Errorf("disks %+v", got.Disks)
	}
}

// shape is a JSON document's keys and value types, as "path: type" lines;
// numbers are "int" or "float" as written, which matters to consumers in
// languages that tell them apart. A key below one of skip is left out.
func shape(t *testing.T, doc []byte, skip ...string) map[string]string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		for _, s := range skip {
			if strings.HasSuffix(path, "/"+s) {
				out[path] = "skipped"
				return
			}
		}
		switch v := v.(type) {
		case map[string]any:
			out[path] = "object"
			for k, x := range v {
				walk(path+"/"+k, x)
			}
		case []any:
			out[path] = "array"
			if len(v) > 0 {
				walk(path+"[]", v[0])
			}
		case json.Number:
			out[path] = "int"
			if strings.Contains(v.String(), ".") {
				out[path] = "float"
			}
		default:
			out[path] = fmt.Sprintf("%T", v)
		}
	}
	walk("", v)
	return out
}

func TestJSONHasEveryKeyOfFios(t *testing.T) {
	res, _ := results(t)
	ref, err := os.ReadFile("testdata/fio-randrw.json")
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, func(b io.Writer) error { return randrwReport(res).WriteJSON(b) })
	// Option values and percentile keys are the job's, not the format's.
	skip := []string{"global options", "job options", "percentile"}
	want, got := shape(t, ref, skip...), shape(t, []byte(out), skip...)
	for k, typ := range want {
		if got[k] != typ {
			t.Errorf("%s: %q, fio has %q", k, got[k], typ)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: not in fio's", k)
		}
	}
}

func TestJSONPlusBinsAreFiosBuckets(t *testing.T) {
	// fio's bucket values and percentiles in a real json+ output are
	// bucket values as platIndex and platValue compute them.
	ref, err := os.ReadFile("testdata/fio-randread.jsonplus")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Jobs []struct {
			Read struct {
				Clat struct {
					N          int64
					Percentile map[string]int64
					Bins       map[string]int64
				} `json:"clat_ns"`
			}
		}
	}
	if err := json.Unmarshal(ref, &doc); err != nil {
		t.Fatal(err)
	}
	clat := doc.Jobs[0].Read.Clat
	var n int64
	for k, c := range clat.Bins {
		v, _ := strconv.ParseInt(k, 10, 64)
		if platValue(platIndex(v)) != v {
			t.Errorf("fio's bin %d is bucket %d, whose value is %d", v, platIndex(v), platValue(platIndex(v)))
		}
		n += c
	}
	for p, v := range clat.Percentile {
		if platValue(platIndex(v)) != v {
			t.Errorf("fio's p%s %d is not a bucket value", p, v)
		}
	}
	if n != clat.N || len(clat.Bins) < 100 {
		t.Fatalf("fio's %d bins hold %d values of %d", len(clat.Bins), n, clat.N)
	}

	// HDR's buckets regroup into exactly the counts fio's would have.
	h := metrics.NewHistogram()
	want := map[int]int64{}
	for v := int64(1); v < 20_000_000_000; v = v*21/20 + 1 {
		for _, x := range []int64{v, v + v/3, v*2 - 1} {
			if err := h.RecordValue(x); err != nil {
				t.Fatal(err)
			}
			want[platIndex(x)]++
		}
	}
	idx, counts := fioBins(h)
	if len(idx) != len(want) {
		t.Fatalf("%d bins, want %d", len(idx), len(want))
	}
	for i, x := range idx {
		if counts[i] != want[x] {
			t.Errorf("bin %d (%d ns): %d values, fio would count %d", x, platValue(x), counts[i], want[x])
		}
	}

	res, _ := results(t)
	out := render(t, func(b io.Writer) error { return randrwReport(res).WriteJSONPlus(b) })
	var got struct {
		Jobs []struct {
			Read struct {
				Clat struct {
					N    int64
					Bins map[string]int64
				} `json:"clat_ns"`
				Lat struct{ Bins map[string]int64 } `json:"lat_ns"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	n = 0
	for _, c := range got.Jobs[0].Read.Clat.Bins {
		n += c
	}
	if n != res.Ops["read"].Ops || n != got.Jobs[0].Read.Clat.N || got.Jobs[0].Read.Lat.Bins != nil {
		t.Errorf("json+ bins hold %d of %d reads; lat bins %v", n, res.Ops["read"].Ops, got.Jobs[0].Read.Lat.Bins)
	}
}

// sectionKeys is the layout of a normal report: each line's name, the
// text before its first ':' or '=' without units in brackets, runs of
// lines of the same name counted once, and slat lines, which cephbench
// does not print, left out.
func sectionKeys(text string) []string {
	units := regexp.MustCompile(`\s*\([^)]*\)`)
	var keys []string
	for _, line := range strings.Split(text, "\n") {
		k := strings.TrimSpace(line)
		if i := strings.IndexAny(k, ":="); i >= 0 {
			k = k[:i]
		}
		k = strings.TrimSpace(units.ReplaceAllString(k, ""))
		if strings.HasPrefix(k, "|") {
			k = "|" // a line of percentiles
		}
		if k == "slat" || len(keys) > 0 && keys[len(keys)-1] == k {
			continue
		}
		keys = append(keys, k)
	}
	return keys
}

func TestNormalHasFiosSectionsInOrder(t *testing.T) {
	res, _ := results(t)
	ref, err := os.ReadFile("testdata/fio-randrw-normal.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := randrwReport(res)
	head := render(t, r.WriteHeader)
	out := render(t, r.WriteNormal)
	fio := string(ref)
	fioHead, fioReport, _ := strings.Cut(fio, "Starting 1 process\n")
	if want := strings.Replace(fioHead, "fio-3.33", r.Version, 1) + "Starting 1 thread\n"; head != want {
		t.Errorf("header\n%s\nwant\n%s", head, want)
	}
	if got, want := sectionKeys(out), sectionKeys(fioReport); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sections\n%q\nwant fio's\n%q\n%s", got, want, out)
	}

	// The figures are the result's.
	runtime := int64(res.ElapsedSeconds * 1000)
	rd, wr := res.Ops["read"], res.Ops["write"]
	for _, want := range []string{
		"Rand_Read_Write_Test: (groupid=0, jobs=1): err= 0: pid=8738: Mon Nov 30 09:02:15 2026\n",
		fmt.Sprintf("  read: IOPS=%s, BW=%s (%s)(%s/%dmsec)\n", num2str(uint64(rd.Ops*1000/runtime), 4, false, ""),
			num2str(uint64(rd.Bytes*1000/runtime), 4, true, "B/s"), num2str(uint64(rd.Bytes*1000/runtime), 4, false, "B/s"),
			num2str(uint64(rd.Bytes), 4, true, "B"), runtime),
		fmt.Sprintf("  write: IOPS=%s,", num2str(uint64(wr.Ops*1000/runtime), 4, false, "")),
		fmt.Sprintf("     issued rwts: total=%d,%d,0,0 short=0,0,0,0 dropped=0,0,0,0\n", rd.Ops, wr.Ops),
		fmt.Sprintf("ctx=%d, majf=%d, minf=%d\n", res.CPU.ContextSwitches, res.CPU.MajorFaults, res.CPU.MinorFaults),
		fmt.Sprintf("samples=%d\n", rd.IOPS.Samples),
		fmt.Sprintf("io=%s (%s), run=%d-%dmsec\n", num2str(uint64(rd.Bytes), 4, true, "B"), num2str(uint64(rd.Bytes), 4, false, "B"), runtime, runtime),
		"     latency   : target=0, window=0, percentile=100.00%, depth=32\n",
		"\nDisk stats (read/write):\n  vda: ios=144811/144989, merge=0/6, ticks=29517/29039, in_queue=58557, util=84.97%\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	p99 := fmt.Sprintf("99.00th=[%d]", (rd.Latency.Percentiles.At(99)+999)/1000)
	if strings.Contains(out, "clat percentiles (usec)") && !strings.Contains(strings.ReplaceAll(out, " ", ""), p99) {
		t.Errorf("no %s in\n%s", p99, out)
	}
}

func TestNormalOfClonesOnASynchronousEngine(t *testing.T) {
	_, res := results(t)
	ref, err := os.ReadFile("testdata/fio-normal-group.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := &Report{Version: "cephbench-test", Time: time.Now(), PID: 1,
		Groups: []Group{{GroupReporting: true, Jobs: []Job{{Name: "test-rw", Result: res, NumJobs: 4, RW: "rw",
			IOEngine: "psync", BlockSize: 1 << 20, IODepth: 1}}}}}
	head := render(t, r.WriteHeader)
	fioHead, _, _ := strings.Cut(string(ref), "fio-3.33\n")
	if want := fioHead + "cephbench-test\nStarting 4 threads\n"; head != want {
		t.Errorf("header\n%s\nwant\n%s", head, want)
	}
	out := render(t, r.WriteNormal)
	// Four workers of one slot: every op alone in its worker, handed
	// over and completed one per call.
	for _, want := range []string{
		"test-rw: (groupid=0, jobs=4): err= 0: pid=1: ",
		"  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%\n",
		"     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%\n",
		"     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%\n",
		"     latency   : target=0, window=0, percentile=100.00%, depth=1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// Latencies of 200 µs and more: no nanosecond bucket; CPU shared over
	// the four clones.
	usr := 100 * res.CPU.UserSeconds / res.CPU.WallSeconds / 4
	if strings.Contains(out, "lat (nsec)") || !strings.Contains(out, fmt.Sprintf("cpu          : usr=%3.2f%%", usr)) {
		t.Errorf("latency buckets or cpu wrong (usr %3.2f%%):\n%s", usr, out)
	}
}

func TestGroupReportingSumsJobsAsFioDoes(t *testing.T) {
	async, sync := results(t)
	jobs := []Job{
		{Name: "a", Result: async, NumJobs: 1, IODepth: 32},
		{Name: "b", Result: sync, NumJobs: 4, IODepth: 1},
	}
	apart := &Report{Groups: []Group{{ID: 3, Jobs: jobs}}}
	together := &Report{Groups: []Group{{ID: 3, Jobs: jobs, GroupReporting: true}}}
	secs, groups, err := apart.sections()
	if err != nil || len(secs) != 2 {
		t.Fatalf("%d sections, %v", len(secs), err)
	}
	one, _, err := together.sections()
	if err != nil || len(one) != 1 {
		t.Fatalf("%d sections, %v", len(one), err)
	}
	s := one[0]
	rd := &s.dirs[0]
	if s.job.Name != "a" || s.members != 5 || rd.ios != async.Ops["read"].Ops+sync.Ops["read"].Ops ||
		rd.hist.TotalCount() != rd.ios || rd.runtimeMs != max(secs[0].dirs[0].runtimeMs, secs[1].dirs[0].runtimeMs) {
		t.Errorf("summed section %+v", s)
	}
	// Group reporting adds the jobs' sampled rates: they ran at once.
	if a, b := secs[0].dirs[0].bw, secs[1].dirs[0].bw; rd.bw.min != a.min+b.min || rd.bw.mean != a.mean+b.mean || rd.bw.n != a.n+b.n {
		t.Errorf("summed bw %+v of %+v and %+v", rd.bw, a, b)
	}
	// The group's paragraph is the same either way: from the slower job
	// to the faster.
	g := groups[3]
	bw0, bw1 := secs[0].dirs[0].bwBytes(), secs[1].dirs[0].bwBytes()
	if g.minBW[0] != min(bw0, bw1) || g.maxBW[0] != max(bw0, bw1) ||
		g.ioBytes[0] != uint64(rd.bytes) || g.agg[0] != g.ioBytes[0]*1000/uint64(rd.runtimeMs) {
		t.Errorf("group %+v", g)
	}
	out := render(t, apart.WriteNormal)
	if strings.Count(out, "(groupid=3, jobs=") != 2 || strings.Count(out, "Run status group 3 (all jobs):") != 1 {
		t.Errorf("two jobs apart:\n%s", out)
	}
}

// TestFormattingIsFios reproduces lines of fio-randrw-normal.txt from the
// figures they print.
func TestFormattingIsFios(t *testing.T) {
	ref, err := os.ReadFile("testdata/fio-randrw-normal.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(ref), "\n")
	var b bytes.Buffer
	p := &printer{w: &b}
	check := func(what string, from, to int) {
		t.Helper()
		if want := strings.Join(lines[from-1:to], ""); b.String() != want {
			t.Errorf("%s:\n%s\nwant fio's\n%s", what, b.String(), want)
		}
		b.Reset()
	}

	p.writeLatency("clat", latency{min: 33_412, max: 6_168_900, mean: 277_540, dev: 186_810, n: 1})
	p.writeLatency(" lat", latency{min: 47_001, max: 6_172_999, mean: 281_840, dev: 187_020, n: 1})
	check("latencies", 8, 9)

	ps, precision := (&Job{}).percentiles()
	usec := []int64{184, 206, 219, 235, 247, 258, 265, 273, 281, 293, 310, 326, 404, 1745, 2999, 3261, 6128}
	vals := make([]int64, len(usec))
	for i, v := range usec {
		vals[i] = v*1000 - 500 // fio rounds up to whole microseconds
	}
	p.writePercentiles("clat", ps, precision, vals)
	check("percentiles", 10, 15)

	// The read direction of a section in a group of its own.
	s := &section{job: &Job{}, members: 1, all: metrics.NewHistogram()}
	s.dirs[0] = direction{bytes: 150033 * 4096, ios: 150033, runtimeMs: 3001,
		bw:   samples{n: 5, min: 193888, max: 203008, mean: 199278.40, squares: 4 * 4668.21 * 4668.21},
		iops: samples{n: 5, min: 48472, max: 50752, mean: 49819.60, squares: 4 * 1167.05 * 1167.05}}
	g := groupStatsOf(0, []*section{s})
	writeDirection(p, s, 0, g)
	out := strings.SplitAfter(b.String(), "\n")
	b.Reset()
	if len(out) != 4 || out[0] != lines[5] || out[1] != lines[15] || out[2] != lines[16] {
		t.Errorf("direction:\n%s\nwant fio's lines\n%s%s%s", strings.Join(out, ""), lines[5], lines[15], lines[16])
	}
	writeGroup(p, g)
	check("group", 39, 41)

	writeLatencyBuckets(p, []float64{0, 0, 0, 0, 0.01, 0.01, 17.09, 81.93, 0.33, 0.03}, "usec")
	writeLatencyBuckets(p, []float64{0.18, 0.39, 0.03, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "msec")
	check("latency buckets", 30, 32)

	s.queue = metrics.QueueCounts{Depth: [7]int64{1, 1, 2, 4, 8, 300000}, Submit: [7]int64{0, 300235}, Complete: [7]int64{0, 300230, 0, 0, 5}}
	s.dirs[1].ios = 150202
	s.userMs, s.sysMs, s.runMs = 5.70, 49.17, 100
	s.ctx, s.minf = 11486, 12
	s.job.IODepth = 32
	s.job.Name = "Rand_Read_Write_Test"
	r := &Report{PID: 8738, Time: time.Date(2026, 11, 30, 9, 2, 15, 0, time.UTC)}
	r.writeSection(p, s, g)
	head, want := lines[4], strings.Join(lines[32:38], "")
	if got := b.String(); !strings.HasPrefix(got, head) || !strings.HasSuffix(got, want) {
		t.Errorf("section:\n%s\nwant fio's\n%s...\n%s", got, head, want)
	}
	b.Reset()

	writeDisk(p, vda)
	check("disk", 45, 45)

	for _, c := range []struct {
		num  uint64
		pow2 bool
		unit string
		want string
	}{
		{150033 * 1000 / 3001, false, "", "50.0k"},
		{17 * 1000 / 12, false, "", "1416"},
		{1 << 20, true, "B", "1024KiB"},
		{4096, true, "B", "4096B"},
		{17 << 20, true, "B", "17.0MiB"},
		{17 << 20, false, "B", "17.8MB"},
		{(17 << 20) * 1000 / 12, true, "B/s", "1417MiB/s"},
		{(17 << 20) * 1000 / 12, false, "B/s", "1485MB/s"},
		{150033 * 4096, false, "B", "615MB"},
	} {
		if got := num2str(c.num, 4, c.pow2, c.unit); got != c.want {
			t.Errorf("num2str(%d, %v, %q) = %q, fio prints %q", c.num, c.pow2, c.unit, got, c.want)
		}
	}
}

func TestTerseV3Fields(t *testing.T) {
	res, _ := results(t)
	r := randrwReport(res)
	r.Groups[0].Jobs[0].Description = "described"
	out := render(t, r.WriteTerse)
	// The field names of fio's HOWTO, for v3 with one disk, then the
	// description.
	names := strings.Split("terse_version_3;fio_version;jobname;groupid;error;"+
		dirFields("read")+dirFields("write")+
		"cpu_user;cpu_sys;cpu_csw;cpu_mjf;cpu_minf;iodepth_1;iodepth_2;iodepth_4;iodepth_8;iodepth_16;iodepth_32;iodepth_64;"+
		"lat_2us;lat_4us;lat_10us;lat_20us;lat_50us;lat_100us;lat_250us;lat_500us;lat_750us;lat_1000us;"+
		"lat_2ms;lat_4ms;lat_10ms;lat_20ms;lat_50ms;lat_100ms;lat_250ms;lat_500ms;lat_750ms;lat_1000ms;lat_2000ms;lat_over_2000ms;"+
		"disk_name;disk_read_iops;disk_write_iops;disk_read_merges;disk_write_merges;disk_read_ticks;write_ticks;disk_queue_time;disk_util;"+
		"description", ";")
	if len(names) != 131 || strings.Count(out, "\n") != 1 {
		t.Fatalf("%d names, %d lines", len(names), strings.Count(out, "\n"))
	}
	vals := strings.Split(strings.TrimSuffix(out, "\n"), ";")
	if len(vals) != len(names) {
		t.Fatalf("%d fields, want %d:\n%s", len(vals), len(names), out)
	}
	f := map[string]string{}
	for i, n := range names {
		f[n] = vals[i]
	}
	rd := res.Ops["read"]
	runtime := int64(res.ElapsedSeconds * 1000)
	for name, want := range map[string]string{
		"terse_version_3": "3", "fio_version": "cephbench-test", "jobname": "Rand_Read_Write_Test",
		"read_kb": fmt.Sprint(rd.Bytes >> 10), "read_iops": fmt.Sprint(rd.Ops * 1000 / runtime), "read_runtime_ms": fmt.Sprint(runtime),
		"read_bandwidth_kb": fmt.Sprint(rd.Bytes * 1000 / runtime / 1024), "read_slat_max_us": "0",
		"read_clat_max_us": fmt.Sprint(rd.Latency.MaxNs / 1000), "read_clat_pct13": fmt.Sprintf("99.000000%%=%d", rd.Latency.Percentiles.At(99)/1000),
		"read_clat_pct18": "0%=0", "read_bw_min_kb": fmt.Sprint(int64(rd.BandwidthBps.Min / 1024)),
		"cpu_csw": fmt.Sprint(res.CPU.ContextSwitches), "disk_name": "vda", "disk_read_iops": "144811", "disk_util": "84.97%",
		"description": "described",
	} {
		if f[name] != want {
			t.Errorf("%s = %q, want %q", name, f[name], want)
		}
	}
}

func dirFields(d string) string {
	s := d + "_kb;" + d + "_bandwidth_kb;" + d + "_iops;" + d + "_runtime_ms;"
	for _, l := range []string{"slat", "clat"} {
		s += d + "_" + l + "_min_us;" + d + "_" + l + "_max_us;" + d + "_" + l + "_mean_us;" + d + "_" + l + "_dev_us;"
	}
	for i := 1; i <= 20; i++ {
		s += fmt.Sprintf("%s_clat_pct%02d;", d, i)
	}
	return s + d + "_tlat_min_us;" + d + "_lat_max_us;" + d + "_lat_mean_us;" + d + "_lat_dev_us;" +
		d + "_bw_min_kb;" + d + "_bw_max_kb;" + d + "_bw_agg_pct;" + d + "_bw_mean_kb;" + d + "_bw_dev_kb;"
}

func TestAJobThatDidNotRun(t *testing.T) {
	r := &Report{Version: "v", Groups: []Group{{Jobs: []Job{{Name: "x", Err: 5}}}}}
	out := render(t, r.WriteNormal)
	if strings.Contains(out, "x:") {
		t.Errorf("fio prints no section for a job without io:\n%s", out)
	}
	js := render(t, r.WriteJSON)
	var got struct {
		Jobs []struct {
			Error int
			Read  fioDirection
		}
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil || len(got.Jobs) != 1 || got.Jobs[0].Error != 5 || got.Jobs[0].Read.TotalIOs != 0 {
		t.Errorf("%v %+v\n%s", err, got, js)
	}
}
