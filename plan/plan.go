// Package plan reads test plans: YAML files naming targets, steps
// (cephbench command lines or workloads), parameter sweeps, repeats and
// pauses, and expands them into the ordered list of steps a run executes.
// It does no I/O beyond reading the plan; running the steps is the CLI's.
package plan

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// Plan is a test plan as written.
type Plan struct {
	Name        string `yaml:"name,omitempty"`
	Description string `yaml:"description,omitempty"`
	// Vars are the plan's variables and their defaults; an empty default
	// makes the variable required (set with --set NAME=VALUE). Every plan
	// also has ${plan_dir} (PlanDir), set by the caller.
	Vars map[string]string `yaml:"vars,omitempty"`
	// Repeats is how many times each step runs by default (1).
	Repeats int `yaml:"repeats,omitempty"`
	// Pause is the default wait after each step, to let the cluster settle.
	Pause   string   `yaml:"pause,omitempty"`
	Targets []Target `yaml:"targets,omitempty"`
	Steps   []Step   `yaml:"steps,omitempty"`
	// Cleanup are command lines run at the end whatever happened (after a
	// failure or Ctrl-C too), e.g. "rados cleanup -p ${pool}".
	Cleanup []string `yaml:"cleanup,omitempty"`
}

// Target is a named place to measure: a local path, a block device, or
// SCHEME://LOCATION.
type Target struct {
	Name   string `yaml:"name,omitempty"`
	Target string `yaml:"target,omitempty"`
}

// Step is one test: a cephbench command line (Run) or a workload (bench
// flags), run on some or all of the targets, for each combination of the
// sweep's values, Repeats times.
type Step struct {
	Name string `yaml:"name,omitempty"`
	// Run is a cephbench command line without "cephbench", for example
	// "rados bench -p ${pool} 60 write --no-cleanup" or "fio jobs.fio".
	Run string `yaml:"run,omitempty"`
	// Workload is the flags of "cephbench bench" (rw, bs, iodepth,
	// workers, size, duration, direct, ...); the step runs it on each
	// target.
	Workload Params `yaml:"workload,omitempty"`
	// Targets names the targets the step runs on; by default all of them
	// when it is a workload or its command uses a target variable, none
	// otherwise.
	Targets []string `yaml:"targets,omitempty"`
	// Sweep gives values to try: each combination is its own step. A
	// workload's sweep keys are bench flags; a command's are variables
	// it uses.
	Sweep   Params `yaml:"sweep,omitempty"`
	Repeats int    `yaml:"repeats,omitempty"`
	Pause   string `yaml:"pause,omitempty"`
	// Requires names earlier steps whose effects this one needs (reads of
	// objects a write left): a resumed run redoes the last of them first.
	Requires []string `yaml:"requires,omitempty"`
}

// Params are key: value or key: [values] pairs in the order written.
type Params []Param

// Param is one key with its values.
type Param struct {
	Key    string
	Values []string
}

// UnmarshalYAML keeps the mapping's order, which is the sweep's order.
func (p *Params) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want key: value pairs", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		param := Param{Key: k.Value}
		switch v.Kind {
		case yaml.ScalarNode:
			param.Values = []string{v.Value}
		case yaml.SequenceNode:
			for _, e := range v.Content {
				if e.Kind != yaml.ScalarNode {
					return fmt.Errorf("line %d: %s: want a list of values", e.Line, k.Value)
				}
				param.Values = append(param.Values, e.Value)
			}
			if len(param.Values) == 0 {
				return fmt.Errorf("line %d: %s: empty list", v.Line, k.Value)
			}
		default:
			return fmt.Errorf("line %d: %s: want a value or a list of values", v.Line, k.Value)
		}
		*p = append(*p, param)
	}
	return nil
}

// MarshalYAML writes the pairs back in order.
func (p Params) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, param := range p {
		v := &yaml.Node{Kind: yaml.ScalarNode, Value: param.Values[0]}
		if len(param.Values) > 1 {
			v = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, x := range param.Values {
				v.Content = append(v.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: x})
			}
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: param.Key}, v)
	}
	return n, nil
}

// Parse reads a plan; name is used in error messages. Unknown keys are
// errors, so a misspelt field does not silently do nothing.
func Parse(name string, b []byte) (*Plan, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %s", name, yamlError(err))
	}
	if p.Name == "" {
		return nil, fmt.Errorf("%s: the plan has no name", name)
	}
	if len(p.Steps) == 0 {
		return nil, fmt.Errorf("%s: the plan has no steps", name)
	}
	return &p, nil
}

// yamlError is a decoding error on one line: the YAML decoder puts each
// field's error on a line of its own, and quotes keys as written, line
// breaks included.
func yamlError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msg = strings.Join(te.Errors, "; ")
	}
	return strings.Join(strings.Fields(msg), " ")
}

// Expanded is a plan with its variables set: what a run executes.
type Expanded struct {
	// Items are the steps in the order they run.
	Items []Item
	// Cleanup are the command lines run at the end, whatever happened.
	Cleanup [][]string
}

// Item is one step of a run: one command line, on one target, with one
// set of sweep values, one repeat.
type Item struct {
	// ID is stable across runs of the same plan and variables; a resumed
	// run matches finished steps by it.
	ID string
	result.PlanStep
	// Args is the cephbench command line (without "cephbench").
	Args []string
	// Pause is the wait after this item, unless it is the last.
	Pause time.Duration
	// Requires are the IDs of the earlier items a resumed run must redo
	// before this one.
	Requires []string
}

// PlanDir is the variable that holds the directory of the plan file, so a
// step can name a job file beside it: "fio ${plan_dir}/randread.fio".
const PlanDir = "plan_dir"

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Expand turns the plan into its items and cleanup command lines, with the
// variables set (set overrides the plan's defaults). It fails, naming the step, on an unknown
// or unset variable, an unknown target, a sweep key the step does not use,
// a bad pause, or a command line it cannot split.
func (p *Plan) Expand(set map[string]string) (*Expanded, error) {
	vars, err := p.setVars(set)
	if err != nil {
		return nil, err
	}
	defPause, err := parsePause(p.Pause, vars)
	if err != nil {
		return nil, fmt.Errorf("plan %s: pause: %w", p.Name, err)
	}
	targets, err := p.resolveTargets(vars)
	if err != nil {
		return nil, err
	}
	e := &expansion{p: p, vars: vars, targets: targets, pause: defPause, ids: map[string]bool{}, lastOf: map[string]map[string]string{}}
	for si, st := range p.Steps {
		if err := e.add(si, st); err != nil {
			return nil, err
		}
	}
	cleanup, err := p.cleanupArgs(vars)
	if err != nil {
		return nil, err
	}
	return &Expanded{Items: e.items, Cleanup: cleanup}, nil
}

// setVars returns the plan's variables with set applied, every one of
// them given a value.
func (p *Plan) setVars(set map[string]string) (map[string]string, error) {
	vars := map[string]string{}
	for k, v := range p.Vars {
		vars[k] = v
	}
	for _, k := range sortedKeys(set) { // the same error each time for the same flags
		v := set[k]
		if _, ok := p.Vars[k]; !ok && k != PlanDir {
			return nil, fmt.Errorf("plan %s has no variable %q (it has: %s)", p.Name, k, strings.Join(sortedKeys(p.Vars), ", "))
		}
		vars[k] = v
	}
	for _, k := range sortedKeys(vars) {
		if vars[k] == "" {
			return nil, fmt.Errorf("plan %s needs --set %s=VALUE", p.Name, k)
		}
	}
	return vars, nil
}

// resolveTargets returns the plan's targets by name, their variables set
// and their URLs checked.
func (p *Plan) resolveTargets(vars map[string]string) (map[string]Target, error) {
	targets := map[string]Target{}
	for i, t := range p.Targets {
		if t.Name == "" || t.Target == "" {
			return nil, fmt.Errorf("plan %s: target %d needs a name and a target", p.Name, i+1)
		}
		if _, dup := targets[t.Name]; dup {
			return nil, fmt.Errorf("plan %s: two targets named %q", p.Name, t.Name)
		}
		loc, err := substitute(t.Target, vars)
		if err != nil {
			return nil, fmt.Errorf("plan %s: target %s: %w", p.Name, t.Name, err)
		}
		if _, err := spec.ParseTarget(loc); err != nil {
			return nil, fmt.Errorf("plan %s: target %s: %w", p.Name, t.Name, err)
		}
		targets[t.Name] = Target{Name: t.Name, Target: loc}
	}
	return targets, nil
}

// expansion is the state of Expand across the plan's steps.
type expansion struct {
	p       *Plan
	vars    map[string]string
	targets map[string]Target
	pause   time.Duration // the plan's default
	items   []Item
	ids     map[string]bool
	lastOf  map[string]map[string]string // step name → target → last item's ID
}

// add expands step st (the si-th, from 0) into its items: one per sweep
// point, target and repeat.
func (e *expansion) add(si int, st Step) error {
	var err error
	name := st.Name
	if name == "" {
		return fmt.Errorf("plan %s: step %d has no name", e.p.Name, si+1)
	}
	where := fmt.Sprintf("plan %s: step %s", e.p.Name, name)
	if (st.Run == "") == (len(st.Workload) == 0) {
		return fmt.Errorf("%s: give either run: (a command line) or workload: (bench flags)", where)
	}
	pause := e.pause
	if st.Pause != "" {
		if pause, err = parsePause(st.Pause, e.vars); err != nil {
			return fmt.Errorf("%s: pause: %w", where, err)
		}
	}
	repeats := st.Repeats
	if repeats == 0 {
		repeats = max(e.p.Repeats, 1)
	}
	if repeats < 0 {
		return fmt.Errorf("%s: repeats must be positive", where)
	}
	for _, r := range st.Requires {
		if e.lastOf[r] == nil {
			return fmt.Errorf("%s: requires %q, which is not an earlier step", where, r)
		}
	}
	onTargets, err := stepTargets(e.p, st, e.targets)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err := e.checkSize(st.Sweep, len(onTargets), repeats); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	for _, point := range combinations(st.Sweep) {
		label := name
		for _, kv := range point {
			label += " " + kv.Key + "=" + kv.Values[0]
		}
		for _, t := range onTargets {
			args, err := st.command(label, point, t, e.vars)
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			for r := 1; r <= repeats; r++ {
				it := Item{
					PlanStep: result.PlanStep{Step: label, Target: t.Name, Params: paramMap(point), Repeat: r, Of: repeats},
					Args:     args, Pause: pause,
				}
				it.ID = label
				if t.Name != "" {
					it.ID += " @" + t.Name
				}
				it.ID += fmt.Sprintf(" #%d", r)
				if e.ids[it.ID] {
					return fmt.Errorf("%s: two steps would be %q: give them different names", where, it.ID)
				}
				e.ids[it.ID] = true
				for _, req := range st.Requires {
					if id, ok := e.lastOf[req][t.Name]; ok {
						it.Requires = append(it.Requires, id)
					}
				}
				e.items = append(e.items, it)
				if e.lastOf[name] == nil {
					e.lastOf[name] = map[string]string{}
				}
				e.lastOf[name][t.Name] = it.ID
			}
		}
	}
	return nil
}

// MaxItems is the most steps a plan expands into: more than a run could
// finish (at a second each, close to three hours), and a bound on the
// memory a mistyped repeats: or sweep takes before anything runs.
const MaxItems = 10000

// checkSize refuses a step whose sweep, targets and repeats would take the
// plan past MaxItems, before they are expanded.
func (e *expansion) checkSize(sweep Params, targets, repeats int) error {
	n := min(repeats, MaxItems+1) * targets
	for _, kv := range sweep {
		n = min(n, MaxItems+1) * len(kv.Values)
	}
	if len(e.items)+n > MaxItems {
		return fmt.Errorf("the plan would have more than %d steps (sweep values x targets x repeats)", MaxItems)
	}
	return nil
}

// cleanupArgs returns the plan's cleanup command lines with the variables
// set; a cleanup line that uses a target variable runs once per target.
func (p *Plan) cleanupArgs(vars map[string]string) ([][]string, error) {
	var out [][]string
	for _, line := range p.Cleanup {
		var on []Target
		if usesTarget(line, p.Vars) {
			for _, t := range p.Targets {
				loc, err := substitute(t.Target, vars)
				if err != nil {
					return nil, err
				}
				on = append(on, Target{Name: t.Name, Target: loc})
			}
		} else {
			on = []Target{{}}
		}
		for _, t := range on {
			s, err := substitute(line, withTarget(vars, t))
			if err != nil {
				return nil, fmt.Errorf("plan %s: cleanup %q: %w", p.Name, line, err)
			}
			args, err := SplitArgs(s)
			if err != nil {
				return nil, fmt.Errorf("plan %s: cleanup %q: %w", p.Name, line, err)
			}
			out = append(out, args)
		}
	}
	return out, nil
}

func stepTargets(p *Plan, st Step, targets map[string]Target) ([]Target, error) {
	if len(st.Targets) > 0 {
		var out []Target
		for _, n := range st.Targets {
			t, ok := targets[n]
			if !ok {
				return nil, fmt.Errorf("unknown target %q", n)
			}
			out = append(out, t)
		}
		return out, nil
	}
	if len(st.Workload) > 0 || usesTarget(st.Run, p.Vars) {
		if len(p.Targets) == 0 {
			return nil, errors.New("it needs a target and the plan has none")
		}
		out := make([]Target, 0, len(p.Targets))
		for _, t := range p.Targets {
			out = append(out, targets[t.Name])
		}
		return out, nil
	}
	return []Target{{}}, nil
}

// targetVars are the variables every target gives a step.
var targetVars = []string{"target", "target_name", "path"}

// usesTarget says whether s uses a target's variable: one of targetVars,
// or a part of a location that an engine names, that the plan does not
// define itself (a plan's own ${pool} is its own).
func usesTarget(s string, planVars map[string]string) bool {
	for _, m := range varRef.FindAllStringSubmatch(s, -1) {
		if _, own := planVars[m[1]]; own {
			continue
		}
		if slices.Contains(targetVars, m[1]) || slices.Contains(locationNames(), m[1]) {
			return true
		}
	}
	return false
}

// locationNames are the names the registered engines give the parts of
// their targets' locations.
func locationNames() []string {
	var names []string
	for _, scheme := range engine.Schemes() {
		d, _ := engine.Describe(scheme)
		names = append(names, d.LocationNames...)
	}
	return names
}

// withTarget adds t's variables: target (as written), target_name, path
// (the location: a directory, file, device or CephFS path), and the parts
// of the location its engine names (pool and image of rbd://POOL/IMAGE);
// the plan's own variables of the same names win.
func withTarget(vars map[string]string, t Target) map[string]string {
	if t.Target == "" {
		return vars
	}
	out := map[string]string{"target": t.Target, "target_name": t.Name}
	tt, _ := spec.ParseTarget(t.Target)
	loc, _, _ := strings.Cut(tt.Location, "?")
	out["path"] = loc
	if d, err := engine.Describe(tt.Scheme); err == nil {
		parts := strings.SplitN(loc, "/", len(d.LocationNames)+1)
		for i, name := range d.LocationNames {
			if i < len(parts) {
				out[name] = parts[i]
			}
		}
	}
	for k, v := range vars {
		out[k] = v
	}
	return out
}

// command builds the step's command line for one sweep point and target.
func (st Step) command(label string, point []Param, t Target, vars map[string]string) ([]string, error) {
	vars = withTarget(vars, t)
	if len(st.Workload) > 0 {
		flags := Params{}
		for _, kv := range st.Workload {
			flags = setParam(flags, flagName(kv.Key), kv.Values[0])
		}
		for _, kv := range point {
			flags = setParam(flags, flagName(kv.Key), kv.Values[0])
		}
		args := []string{"bench", "--target", t.Target, "--name", label}
		for _, kv := range flags {
			v, err := substitute(kv.Values[0], vars)
			if err != nil {
				return nil, err
			}
			switch strings.ToLower(v) {
			case "true", "yes":
				args = append(args, "--"+kv.Key)
			case "false", "no":
			default:
				args = append(args, "--"+kv.Key, v)
			}
		}
		return args, nil
	}
	local := map[string]string{}
	for k, v := range vars {
		local[k] = v
	}
	for _, kv := range point {
		if !strings.Contains(st.Run, "${"+kv.Key+"}") {
			return nil, fmt.Errorf("sweeps %s but its command does not use ${%s}", kv.Key, kv.Key)
		}
		local[kv.Key] = kv.Values[0]
	}
	s, err := substitute(st.Run, local)
	if err != nil {
		return nil, err
	}
	args, err := SplitArgs(s)
	if err != nil {
		return nil, err
	}
	if len(args) > 0 && args[0] == "cephbench" {
		args = args[1:]
	}
	if len(args) == 0 {
		return nil, errors.New("empty command")
	}
	if args[0] == "bench" && !hasFlag(args, "--name") {
		// Its result is the step's, not one called "bench".
		args = append(args, "--name", label)
	}
	return args, nil
}

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// flagAliases are the names people use for bench's flags.
var flagAliases = map[string]string{
	"numjobs": "workers", "threads": "workers", "jobs": "workers",
	"qd": "iodepth", "queue_depth": "iodepth", "queue-depth": "iodepth",
	"block_size": "bs", "blocksize": "bs", "read_percent": "rwmixread", "runtime": "duration",
}

func flagName(k string) string {
	if a, ok := flagAliases[k]; ok {
		return a
	}
	return strings.ReplaceAll(k, "_", "-")
}

func setParam(ps Params, k, v string) Params {
	for i := range ps {
		if ps[i].Key == k {
			ps[i].Values = []string{v}
			return ps
		}
	}
	return append(ps, Param{Key: k, Values: []string{v}})
}

// combinations is the cartesian product of the sweep's values, the last
// key changing fastest; one empty point when there is no sweep.
func combinations(sweep Params) [][]Param {
	points := [][]Param{{}}
	for _, kv := range sweep {
		var next [][]Param
		for _, p := range points {
			for _, v := range kv.Values {
				q := append(append([]Param{}, p...), Param{Key: kv.Key, Values: []string{v}})
				next = append(next, q)
			}
		}
		points = next
	}
	return points
}

func paramMap(point []Param) map[string]string {
	if len(point) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, kv := range point {
		m[kv.Key] = kv.Values[0]
	}
	return m
}

// substitute replaces ${NAME} with its value; an unknown name is an error.
func substitute(s string, vars map[string]string) (string, error) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("unknown variable ${%s}", missing[0])
	}
	return out, nil
}

func parsePause(s string, vars map[string]string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	s, err := substitute(s, vars)
	if err != nil {
		return 0, err
	}
	d, err := spec.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return time.Duration(d), nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// SplitArgs splits a command line as a POSIX shell would for words:
// whitespace separates, single quotes keep everything, double quotes keep
// everything but a backslash-escaped " or \, and a backslash outside quotes
// escapes the next character. No expansion of any kind.
func SplitArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated ' in command line")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New(`unterminated " in command line`)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args, nil
}

// ParseSets reads --set flags, each NAME=VALUE, into a plan's variables;
// a flag without a name or "=" is an error naming it.
func ParseSets(sets []string) (map[string]string, error) {
	vars := map[string]string{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid --set %q (want NAME=VALUE)", s)
		}
		vars[k] = v
	}
	return vars, nil
}
