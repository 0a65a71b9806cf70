package plan

import (
	"embed"
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
