package plan

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
)

const sample = `
name: sample
vars:
  pool: ""
  secs: "5"
repeats: 2
pause: 3s
targets:
  - name: a
    target: rados://${pool}
  - name: b
    target: /tmp/dir
steps:
  - name: write
    run: rados bench -p ${pool} ${secs} write --no-cleanup
  - name: read
    run: rados bench -p ${pool} ${secs} seq
    requires: [write]
    repeats: 1
    pause: 1s
  - name: rr
    workload: {rw: randread, bs: 4k, threads: 2, direct: true, verify: false}
    sweep: {bs: [4k, 64k], qd: [1, 8]}
    targets: [b]
cleanup:
  - rados cleanup -p ${pool}
  - cleanup ${target}
`

func TestExpandOrdersStepsSweepsTargetsRepeats(t *testing.T) {
	p, err := Parse("sample.yaml", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	expanded, err := p.Expand(map[string]string{"pool": "bench"})
	if err != nil {
		t.Fatal(err)
	}
	items := expanded.Items
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	want := []string{
		"write #1", "write #2", "read #1",
		"rr bs=4k qd=1 @b #1", "rr bs=4k qd=1 @b #2", "rr bs=4k qd=8 @b #1", "rr bs=4k qd=8 @b #2",
		"rr bs=64k qd=1 @b #1", "rr bs=64k qd=1 @b #2", "rr bs=64k qd=8 @b #1", "rr bs=64k qd=8 @b #2",
	}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("items:\n%q\nwant\n%q", ids, want)
	}
	if got := strings.Join(items[0].Args, " "); got != "rados bench -p bench 5 write --no-cleanup" {
		t.Errorf("write's command line: %q", got)
	}
	if items[0].Pause != 3*time.Second || items[2].Pause != time.Second {
		t.Errorf("pauses %v and %v; want the plan's 3s and the step's 1s", items[0].Pause, items[2].Pause)
	}
	if !reflect.DeepEqual(items[2].Requires, []string{"write #2"}) {
		t.Errorf("read requires %q; want the last write", items[2].Requires)
	}
	rr := items[9]
	wantArgs := "bench --target /tmp/dir --name rr bs=64k qd=8 --rw randread --bs 64k --workers 2 --direct --iodepth 8"
	if got := strings.Join(rr.Args, " "); got != wantArgs {
		t.Errorf("sweep point's command line:\n%s\nwant\n%s", got, wantArgs)
	}
	if rr.Step != "rr bs=64k qd=8" || rr.Target != "b" || rr.Repeat != 1 || rr.Of != 2 || rr.Params["qd"] != "8" {
		t.Errorf("placing %+v", rr.PlanStep)
	}
	var lines []string
	for _, c := range expanded.Cleanup {
		lines = append(lines, strings.Join(c, " "))
	}
	if want := []string{"rados cleanup -p bench", "cleanup rados://bench", "cleanup /tmp/dir"}; !reflect.DeepEqual(lines, want) {
		t.Errorf("cleanup %q; want %q", lines, want)
	}
}

func TestPlanErrorsNameTheProblem(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		set        map[string]string
		want       string
	}{
		{"unknown key", "name: x\nsteps:\n  - name: a\n    rnu: bench\n", nil, "line 4: field rnu not found"},
		{"no name", "steps:\n  - name: a\n    run: bench\n", nil, "no name"},
		{"no steps", "name: x\n", nil, "no steps"},
		{"required var", "name: x\nvars: {pool: \"\"}\nsteps:\n  - name: a\n    run: rados bench -p ${pool} 1 write\n", nil, "needs --set pool=VALUE"},
		{"unknown --set", "name: x\nsteps:\n  - name: a\n    run: bench\n", map[string]string{"poool": "x"}, `no variable "poool"`},
		{"unknown var", "name: x\nsteps:\n  - name: a\n    run: bench ${nope}\n", nil, "unknown variable ${nope}"},
		{"run and workload", "name: x\ntargets: [{name: t, target: null://}]\nsteps:\n  - name: a\n    run: bench\n    workload: {bs: 4k}\n", nil, "either run:"},
		{"unknown target", "name: x\ntargets: [{name: t, target: null://}]\nsteps:\n  - name: a\n    workload: {bs: 4k}\n    targets: [u]\n", nil, `unknown target "u"`},
		{"unused sweep", "name: x\nsteps:\n  - name: a\n    run: bench --bs 4k\n    sweep: {bs: [4k, 8k]}\n", nil, "does not use ${bs}"},
		{"bad pause", "name: x\npause: soon\nsteps:\n  - name: a\n    run: bench\n", nil, "pause"},
		{"requires later", "name: x\nsteps:\n  - name: a\n    run: bench\n    requires: [b]\n  - name: b\n    run: bench\n", nil, `requires "b"`},
		{"unterminated quote", "name: x\nsteps:\n  - name: a\n    run: bench --name 'x\n", nil, "unterminated"},
		{"workload without targets", "name: x\nsteps:\n  - name: a\n    workload: {bs: 4k}\n", nil, "needs a target"},
	} {
		p, err := Parse("p.yaml", []byte(c.yaml))
		if err == nil {
			_, err = p.Expand(c.set)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", c.name, err, c.want)
		}
	}
}

func TestSplitArgsIsTheShellsWordSplitting(t *testing.T) {
	for in, want := range map[string][]string{
		`fio --name=a  --bs=4k`:              {"fio", "--name=a", "--bs=4k"},
		`compare a b --fail-if 'iops < -5%'`: {"compare", "a", "b", "--fail-if", "iops < -5%"},
		`x "a \"b\" c" d\ e ''`:              {"x", `a "b" c`, "d e", ""},
	} {
		got, err := SplitArgs(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestBuiltinPlansExpand(t *testing.T) {
	names := BuiltinNames()
	if want := []string{"baseline", "rados-rbd", "ssd-qualification"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("built-in plans %q; want %q", names, want)
	}
	counts := map[string]int{"baseline": 13, "rados-rbd": 8, "ssd-qualification": 18}
	for _, name := range names {
		b, _ := Builtin(name)
		p, err := Parse(name, b)
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]string{}
		for k, v := range p.Vars {
			if v == "" {
				set[k] = "x"
			}
		}
		expanded, err := p.Expand(set)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(expanded.Items) != counts[name] {
			t.Errorf("%s: %d steps; want %d", name, len(expanded.Items), counts[name])
		}
	}
}

func TestTheDocumentedExamplePlanExpands(t *testing.T) {
	b, err := os.ReadFile("../docs/side-by-side.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("side-by-side.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	expanded, err := p.Expand(map[string]string{"pool": "rbd", "dir": "/var/tmp/x"})
	if err != nil {
		t.Fatal(err)
	}
	items := expanded.Items
	// 3 steps x 3 targets x 3 repeats.
	if len(items) != 27 || items[26].ID != "randread-4K @local #3" {
		t.Errorf("%d steps, the last %q", len(items), items[len(items)-1].ID)
	}
}

// The variables of a target's location are those its engine names.
func init() {
	engine.Register("planimage", engine.Func(func(context.Context, *spec.Workload) (engine.Session, error) {
		return nil, engine.Usagef("not opened by plans")
	}), engine.Description{Syntax: "planimage://POOL/IMAGE", LocationNames: []string{"pool", "image"}})
}

func TestTargetLocationVariablesAreTheEngines(t *testing.T) {
	const src = `
name: x
targets:
  - {name: a, target: "planimage://bench/disk1?create=true"}
  - {name: b, target: "planimage://other/disk2"}
steps:
  - name: tool
    run: tool ${pool} ${image} ${path}
cleanup:
  - forget ${image}
`
	p, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	expanded, err := p.Expand(nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, it := range expanded.Items {
		lines = append(lines, strings.Join(it.Args, " "))
	}
	for _, c := range expanded.Cleanup {
		lines = append(lines, strings.Join(c, " "))
	}
	// A step or cleanup line that uses ${pool} or ${image} runs once per
	// target, with the parts the target's engine names.
	want := []string{"tool bench disk1 bench/disk1", "tool other disk2 other/disk2", "forget disk1", "forget disk2"}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("command lines %q; want %q", lines, want)
	}
}
