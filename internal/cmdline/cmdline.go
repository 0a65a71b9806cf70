// Package cmdline picks flags out of command lines that are not parsed as
// flags: fio's, whose options and job files cobra must not read, can
// still carry cephbench's own flags.
package cmdline

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// Take sets the flags of fl that args holds, as --name=value, --name
// value, or with one dash (fio's spelling), a boolean flag's value being
// optional with '='; it returns the other arguments, in order. An error
// (a flag without its value, a value the flag refuses) is one line naming
// the flag. Take does no I/O.
func Take(fl *pflag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		f := fl.Lookup(name)
		if !strings.HasPrefix(args[i], "-") || f == nil {
			rest = append(rest, args[i])
			continue
		}
		if !hasValue && f.Value.Type() == "bool" {
			value, hasValue = "true", true
		}
		if !hasValue {
			if i++; i == len(args) {
				return nil, fmt.Errorf("--%s needs a value", name)
			}
			value = args[i]
		}
		if err := f.Value.Set(value); err != nil {
			return nil, fmt.Errorf("--%s: %v", name, err)
		}
	}
	return rest, nil
}
