package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cephbench/cephbench/internal/proc"
)

// QuiesceFlags are the OSD map flags --quiesce sets for a run: while they
// are set no scheduled scrub or deep scrub starts. A scrub an operator
// asks for (ceph osd pool deep-scrub) still runs.
var QuiesceFlags = []string{"noscrub", "nodeep-scrub"}

// quiescePrefix starts the monitors' config keys in which quiesced runs
// record themselves: quiescePrefix+HOST/PID/START (START in Unix
// nanoseconds), its value the flags the run is to clear, comma-separated.
const quiescePrefix = "cephbench/quiesce/"

// Quiesced is what --quiesce did for a run, as its result records it.
type Quiesced struct {
	// Set are the flags the run set; AlreadySet those that were set
	// before it (by the operator or another quiesced run), which it
	// left alone.
	Set        []string `json:"set,omitempty"`
	AlreadySet []string `json:"already_set,omitempty"`
}

// Line says what --quiesce did, for a run's summary.
func (q *Quiesced) Line() string {
	if len(q.Set) == 0 {
		return "--quiesce: " + q.Field().Value
	}
	return "--quiesce " + q.Field().Value
}

// Field says what Line says, as a key and its value.
func (q *Quiesced) Field() Field {
	set, already := strings.Join(q.Set, ", "), strings.Join(q.AlreadySet, ", ")
	verb := "were"
	if len(q.AlreadySet) == 1 {
		verb = "was"
	}
	v := fmt.Sprintf("set %s for the run (%s %s already set)", set, already, verb)
	switch {
	case len(q.AlreadySet) == 0:
		v = "set " + set + " for the run"
	case len(q.Set) == 0:
		v = fmt.Sprintf("%s %s already set", already, verb)
	}
	return Field{Key: "Quiesce", Value: v}
}

// Quiescer sets and clears the scrub flags over a cluster's monitors for
// the runs of this host, sharing them with the runs of other processes
// and hosts through their records in the config-key store. It is not safe
// for concurrent use; separate Quiescers are.
type Quiescer struct {
	cmds Commands
	host string
	pid  int
	now  func() time.Time
	// alive reports whether the process pid of this host, that recorded
	// itself at start, still runs.
	alive func(pid int, start time.Time) bool
}

// NewQuiescer quiesces runs of this process over cmds.
func NewQuiescer(cmds Commands) *Quiescer {
	host, _ := os.Hostname()
	return &Quiescer{cmds: cmds, host: host, pid: os.Getpid(), now: time.Now, alive: proc.Alive}
}

// Quiesce is one run's hold on the scrub flags, from Quiescer.Quiesce to
// its Restore.
type Quiesce struct {
	q   *Quiescer
	key string
	Quiesced
}

// Quiesce records the run in the config-key store, then sets the scrub
// flags that are not set. On an error, what it did is undone as far as
// the cluster lets it.
func (q *Quiescer) Quiesce() (*Quiesce, error) {
	set, err := q.flags()
	if err != nil {
		return nil, err
	}
	r := &Quiesce{q: q, key: fmt.Sprintf("%s%s/%d/%d", quiescePrefix, q.host, q.pid, q.now().UnixNano())}
	for _, f := range QuiesceFlags {
		if set[f] {
			r.AlreadySet = append(r.AlreadySet, f)
		} else {
			r.Set = append(r.Set, f)
		}
	}
	if err := q.setRecord(r.key, r.Set); err != nil {
		return nil, err
	}
	for _, f := range r.Set {
		if err := q.mon(map[string]string{"prefix": "osd set", "key": f}); err != nil {
			return nil, errors.Join(err, r.Restore())
		}
	}
	return r, nil
}

// Restore ends the run's hold: the flags the run is to clear are cleared,
// or handed over to another live run's record if there is one (so that
// the last run clears them), and the run's record is removed.
func (r *Quiesce) Restore() error {
	return r.q.release(r.key)
}

// ReleaseDead releases the holds of the runs of this host whose process
// is gone (killed), as Restore would have, and returns how many.
// Another host's runs, and live runs, are left alone.
func (q *Quiescer) ReleaseDead() (int, error) {
	recs, err := q.records()
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, rec := range recs {
		if rec.host == q.host && !q.live(rec) {
			errs = append(errs, q.release(rec.key))
			n++
		}
	}
	return n, errors.Join(errs...)
}

// record is one run's record, as its key says.
type record struct {
	key, host string
	pid       int
	start     time.Time
}

// live reports whether rec's run still holds the flags; a run on another
// host is taken to, as this host cannot tell.
func (q *Quiescer) live(rec record) bool {
	return rec.host != q.host || q.alive(rec.pid, rec.start)
}

// release clears the flags key's record is to clear, or hands them to
// another live run's record, then removes the record.
func (q *Quiescer) release(key string) error {
	owned, err := q.owned(key)
	if err != nil {
		return err
	}
	heir, err := q.heir(key)
	if err != nil {
		return err
	}
	if heir != "" && len(owned) > 0 {
		theirs, err := q.owned(heir)
		if err != nil {
			return err
		}
		if err := q.setRecord(heir, union(theirs, owned)); err != nil {
			return err
		}
	}
	if err := q.mon(map[string]string{"prefix": "config-key rm", "key": key}); err != nil {
		return err
	}
	if heir != "" {
		// The heir may have ended between our reading and our writing
		// its record: if no live run is left, the flags are ours again.
		if heir, err = q.heir(key); err != nil || heir != "" {
			return err
		}
	}
	var errs []error
	for _, f := range owned {
		errs = append(errs, q.mon(map[string]string{"prefix": "osd unset", "key": f}))
	}
	return errors.Join(errs...)
}

// heir is the key of a live run's record other than key, the first in
// order; "" for none.
func (q *Quiescer) heir(key string) (string, error) {
	recs, err := q.records()
	if err != nil {
		return "", err
	}
	for _, rec := range recs {
		if rec.key != key && q.live(rec) {
			return rec.key, nil
		}
	}
	return "", nil
}

// records lists the runs' records, in the order of their keys; keys under
// quiescePrefix not made by Quiescer are skipped.
func (q *Quiescer) records() ([]record, error) {
	b, err := q.ask(map[string]string{"prefix": "config-key ls", "format": "json"})
	if err != nil {
		return nil, err
	}
	var keys []string
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, fmt.Errorf("ceph config-key ls: %v", err)
	}
	sort.Strings(keys)
	var recs []record
	for _, k := range keys {
		if rec, ok := parseRecordKey(k); ok {
			recs = append(recs, rec)
		}
	}
	return recs, nil
}

func parseRecordKey(key string) (record, bool) {
	rest, ok := strings.CutPrefix(key, quiescePrefix)
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 3 {
		return record{}, false
	}
	pid, err1 := strconv.Atoi(parts[1])
	ns, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return record{}, false
	}
	return record{key: key, host: parts[0], pid: pid, start: time.Unix(0, ns)}, true
}

// owned reads the flags key's record is to clear; none for a record
// that is gone.
func (q *Quiescer) owned(key string) ([]string, error) {
	b, err := q.ask(map[string]string{"prefix": "config-key get", "key": key})
	if err != nil {
		if msg := strings.ToLower(err.Error()); strings.Contains(msg, "enoent") || strings.Contains(msg, "no such file") {
			return nil, nil
		}
		return nil, err
	}
	var flags []string
	for _, f := range strings.Split(string(b), ",") {
		if f = strings.TrimSpace(f); slices.Contains(QuiesceFlags, f) {
			flags = append(flags, f)
		}
	}
	return flags, nil
}

func (q *Quiescer) setRecord(key string, flags []string) error {
	return q.mon(map[string]string{"prefix": "config-key set", "key": key, "val": strings.Join(flags, ",")})
}

// flags reads the OSD map's flags.
func (q *Quiescer) flags() (map[string]bool, error) {
	b, err := q.ask(map[string]string{"prefix": "osd dump", "format": "json"})
	if err != nil {
		return nil, err
	}
	var dump struct {
		Flags string `json:"flags"`
	}
	if err := json.Unmarshal(b, &dump); err != nil {
		return nil, fmt.Errorf("ceph osd dump: %v", err)
	}
	set := map[string]bool{}
	for _, f := range strings.Split(dump.Flags, ",") {
		set[f] = true
	}
	return set, nil
}

func (q *Quiescer) mon(cmd map[string]string) error {
	_, err := q.ask(cmd)
	return err
}

// ask sends cmd to the monitors; its error names the command.
func (q *Quiescer) ask(cmd map[string]string) ([]byte, error) {
	b, _ := json.Marshal(cmd) // strings always marshal
	out, err := q.cmds.Mon(b)
	if err != nil {
		what := "ceph " + cmd["prefix"]
		if k := cmd["key"]; k != "" {
			what += " " + k
		}
		return nil, fmt.Errorf("%s: %s", what, oneLine(err.Error()))
	}
	return out, nil
}

func union(a, b []string) []string {
	var out []string
	for _, f := range QuiesceFlags {
		if slices.Contains(a, f) || slices.Contains(b, f) {
			out = append(out, f)
		}
	}
	return out
}
