package cluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/cluster/clustertest"
)

// What a run does once the interleaving starts.
const (
	ends      = "ends"        // Restore of a hold it took before
	starts    = "starts"      // Quiesce
	startsEnd = "starts+ends" // Quiesce, then Restore
)

// run is one quiesced run of an interleaving scenario, a process of host.
type run struct {
	host string
	pid  int
	does string // ends, starts or startsEnd; "" for a run that holds the flags throughout
}

// actor drives one run's commands one at a time: before each, it reports
// the command and waits to be let go.
type actor struct {
	r      run
	q      *Quiescer
	hold   *Quiesce
	gated  bool
	events chan event
	// gate lets the actor send its command; false lets it go on
	// ungated to its end.
	gate chan bool
	sent []string
}

// event is an actor's command about to be sent, or its end.
type event struct {
	cmd  string
	done bool
	err  error
}

func (a *actor) before(cmd string) {
	if a.gated {
		a.events <- event{cmd: cmd}
		a.gated = <-a.gate
	}
}

func (a *actor) act() {
	var err error
	if a.r.does != ends {
		a.hold, err = a.q.Quiesce()
	}
	if err == nil && a.r.does != starts {
		err = a.hold.Restore()
	}
	a.events <- event{done: true, err: err}
}

// choice is the index, among the actors that could send a command, of
// the one that did, and how many could.
type choice struct{ of, chose int }

// interleaving is one execution of a scenario.
type interleaving struct {
	m      *clustertest.Monitor
	actors []*actor
	procs  processes
	made   []choice
	trace  []string
	errs   []error
	// pruned says the execution reached a state an earlier one had, and
	// stopped there: what follows was checked then.
	pruned bool
}

// sending is a command about to be sent and, for one that reads, what
// its answer depends on: the cluster and which processes run. The
// commands a run sent and the answers it read are what it has in memory.
func (in *interleaving) sending(cmd string) string {
	if strings.HasPrefix(cmd, "config-key set") || strings.HasPrefix(cmd, "config-key rm") || strings.HasPrefix(cmd, "osd set") || strings.HasPrefix(cmd, "osd unset") {
		return cmd
	}
	return fmt.Sprint(cmd, " ", in.m.Flags(), in.m.Keys(), in.procs)
}

// state is what the rest of an execution depends on: the cluster, which
// processes run, and each run's commands so far and the next.
func (in *interleaving) state(pending map[*actor]string) string {
	var b strings.Builder
	// fmt prints maps in the order of their keys.
	fmt.Fprintln(&b, in.m.Flags(), in.m.Keys(), in.procs)
	for _, a := range in.actors {
		fmt.Fprintln(&b, a.sent, pending[a])
	}
	return b.String()
}

// interleave runs the scenario on a fresh cluster whose operator set
// nodeep-scrub: the runs that do not start take their holds first, one
// after the other; then the acting runs go, one command at a time, the
// i-th command the one of the choices[i]-th run that can go (the first
// when choices are used up) until a state not in seen after the choices
// is in seen.
func interleave(runs []run, choices []int, seen map[string]bool) *interleaving {
	in := &interleaving{m: newMonitor("nodeep-scrub"), procs: processes{}}
	for _, r := range runs {
		a := &actor{r: r, events: make(chan event), gate: make(chan bool)}
		q := in.procs.quiescer(nil, r.host, r.pid)
		q.cmds = in.m.Client(a.before)
		// The same keys in every execution, for its state.
		q.now = func() time.Time { return time.Unix(0, int64(r.pid)) }
		a.q = q
		if r.does == ends || r.does == "" {
			var err error
			if a.hold, err = q.Quiesce(); err != nil {
				in.errs = append(in.errs, err)
				return in
			}
		}
		in.actors = append(in.actors, a)
	}
	var waiting []*actor
	pending := map[*actor]string{}
	next := func(a *actor) {
		e := <-a.events
		switch {
		case !e.done:
			pending[a] = e.cmd
			return
		case e.err != nil:
			in.errs = append(in.errs, fmt.Errorf("%s/%d: %v", a.r.host, a.r.pid, e.err))
		}
		waiting = slices.DeleteFunc(waiting, func(w *actor) bool { return w == a })
		delete(pending, a)
		// A run that ended is a process that exited.
		in.procs[a.r.pid] = a.r.does == starts
		a.gated = false
	}
	for _, a := range in.actors {
		if a.r.does != "" {
			a.gated = true
			waiting = append(waiting, a)
			go a.act()
			next(a)
		}
	}
	for len(waiting) > 0 {
		i := 0
		if len(in.made) < len(choices) {
			i = choices[len(in.made)]
		} else if st := in.state(pending); seen[st] {
			in.pruned = true
			for len(waiting) > 0 {
				waiting[0].gate <- false
				next(waiting[0])
			}
			break
		} else {
			seen[st] = true
		}
		a := waiting[i]
		in.made = append(in.made, choice{of: len(waiting), chose: i})
		in.trace = append(in.trace, fmt.Sprintf("%s/%d %s", a.r.host, a.r.pid, pending[a]))
		a.sent = append(a.sent, in.sending(pending[a]))
		a.gate <- true
		next(a)
	}
	return in
}

// check says what is wrong with the cluster after an interleaving, or
// after the runs still holding the flags then end: "" if nothing.
func (in *interleaving) check() string {
	if err := errorsString(in.errs); err != "" {
		return err
	}
	var live []string
	for _, a := range in.actors {
		if a.r.does == "" || a.r.does == starts {
			live = append(live, a.hold.key)
		}
	}
	slices.Sort(live)
	if bad := in.wrong(live); bad != "" {
		return bad
	}
	for _, a := range in.actors {
		if a.r.does == "" || a.r.does == starts {
			if err := a.hold.Restore(); err != nil {
				return err.Error()
			}
		}
	}
	if bad := in.wrong(nil); bad != "" {
		return "once the other runs ended too, " + bad
	}
	return ""
}

func errorsString(errs []error) string {
	var s []string
	for _, err := range errs {
		s = append(s, err.Error())
	}
	return strings.Join(s, "; ")
}

// wrong says what is wrong with the cluster for the live runs' records:
// noscrub is set iff there are any, nodeep-scrub (the operator's) always
// is, and only their records are left (nothing of cephbench's, none).
func (in *interleaving) wrong(live []string) string {
	var want []string
	if len(live) > 0 {
		want = []string{"noscrub"}
	}
	want = append(want, "nodeep-scrub")
	var keys []string
	for k := range in.m.Keys() {
		if strings.HasPrefix(k, "cephbench/") && (len(live) == 0 || strings.HasPrefix(k, quiescePrefix)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if got := scrubFlags(in.m); !slices.Equal(got, want) || !slices.Equal(keys, live) {
		return fmt.Sprintf("scrub flags %v and keys %v, want %v and %v", got, keys, want, live)
	}
	return ""
}

// everyInterleaving runs every interleaving of the runs' commands (a
// depth-first walk over the choices, that stops at a state it has been
// in) and fails t at the first that leaves the cluster wrong, with its
// commands in order. It returns how many executions it ran.
func everyInterleaving(t *testing.T, runs []run) int {
	t.Helper()
	var choices []int
	seen := map[string]bool{}
	for n := 1; ; n++ {
		in := interleave(runs, choices, seen)
		if !in.pruned {
			if bad := in.check(); bad != "" {
				t.Fatalf("after these commands:\n%s\n%s", strings.Join(in.trace, "\n"), bad)
			}
		}
		i := len(in.made) - 1
		for i >= 0 && in.made[i].chose+1 == in.made[i].of {
			i--
		}
		if i < 0 {
			return n
		}
		choices = choices[:0]
		for _, c := range in.made[:i] {
			choices = append(choices, c.chose)
		}
		choices = append(choices, in.made[i].chose+1)
	}
}

// However the commands of runs that end and start at the same time
// interleave, noscrub ends set iff a run that has not ended holds it,
// only live runs' records are left, and once every run has ended the
// operator's flag alone is set and nothing of cephbench's is left in the
// config-key store.
func TestQuiesceEveryInterleaving(t *testing.T) {
	for _, c := range []struct {
		name string
		runs []run
	}{
		{"two runs end", []run{{"h1", 100, ends}, {"h1", 200, ends}}},
		{"two runs of two hosts end", []run{{"h1", 100, ends}, {"h2", 200, ends}}},
		{"two runs end beside a third", []run{{"h1", 100, ends}, {"h2", 200, ends}, {"h1", 300, ""}}},
		{"a run ends as another starts", []run{{"h1", 100, ends}, {"h2", 200, starts}}},
		{"a run ends as a short one starts and ends", []run{{"h1", 100, ends}, {"h1", 200, startsEnd}}},
		{"two runs start", []run{{"h1", 100, starts}, {"h2", 200, starts}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			n := everyInterleaving(t, c.runs)
			t.Logf("%d interleavings in %v", n, time.Since(start).Round(time.Millisecond))
		})
	}
}
