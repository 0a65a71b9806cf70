package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// --help and -h on every command, at every depth, print its usage on
// stdout and exit 0, whatever else the command line lacks.
func TestEveryCommandsHelpExitsZero(t *testing.T) {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.Name() != "help" && sub.Name() != "completion" {
				walk(sub, append(append([]string{}, path...), sub.Name()))
			}
		}
	}
	walk(newRoot(Env{}), nil)
	if len(paths) < 20 {
		t.Fatalf("%d commands found: %v", len(paths), paths)
	}
	for _, path := range paths {
		for _, flag := range []string{"--help", "-h"} {
			args := append(append([]string{}, path...), flag)
			code, out, errOut := cephbench(t, context.Background(), args...)
			if code != ExitOK || !strings.Contains(out, "Usage:") || errOut != "" {
				t.Errorf("cephbench %s: exit %d, stdout %q, stderr %q; want exit 0 and the usage on stdout", strings.Join(args, " "), code, firstLine(out), errOut)
			}
		}
	}
}
