package cluster

import (
	"fmt"
	"strings"
	"testing"
)

// queueSeconds makes one sample a second for n seconds, in which OSD id
// waited ms(id, second) milliseconds an op.
func queueSeconds(n int, osds []int, ms func(id, sec int) float64) []Sample {
	var out []Sample
	for sec := range n {
		s := Sample{At: float64(sec), Every: 1, Health: "HEALTH_OK"}
		for _, id := range osds {
			s.OSDQueue = append(s.OSDQueue, OSDQueue{ID: id, Ms: ms(id, sec)})
		}
		out = append(out, s)
	}
	return out
}

// jitter is a deterministic spread of ±20% around ms.
func jitter(ms float64, id, sec int) float64 { return ms * (0.8 + 0.4*float64((id*7+sec*13)%10)/10) }

func TestAnOSDWhoseQueueIsSlowIsNamed(t *testing.T) {
	samples := queueSeconds(10, []int{0, 1, 2, 3}, func(id, sec int) float64 {
		if id == 1 {
			return jitter(120, id, sec)
		}
		return jitter(0.7, id, sec)
	})
	d := Summarize(samples)
	if len(d.SlowOSDs) != 1 {
		t.Fatalf("slow OSDs %+v; want osd.1", d.SlowOSDs)
	}
	o := d.SlowOSDs[0]
	if o.ID != 1 || o.Measure != "queue latency" || o.Seconds != 10 || o.P99Ms < 120 || o.OthersMs > 1 {
		t.Errorf("slow OSD %+v", o)
	}
	want := fmt.Sprintf("slow OSD osd.1: queue latency p99 %.0f ms over 10 s, against %.2f ms for the other OSDs (median)", o.P99Ms, o.OthersMs)
	if lines := d.Lines(); len(lines) != 2 || lines[1] != want {
		t.Errorf("lines %q; want the at-rest line, then %q", lines, want)
	}
}

func TestAnOSDWhoseCommitIsSlowIsNamed(t *testing.T) {
	var samples []Sample
	for sec := range 8 {
		s := Sample{At: float64(sec), Every: 1}
		for id := range 3 {
			ms := 2.0
			if id == 2 {
				ms = 40
			}
			s.OSDPerf = append(s.OSDPerf, OSDLatency{ID: id, Commit: ms, Apply: ms})
		}
		samples = append(samples, s)
	}
	got := fmt.Sprint(Summarize(samples).SlowOSDs)
	if want := "[slow OSD osd.2: commit latency p99 40 ms over 8 s, against 2.0 ms for the other OSDs (median)]"; got != want {
		t.Errorf("got %s; want %s", got, want)
	}
}

// A cluster whose OSDs all wait a few milliseconds, each with a worse
// second now and then, has no slow OSD.
func TestAHealthyClusterHasNoSlowOSD(t *testing.T) {
	samples := queueSeconds(30, []int{0, 1, 2, 3, 4}, func(id, sec int) float64 {
		if sec == 3*id+2 {
			return 9 // one burst each, at its own second
		}
		return jitter(2, id, sec)
	})
	if d := Summarize(samples); len(d.SlowOSDs) != 0 || len(d.Lines()) != 1 {
		t.Errorf("slow OSDs %+v, lines %q", d.SlowOSDs, d.Lines())
	}
}

// On a busy cluster, an OSD slow for 4 seconds of 30 has a p99 far above
// the others' but its median second is theirs: it is not named.
func TestAnOSDSlowForAFewSecondsIsNotNamed(t *testing.T) {
	samples := queueSeconds(30, []int{0, 1, 2}, func(id, sec int) float64 {
		if id == 2 && sec >= 10 && sec < 14 {
			return 80
		}
		return jitter(8, id, sec)
	})
	if slow := Summarize(samples).SlowOSDs; len(slow) != 0 {
		t.Errorf("slow OSDs %+v", slow)
	}
}

// With two OSDs, one slow beside the other is not a majority's view:
// nothing is named. A third OSD makes the outlier plain.
func TestTwoOSDsAreTooFewToName(t *testing.T) {
	slowOne := func(id, sec int) float64 {
		if id == 1 {
			return 100
		}
		return 1
	}
	if slow := Summarize(queueSeconds(10, []int{0, 1}, slowOne)).SlowOSDs; len(slow) != 0 {
		t.Errorf("2 OSDs: slow OSDs %+v", slow)
	}
	if slow := Summarize(queueSeconds(10, []int{0, 1, 2}, slowOne)).SlowOSDs; len(slow) != 1 || slow[0].ID != 1 {
		t.Errorf("3 OSDs: slow OSDs %+v; want osd.1", slow)
	}
	// An OSD seen in fewer than 3 samples is not judged.
	short := queueSeconds(10, []int{0, 1, 2}, slowOne)
	for i := 2; i < len(short); i++ {
		short[i].OSDQueue = short[i].OSDQueue[:1]
	}
	if slow := Summarize(short).SlowOSDs; len(slow) != 0 {
		t.Errorf("osd.1 and osd.2 in 2 samples: slow OSDs %+v", slow)
	}
	if !strings.Contains(SlowOSD{ID: 3, Measure: "queue latency", P99Ms: 5.3, OthersMs: 0.5, Seconds: 1}.String(), "p99 5.3 ms over 1 s") {
		t.Error("milliseconds under 10 have one decimal")
	}
}
