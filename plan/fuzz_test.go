package plan

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/internal/fuzztest"
	"github.com/cephbench/cephbench/internal/shellword"
)

// FuzzParse: a plan file is a plan or a one-line error naming the file;
// a plan expands (with sets, "--set" flags one a line) the same way each
// time, into items or a one-line error. Seeds: the built-in plans and the
// README's example.
func FuzzParse(f *testing.F) {
	for _, name := range BuiltinNames() {
		b, _ := Builtin(name)
		f.Add(b, "pool=bench\ndevice=/dev/sdb")
	}
	if b, err := os.ReadFile("../docs/side-by-side.yaml"); err == nil {
		f.Add(b, "pool=rbd\ndir=/mnt/x")
	}
	f.Add([]byte("name: x\nsteps:\n  - name: s\n    run: bench --target null://\n    repeats: 3\n"), "")
	f.Add([]byte("name: x\nrepeats: 1000000000\nsteps:\n  - name: s\n    run: bench --target null://\n"), "")
	f.Fuzz(func(t *testing.T, b []byte, sets string) {
		p, err := Parse("p.yaml", b)
		fuzztest.OneLine(t, b, err)
		if err != nil {
			return
		}
		set, err := ParseSets(strings.Split(sets, "\n"))
		if err != nil {
			return
		}
		set[PlanDir] = "/plans"
		first, err := p.Expand(set)
		fuzztest.OneLine(t, b, err)
		again, errAgain := p.Expand(set)
		if !reflect.DeepEqual(first, again) || (err == nil) != (errAgain == nil) || err != nil && err.Error() != errAgain.Error() {
			t.Fatalf("plan %q expands differently each time: %v, %v", b, err, errAgain)
		}
	})
}

// FuzzParseSets: --set flags are variables or a one-line error; each
// variable has the value of its last flag.
func FuzzParseSets(f *testing.F) {
	f.Add("pool=bench\ndevice=/dev/sdb")
	f.Add("seconds=10\nseconds=20\n=x")
	f.Add("a==b")
	f.Fuzz(func(t *testing.T, lines string) {
		flags := strings.Split(lines, "\n")
		vars, err := ParseSets(flags)
		fuzztest.OneLine(t, flags, err)
		if err != nil {
			return
		}
		last := map[string]string{}
		for _, flag := range flags {
			k, v, _ := strings.Cut(flag, "=")
			last[k] = v
		}
		if !reflect.DeepEqual(vars, last) {
			t.Fatalf("--set %q gave %q, not each name's last value", flags, vars)
		}
	})
}

// FuzzSplitArgs: a command line splits into words or a one-line error;
// the words, quoted for a shell, split back into themselves.
func FuzzSplitArgs(f *testing.F) {
	f.Add(`rados bench -p ${pool} 60 write -b 4M -t 16 --no-cleanup`)
	f.Add(`fio --name=x --filename="/mnt/a b" 'it''s' \"q\"`)
	f.Add("a\tb\nc \\")
	f.Fuzz(func(t *testing.T, line string) {
		args, err := SplitArgs(line)
		fuzztest.OneLine(t, line, err)
		if err != nil {
			return
		}
		back, err := SplitArgs(shellword.Join(args))
		if err != nil || !reflect.DeepEqual(back, args) && len(args)+len(back) > 0 {
			t.Fatalf("SplitArgs(%q) = %q; quoted (%s) they split into %q, %v", line, args, shellword.Join(args), back, err)
		}
	})
}

// A mistyped repeats: or a sweep of many keys is refused at once, in one
// line naming the step, rather than expanded until memory runs out.
func TestAPlanOfTooManyStepsIsRefused(t *testing.T) {
	sweep := "{"
	for i := range 40 {
		sweep += fmt.Sprintf("k%d: [a, b], ", i)
	}
	for _, step := range []string{"repeats: 1000000000", "sweep: " + sweep + "}"} {
		p, err := Parse("p.yaml", []byte("name: big\nsteps:\n  - name: s\n    run: bench --target null://\n    "+step+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Expand(nil)
		if err == nil || !strings.Contains(err.Error(), "step s: the plan would have more than 10000 steps") {
			t.Errorf("%s: %v; want the plan refused for its size", step, err)
		}
	}
	ok := []byte("name: ok\nrepeats: 100\nsteps:\n  - name: s\n    run: bench --target null:// --bs ${bs} --iodepth ${iodepth}\n    sweep: {bs: [4k, 8k], iodepth: [1, 2, 4, 8, 16]}\n")
	p, err := Parse("p.yaml", ok)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := p.Expand(nil); err != nil || len(e.Items) != 1000 {
		t.Errorf("a plan of 1000 steps: %v", err)
	}
}
