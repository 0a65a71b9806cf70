package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/engine"
)

func newCleanupCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "cleanup TARGET",
		Short: "Remove what cephbench created and kept (--keep) on a target, and nothing else",
		Long: `Remove the objects, images, files and buckets that cephbench created on
TARGET and left in place with --keep (or that a killed run left): a
dirobj:// directory's objects, a rados:// pool's benchmark objects, an
rbd://POOL/IMAGE image cephbench created, a cephfs:// directory's files, an
s3:// bucket's objects (and the bucket if cephbench made it). Anything
cephbench did not create stays.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := env.target(args[0])
			if err != nil {
				return err
			}
			if err := engine.CleanKept(cmd.Context(), t); err != nil {
				if engine.IsUsage(err) {
					return usageErr(err)
				}
				return failuref("%s: %w", args[0], err)
			}
			fmt.Fprintf(env.Stdout, "cleaned up %s\n", t)
			return nil
		},
	}
}
