//go:build !ceph

package cli

import "github.com/spf13/cobra"

// The Ceph commands, in a build without Ceph's libraries, tell the user how
// to get them rather than that they do not exist.
func newRadosCmd(Env) *cobra.Command { return withoutCeph("rados", "RADOS benchmarks") }

func newClusterCmd(Env) *cobra.Command { return withoutCeph("cluster", "the Ceph cluster's state") }

func newRBDCmd(Env) *cobra.Command { return withoutCeph("rbd", "RBD benchmarks") }

func withoutCeph(use, what string) *cobra.Command {
	const why = "this cephbench was built without Ceph support: build it with `make` (go build -tags ceph,pacific), which needs librados-dev and libradospp-dev"
	return &cobra.Command{
		Use:                use,
		Short:              what + " (this build has no Ceph support)",
		Long:               why,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Flags are not parsed, so that any command line gets why.
			if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
				return cmd.Help()
			}
			return usagef("%s", why)
		},
	}
}
