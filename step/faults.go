package step

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/result"
)

// snapshots are the cluster's state around a run, for a session on a
// cluster, and why each could not be read. A snapshot is bounded by the
// engine's own timeout on its requests to the monitors (15 s for the Ceph
// engines), so a dead monitor or a cut network costs that, not a hang.
type snapshots struct {
	reporter      engine.ClusterReporter
	pair          *cluster.Pair
	before, after error
}

// snapshotBefore records the state before the run if sess is on a
// cluster; otherwise the snapshots stay empty.
func snapshotBefore(sess engine.Session) *snapshots {
	s := &snapshots{}
	if r, ok := sess.(engine.ClusterReporter); ok {
		s.reporter, s.pair = r, &cluster.Pair{}
		s.pair.Before, s.before = r.ClusterSnapshot()
	}
	return s
}

// takeAfter records the state after the run.
func (s *snapshots) takeAfter() {
	if s.reporter != nil {
		s.pair.After, s.after = s.reporter.ClusterSnapshot()
	}
}

// notes say which snapshot could not be read, and why, and what changed
// in the cluster between the two.
func (s *snapshots) notes() []string {
	var n []string
	for _, c := range []struct {
		when string
		err  error
	}{{"before", s.before}, {"after", s.after}} {
		if c.err != nil {
			n = append(n, fmt.Sprintf("the cluster's state could not be read %s the run: %s", c.when, oneLine(c.err.Error())))
		}
	}
	if s.pair != nil {
		if changes := cluster.Changes(s.pair.Before, s.pair.After); len(changes) > 0 {
			n = append(n, "the cluster changed during the run: "+strings.Join(changes, "; "))
		}
	}
	return n
}

// failureNote says how many ops failed, of which kinds and why, and the
// op timeout when ops timed out; "" when none failed.
func failureNote(res *result.Result) string {
	var failed int64
	var byKind []string
	for _, kind := range sortedKeys(res.Ops) {
		if e := res.Ops[kind].Errors; e > 0 {
			failed += e
			byKind = append(byKind, fmt.Sprintf("%s %d", kind, e))
		}
	}
	if failed == 0 {
		return ""
	}
	var why []string
	for _, name := range sortedKeys(res.Errors) {
		why = append(why, fmt.Sprintf("%s %d", name, res.Errors[name]))
	}
	n := fmt.Sprintf("%d ops failed (%s; by error: %s)", failed, strings.Join(byKind, ", "), strings.Join(why, ", "))
	if res.Errors["ETIMEDOUT"]+res.Errors["timeout"] > 0 {
		if t := res.Spec.OpTimeout.D(); t > 0 {
			n += fmt.Sprintf("; an op timed out after %s", t)
		} else {
			n += "; an op timed out after the engine's default op timeout"
		}
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
