// Package cmdline reads command lines as the peer tools' users type them:
// it picks cephbench's own flags out of fio's (whose options and job files
// cobra must not read), takes long flags with one dash as Ceph's tools'
// users write them, and turns iperf's options into cephbench net's.
package cmdline

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
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

// OneDash rewrites each argument spelling a long flag with one dash
// (-no-cleanup, -run-name=x) as --name, so that a pflag command reads it
// as the flag rather than as a cluster of shorthands (-n o-cleanup). long
// says whether a name is one of the command's long flags; single letters
// stay shorthands. Arguments after "--" are left alone.
func OneDash(args []string, long func(name string) bool) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "--" {
			copy(out[i:], args[i:])
			break
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && len(name) > 1 && long(name) {
			a = "-" + a
		}
		out[i] = a
	}
	return out
}

// OneDashAnnotation marks a command whose long flags, and its
// subcommands', may be given with one dash, as users of Ceph's tools type
// them (rados -p rbd bench 30 seq -no-cleanup).
const OneDashAnnotation = "cephbench/one-dash-long-flags"

// OneDashFor is args, root's command line, with OneDash applied to the
// long flags of the command they run if it or a parent carries
// OneDashAnnotation.
func OneDashFor(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil {
		return args
	}
	for c := cmd; c != nil; c = c.Parent() {
		if _, ok := c.Annotations[OneDashAnnotation]; ok {
			return OneDash(args, func(n string) bool { return cmd.Flags().Lookup(n) != nil || cmd.InheritedFlags().Lookup(n) != nil })
		}
	}
	return args
}
