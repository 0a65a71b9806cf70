package cluster

import (
	"fmt"
	"math"
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Summary adds up a watch's samples as they are taken, so that a watch
// of a day on a large cluster keeps its events and a latency histogram
// per OSD, not its samples. It is not safe for concurrent use.
type Summary struct {
	d           During // its count, interval, unread samples and problems so far
	first, last float64
	sent        map[string]int
	// pgOpen is, for each of pgActivities, the span going on at the
	// last sample read, nil if none; pgDone are the spans ended.
	pgOpen []*Event
	pgDone [][]Event
	// osds is every OSD's state at the last sample that read the OSD
	// map, nil before; checks the health checks at the last sample
	// that read the status, nil before.
	osds      map[int]OSDState
	osdEvents []Event
	checks    map[string]string
	health    []Event
	// queue and commit hold each OSD's seconds of queue and commit
	// latency, in microseconds (see latencyDigits).
	queue, commit map[int]*hdr.PackedHistogram
}

// NewSummary returns the summary of no samples.
func NewSummary() *Summary {
	return &Summary{sent: map[string]int{}, pgOpen: make([]*Event, len(pgActivities)), pgDone: make([][]Event, len(pgActivities)),
		queue: map[int]*hdr.PackedHistogram{}, commit: map[int]*hdr.PackedHistogram{}}
}

// Summarize finds the events in samples, taken in time order by one
// watch, as a Summary fed them in turn does.
func Summarize(samples []Sample) *During {
	s := NewSummary()
	for _, smp := range samples {
		s.Add(smp)
	}
	return s.During()
}

// Add adds smp, the watch's next sample; a sample whose status could not
// be read neither starts nor ends a PG state. Add keeps nothing of smp
// but the health checks' map.
func (s *Summary) Add(smp Sample) {
	if s.d.Samples == 0 {
		s.d.IntervalSeconds, s.first = smp.Every, smp.At
	}
	s.d.Samples++
	s.last = smp.At
	if smp.Health == "" {
		s.d.Unread++
	}
	s.d.Problems = append(s.d.Problems, smp.Problems...)
	for kind, n := range smp.Sent {
		s.sent[kind] += n
	}
	s.addOSDs(smp)
	s.addHealth(smp)
	s.addPGs(smp)
	for _, q := range smp.OSDQueue {
		recordLatency(s.queue, q.ID, q.Ms)
	}
	for _, p := range smp.OSDPerf {
		recordLatency(s.commit, p.ID, p.Commit)
	}
}

// During is what the samples added so far sum up to; the summary may
// take more samples after.
func (s *Summary) During() *During {
	d := s.d
	if d.Samples == 0 {
		return &d
	}
	if span := s.last - s.first + d.IntervalSeconds; span > 0 && len(s.sent) > 0 {
		d.CommandsPerSecond = map[string]float64{}
		for kind, n := range s.sent {
			d.CommandsPerSecond[kind] = math.Round(float64(n)/span*100) / 100
		}
	}
	// At one time, a cause (an OSD down) before its effects (a check
	// raised, PGs degraded).
	d.Events = append(append([]Event(nil), s.osdEvents...), s.health...)
	for i := range pgActivities {
		d.Events = append(d.Events, s.pgDone[i]...)
		if s.pgOpen[i] != nil {
			d.Events = append(d.Events, *s.pgOpen[i])
		}
	}
	sort.SliceStable(d.Events, func(i, j int) bool { return d.Events[i].At < d.Events[j].At })
	d.SlowOSDs = append(slowBy("queue latency", s.queue), slowBy("commit latency", s.commit)...)
	return &d
}

// addPGs starts, lengthens or ends the span of each PG activity.
func (s *Summary) addPGs(smp Sample) {
	if smp.Health == "" {
		return
	}
	for i, a := range pgActivities {
		n := 0
		for state, count := range smp.PGStates {
			if a.shows(state) {
				n += count
			}
		}
		open := s.pgOpen[i]
		switch {
		case n > 0 && open == nil:
			s.pgOpen[i] = &Event{What: a.name, At: smp.At, Until: smp.At, PGs: n}
		case n > 0:
			open.Until, open.PGs = smp.At, max(open.PGs, n)
		case open != nil:
			s.pgDone[i], s.pgOpen[i] = append(s.pgDone[i], *open), nil
		}
	}
}

// addOSDs notes the OSDs that went down, out, up or in since the last
// sample that read the OSD map.
func (s *Summary) addOSDs(smp Sample) {
	if smp.OSDs == nil {
		return
	}
	now := map[int]OSDState{}
	for _, o := range smp.OSDs {
		now[o.ID] = o
		was, known := s.osds[o.ID]
		if s.osds == nil || (known && was == o) {
			continue
		}
		name := fmt.Sprintf("osd.%d ", o.ID)
		if was.Up != o.Up {
			s.osdEvents = append(s.osdEvents, Event{What: name + map[bool]string{true: "up", false: "down"}[o.Up], At: smp.At})
		}
		if was.In != o.In {
			s.osdEvents = append(s.osdEvents, Event{What: name + map[bool]string{true: "in", false: "out"}[o.In], At: smp.At})
		}
	}
	s.osds = now
}

// addHealth notes the health checks raised and cleared since the last
// sample that read them, but for the quiet ones; the first sample that
// reads them raises none.
func (s *Summary) addHealth(smp Sample) {
	if smp.Health == "" {
		return
	}
	if s.checks != nil {
		for _, name := range sortedNames(smp.Checks) {
			if _, had := s.checks[name]; !had && !quietChecks[name] {
				s.health = append(s.health, Event{What: "health check " + name + " raised", At: smp.At, Detail: smp.Checks[name]})
			}
		}
		for _, name := range sortedNames(s.checks) {
			if _, has := smp.Checks[name]; !has && !quietChecks[name] {
				s.health = append(s.health, Event{What: "health check " + name + " cleared", At: smp.At})
			}
		}
	}
	s.checks = smp.Checks
	if s.checks == nil {
		s.checks = map[string]string{}
	}
}

// A latency histogram counts an OSD's seconds by their latency in whole
// microseconds, the precision of the queue latency a sample holds (and
// finer than osd perf's whole milliseconds), up to an hour. At five
// significant digits it holds every value below 262.144 ms exactly, so
// that the slow-OSD figures are those the seconds themselves give, and
// larger ones to within 8 parts in a million. It is sparse: it grows
// with the distinct values seen, not with the seconds.
const (
	usPerMs        = 1000
	latencyHighest = int64(3600 * 1000 * usPerMs)
	latencyDigits  = 5
)

// recordLatency adds one second of latency ms (clamped to the histogram's
// range) to OSD id's histogram in hists.
func recordLatency(hists map[int]*hdr.PackedHistogram, id int, ms float64) {
	h := hists[id]
	if h == nil {
		h = hdr.NewPacked(1, latencyHighest, latencyDigits)
		hists[id] = h
	}
	us := min(max(int64(math.Round(ms*usPerMs)), 0), latencyHighest)
	_ = h.RecordValue(us) // in range: clamped
}

// msAtRank is the value, in milliseconds, of the second of rank i (from
// 0, in ascending order) that h counts; h holds more than i.
func msAtRank(h *hdr.PackedHistogram, i int) float64 {
	var at, seen int64
	for value, count := range h.ForEachBucket {
		if seen += count; seen > int64(i) {
			at = value
			break
		}
	}
	return float64(at) / usPerMs
}
