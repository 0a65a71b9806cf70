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
// nanoseconds), its value empty.
const quiescePrefix = "cephbench/quiesce/"

// flagPrefix starts the config keys that mark a scrub flag as set by
// quiesced runs, flagPrefix+FLAG: the last run to end clears the flags
// marked, and so never one the operator set.
const flagPrefix = "cephbench/quiesce-flag/"

// How runs share the flags. The config-key store has no compare-and-swap,
// so no key is read, changed and written back: a run writes and removes
// only its own record, and a flag's mark is only ever set or removed
// whole. Each command is atomic and the monitors order all of them
// (Paxos), which is what the argument below rests on.
//
// A run that starts writes its record, then reads the flags, then holds
// each that is not set: marks it, sets it, and marks it again. A run that
// ends removes its record, then repeats until it returns:
//
//	list the keys; if a live record is left, return (that run's end
//	decides); drop each marked flag (remove its mark, then unset it);
//	list the keys; if no live record appeared, return; hold again the
//	flags it dropped (a run that started meanwhile may have found them
//	set and counted on them).
//
// Two enders never both miss each other's end: each removes its record
// before it lists, so the later of the two lists sees the other's record
// gone, and at least one of them clears. A starter whose record the
// ender's second list missed wrote it after that list, and so read the
// flags after the ender cleared them: it finds them unset and holds them
// itself. An ender's last flag command is always followed by a list that
// agrees with it: after dropping, no live record; after holding, a live
// record, whose own end comes after that hold. So the last command on a
// flag is a hold while some run is live, and a drop once none is: once
// every run has returned, a flag quiesced runs set is set iff a live (or
// killed, until ReleaseDead) run's record is there. A hold marks after it
// sets and a drop unmarks before it unsets, so a flag left set by the
// runs is marked whatever the order of their commands, and the mark goes
// with the last drop. The first mark, before the set, keeps the flag
// marked if the run is killed between the two. Each round of an ender's
// loop needs another run to start and end within it, so the loop ends.
//
// The price: a run that starts while another ends may find the flags set
// and then, for the few milliseconds until the ender sets them again, run
// with them unset (a scrub that starts then is aborted once they are).

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
	r := &Quiesce{q: q, key: fmt.Sprintf("%s%s/%d/%d", quiescePrefix, q.host, q.pid, q.now().UnixNano())}
	// The record goes first, so that a run ending now sees it (see How
	// runs share the flags).
	if err := q.mon(map[string]string{"prefix": "config-key set", "key": r.key, "val": ""}); err != nil {
		return nil, err
	}
	set, err := q.flags()
	if err != nil {
		return nil, errors.Join(err, r.Restore())
	}
	for _, f := range QuiesceFlags {
		if set[f] {
			r.AlreadySet = append(r.AlreadySet, f)
		} else {
			r.Set = append(r.Set, f)
		}
	}
	if err := q.hold(r.Set); err != nil {
		return nil, errors.Join(err, r.Restore())
	}
	return r, nil
}

// Restore ends the run's hold: its record is removed and, unless another
// live run's record is left, the flags quiesced runs set are cleared.
func (r *Quiesce) Restore() error {
	return r.q.release(r.key)
}

// ReleaseDead removes the records of the runs of this host whose process
// is gone (killed), then clears the flags quiesced runs set unless a live
// run's record is left, as the killed runs' Restore would have; it
// returns how many records it removed. Another host's runs, and live
// runs, are left alone.
func (q *Quiescer) ReleaseDead() (int, error) {
	recs, _, err := q.keys()
	if err != nil {
		return 0, err
	}
	var dead []string
	for _, rec := range recs {
		if rec.host == q.host && !q.live(rec) {
			dead = append(dead, rec.key)
		}
	}
	return len(dead), q.release(dead...)
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

// release removes the records of keys, then clears the marked flags if
// no live run's record is left (see How runs share the flags).
func (q *Quiescer) release(keys ...string) error {
	for _, k := range keys {
		if err := q.mon(map[string]string{"prefix": "config-key rm", "key": k}); err != nil {
			return err
		}
	}
	for {
		live, marked, err := q.liveAndMarked()
		if err != nil || live || len(marked) == 0 {
			return err
		}
		for _, f := range marked {
			if err := q.drop(f); err != nil {
				return err
			}
		}
		if live, _, err = q.liveAndMarked(); err != nil || !live {
			return err
		}
		if err := q.hold(marked); err != nil {
			return err
		}
	}
}

// hold marks and sets flags, marking each again once it is set: a
// drop of another run's between the first mark and the set may have
// removed it.
func (q *Quiescer) hold(flags []string) error {
	for _, f := range flags {
		mark := map[string]string{"prefix": "config-key set", "key": flagPrefix + f, "val": ""}
		for _, cmd := range []map[string]string{mark, {"prefix": "osd set", "key": f}, mark} {
			if err := q.mon(cmd); err != nil {
				return err
			}
		}
	}
	return nil
}

// drop unmarks and unsets a flag.
func (q *Quiescer) drop(f string) error {
	if err := q.mon(map[string]string{"prefix": "config-key rm", "key": flagPrefix + f}); err != nil {
		return err
	}
	return q.mon(map[string]string{"prefix": "osd unset", "key": f})
}

// liveAndMarked lists the config keys: whether a live run's record is
// among them, and the flags marked as set by quiesced runs.
func (q *Quiescer) liveAndMarked() (bool, []string, error) {
	recs, marked, err := q.keys()
	return slices.ContainsFunc(recs, q.live), marked, err
}

// keys lists the runs' records, in the order of their keys, and the
// flags marked; keys under the prefixes not made by Quiescer are
// skipped.
func (q *Quiescer) keys() ([]record, []string, error) {
	b, err := q.ask(map[string]string{"prefix": "config-key ls", "format": "json"})
	if err != nil {
		return nil, nil, err
	}
	var keys []string
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, nil, fmt.Errorf("ceph config-key ls: %v", err)
	}
	sort.Strings(keys)
	var recs []record
	var marked []string
	for _, k := range keys {
		if rec, ok := parseRecordKey(k); ok {
			recs = append(recs, rec)
		} else if f, ok := strings.CutPrefix(k, flagPrefix); ok && slices.Contains(QuiesceFlags, f) {
			marked = append(marked, f)
		}
	}
	return recs, marked, nil
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
