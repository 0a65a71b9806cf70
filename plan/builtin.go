package plan

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed builtin/*.yaml
var builtins embed.FS

// Builtin returns the YAML of the built-in plan called name.
func Builtin(name string) ([]byte, bool) {
	b, err := builtins.ReadFile("builtin/" + name + ".yaml")
	return b, err == nil
}

// BuiltinNames lists the built-in plans shipped as YAML, sorted.
func BuiltinNames() []string {
	entries, _ := builtins.ReadDir("builtin")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// BuiltinSummary is what a list of the built-in plans says of one.
type BuiltinSummary struct {
	Name string
	// Steps is how many steps it runs, "?" when its variables cannot
	// be given placeholders.
	Steps string
	// Needs are the --set NAME=… its variables without a default need,
	// sorted.
	Needs []string
	// What is its description up to the first colon.
	What string
}

// BuiltinSummaries summarises the built-in plans, in BuiltinNames' order.
// An error is a built-in plan that does not parse.
func BuiltinSummaries() ([]BuiltinSummary, error) {
	var out []BuiltinSummary
	for _, name := range BuiltinNames() {
		b, _ := Builtin(name)
		p, err := Parse(name, b)
		if err != nil {
			return nil, err
		}
		s := BuiltinSummary{Name: name, Steps: "?"}
		set := map[string]string{}
		for k, v := range p.Vars {
			if v == "" {
				s.Needs = append(s.Needs, "--set "+k+"=…")
				set[k] = "x"
			}
		}
		if expanded, err := p.Expand(set); err == nil {
			s.Steps = fmt.Sprint(len(expanded.Items))
		}
		s.What, _, _ = strings.Cut(strings.TrimSpace(p.Description), ":")
		sort.Strings(s.Needs)
		out = append(out, s)
	}
	return out, nil
}
