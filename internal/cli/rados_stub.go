//go:build !ceph

package cli

import "github.com/spf13/cobra"

// newRadosCmd stands in for the RADOS commands in a build without Ceph's
// libraries, so the user learns how to get them rather than that the
// command does not exist.
func newRadosCmd(Env) *cobra.Command {
	return &cobra.Command{
		Use:                "rados",
		Short:              "RADOS benchmarks (this build has no Ceph support)",
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return usagef("this cephbench was built without Ceph support: build it with `make` (go build -tags ceph,pacific), which needs librados-dev")
		},
	}
}
