package fiojob

import (
	goflag "flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = goflag.Bool("update", false, "rewrite the README's list of fio options from the code's classes")

const (
	readmePath  = "../../../README.md"
	readmeBegin = "<!-- fio options: generated from internal/peer/fiojob's classes by `go test ./internal/peer/fiojob -run TestREADME -update`; do not edit -->\n"
	readmeEnd   = "<!-- end of the fio options -->\n"
)

// optionsList is the README's list of fio's options by class.
func optionsList() string {
	var b strings.Builder
	code := func(names []string) string {
		slices.Sort(names)
		return "`" + strings.Join(names, "`, `") + "`"
	}
	sorted := slices.SortedFunc(slices.Values(table), func(a, b option) int { return strings.Compare(a.name, b.name) })
	var supported []string
	for _, o := range sorted {
		s := "`" + o.name + "`"
		if o.alias != "" {
			s += " (`" + o.alias + "`)"
		}
		supported = append(supported, s)
	}
	fmt.Fprintf(&b, "- **Supported** (%d): %s.\n", len(supported), strings.Join(supported, ", "))
	var only []string
	for _, m := range matching {
		only = append(only, m.name+"="+strings.Join(m.values, "|"))
	}
	fmt.Fprintf(&b, "- **Taken with the value that describes what cephbench does** (another value is refused): %s.\n", code(only))
	fmt.Fprintf(&b, "- **Accepted, changing nothing** (they tune only fio itself; a run names those it was given in one line on stderr): %s.\n",
		code(slices.Collect(maps.Keys(noops))))
	byWhy := map[string][]string{}
	for n, why := range refused {
		byWhy[why] = append(byWhy[why], n)
	}
	fmt.Fprintf(&b, "- **Refused** (%d), one line naming the option and why:\n", len(refused))
	for _, why := range slices.Sorted(maps.Keys(byWhy)) {
		fmt.Fprintf(&b, "  - %s: %s.\n", why, code(byWhy[why]))
	}
	return b.String()
}

// The README lists the fio options as the code classes them.
func TestREADMEListsTheOptionClasses(t *testing.T) {
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	before, rest, ok1 := strings.Cut(readme, readmeBegin)
	listed, after, ok2 := strings.Cut(rest, readmeEnd)
	if !ok1 || !ok2 {
		t.Fatalf("README.md has no list of fio options between %q and %q", readmeBegin, readmeEnd)
	}
	want := optionsList()
	if listed == want {
		return
	}
	if *update {
		if err := os.WriteFile(readmePath, []byte(before+readmeBegin+want+readmeEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's list of fio options differs from the code's classes; regenerate it with\n\tgo test ./internal/peer/fiojob -run TestREADME -update")
}
