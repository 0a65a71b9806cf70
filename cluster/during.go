package cluster

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// During is what the cluster did while a run measured, from its samples:
// a run with any event was not at rest.
type During struct {
	IntervalSeconds float64 `json:"interval_s"`
	Samples         int     `json:"samples"`
	// FSID is the cluster watched; Pools are those whose client I/O
	// the samples count (the run's). Either is empty when not known.
	FSID  string   `json:"fsid,omitempty"`
	Pools []string `json:"pools,omitempty"`
	// Unread counts the samples whose status could not be read: what
	// happened then is not known.
	Unread int     `json:"unread,omitempty"`
	Events []Event `json:"events,omitempty"`
	// SlowOSDs are the OSDs whose latency stood out from the others'
	// (see slowFactor); a slow OSD is not an event: the cluster may be at
	// rest with one.
	SlowOSDs []SlowOSD `json:"slow_osds,omitempty"`
	// CommandsPerSecond is how many commands the watch sent the
	// cluster per second, by kind ("mon", "mgr", "osd").
	CommandsPerSecond map[string]float64 `json:"commands_per_s,omitempty"`
	// Problems are the commands the cluster failed to answer, or
	// answered with what could not be read, the first time each did.
	Problems []string `json:"problems,omitempty"`
}

// Event is one thing the cluster did during a run, its times in seconds
// since the run started.
type Event struct {
	// What is what happened: a PG state ("deep scrub", "recovery"),
	// an OSD's change ("osd.2 down") or a health check's ("health check
	// OSD_DOWN raised").
	What string  `json:"what"`
	At   float64 `json:"at_s"`
	// Until and PGs, for PG states, are the last sample that saw them
	// and the most PGs a sample saw in them.
	Until float64 `json:"until_s,omitempty"`
	PGs   int     `json:"pgs,omitempty"`
	// Detail is a health check's message.
	Detail string `json:"detail,omitempty"`
}

// String says what happened and when: "deep scrub on 4 PGs from 12 s to
// 31 s", "osd.2 down at 40 s".
func (e Event) String() string {
	if e.PGs > 0 {
		pgs := fmt.Sprintf("%d PGs", e.PGs)
		if e.PGs == 1 {
			pgs = "1 PG"
		}
		if e.Until > e.At {
			return fmt.Sprintf("%s on %s from %s to %s", e.What, pgs, seconds(e.At), seconds(e.Until))
		}
		return fmt.Sprintf("%s on %s at %s", e.What, pgs, seconds(e.At))
	}
	s := e.What + " at " + seconds(e.At)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

func seconds(s float64) string {
	return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) + " s"
}

// AtRest reports whether the cluster did nothing during the run that
// would have changed what the run measured.
func (d *During) AtRest() bool { return len(d.Events) == 0 }

// maxEventsInLine bounds the events the summary line names: an OSD that
// flaps for an hour is not a page of text.
const maxEventsInLine = 8

// Lines sum up d for a run's summary: whether the cluster was at rest,
// with its events, the slow OSDs, and what could not be read.
func (d *During) Lines() []string {
	var out []string
	switch {
	case !d.watchedAtAll():
		out = append(out, "the cluster could not be watched during the run")
	case !d.AtRest():
		out = append(out, "cluster NOT AT REST during the run: "+d.events())
	default:
		out = append(out, "cluster at rest during the run ("+d.samples()+")")
	}
	if w := d.watched(); len(w) > 0 {
		out = append(out, "watched "+strings.Join(w, ", "))
	}
	for _, o := range d.SlowOSDs {
		out = append(out, o.String())
	}
	if len(d.Problems) > 0 {
		out = append(out, "the cluster watch could not read: "+strings.Join(d.Problems, "; "))
	}
	return out
}

// Field is one thing a summary says about the cluster, as a key and its
// value, for the summaries whose every line is "key: value".
type Field struct{ Key, Value string }

// Fields say what Lines say, each as a key and its value: whether the
// cluster was at rest ("yes (6 samples, every 1s)", "NO, EVENTS" or "not
// known"), the cluster and pools watched, each slow OSD, and what could
// not be read.
func (d *During) Fields() []Field {
	rest := Field{Key: "Cluster at rest"}
	switch {
	case !d.watchedAtAll():
		rest.Value = "not known, the cluster could not be watched during the run"
	case !d.AtRest():
		rest.Value = "NO, " + d.events()
	default:
		rest.Value = "yes (" + d.samples() + ")"
	}
	out := []Field{rest}
	if w := d.watched(); len(w) > 0 {
		w[0] = strings.TrimPrefix(w[0], "cluster ")
		out = append(out, Field{Key: "Watched cluster", Value: strings.Join(w, ", ")})
	}
	for _, o := range d.SlowOSDs {
		out = append(out, Field{Key: "Slow OSD", Value: fmt.Sprintf("osd.%d, %s", o.ID, o.measured())})
	}
	if len(d.Problems) > 0 {
		out = append(out, Field{Key: "Cluster watch could not read", Value: strings.Join(d.Problems, "; ")})
	}
	return out
}

// watchedAtAll reports whether any sample of the cluster was read.
func (d *During) watchedAtAll() bool { return d.Samples > 0 && d.Unread < d.Samples }

// events are d's events in one line, the first maxEventsInLine of them.
func (d *During) events() string {
	var events []string
	for i, e := range d.Events {
		if i == maxEventsInLine {
			events = append(events, fmt.Sprintf("and %d more", len(d.Events)-i))
			break
		}
		events = append(events, e.String())
	}
	return strings.Join(events, "; ")
}

// samples says how the cluster was sampled: "6 samples, every 1s".
func (d *During) samples() string {
	every := time.Duration(d.IntervalSeconds * float64(time.Second))
	unread := ""
	if d.Unread > 0 {
		unread = fmt.Sprintf(", %d of them unread", d.Unread)
	}
	if d.Samples == 1 {
		return fmt.Sprintf("1 sample, every %s%s", every, unread)
	}
	return fmt.Sprintf("%d samples, every %s%s", d.Samples, every, unread)
}

// watched names the cluster watched ("cluster FSID") and the pools whose
// client I/O was counted, those of them that are known.
func (d *During) watched() []string {
	var parts []string
	if d.FSID != "" {
		parts = append(parts, "cluster "+d.FSID)
	}
	if len(d.Pools) > 0 {
		parts = append(parts, "client I/O of pools "+strings.Join(d.Pools, ", "))
	}
	return parts
}

// pgActivities are the PG states that tell of work the cluster did
// besides the run's, by the word in a PG's states that shows each.
var pgActivities = []struct {
	name  string
	shows func(state string) bool
}{
	{"scrub", func(s string) bool { return has(s, "scrubbing") && !has(s, "deep") }},
	{"deep scrub", func(s string) bool { return has(s, "scrubbing") && has(s, "deep") }},
	{"recovery", func(s string) bool { return has(s, "recovering") || has(s, "recovery_wait") }},
	{"backfill", func(s string) bool { return has(s, "backfilling") || has(s, "backfill_wait") }},
	{"degraded", func(s string) bool { return has(s, "degraded") }},
	{"peering", func(s string) bool { return has(s, "peering") }},
}

func has(states, word string) bool {
	for _, w := range strings.Split(states, "+") {
		if w == word {
			return true
		}
	}
	return false
}

// quietChecks are health checks about flags and schedules, not the I/O
// path: raising or clearing them does not unsettle a run.
var quietChecks = map[string]bool{"OSDMAP_FLAGS": true, "PG_NOT_SCRUBBED": true, "PG_NOT_DEEP_SCRUBBED": true}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
