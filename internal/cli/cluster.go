//go:build ceph

package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/engine/rados"
)

func newClusterCmd(env Env) *cobra.Command {
	var cf cephFlags
	var format string
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Print the Ceph cluster's state, as every result against Ceph records it",
		Long: `Health with its checks, mon/mgr/osd/mds counts, PG states, usage, pools
(size, min_size, pg_num, application, usage), the OSD tree and the daemons'
versions. Results of runs against Ceph embed this before and after the run.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if format != "text" && format != "json" {
				return usagef("invalid --format %q (want text or json)", format)
			}
			conn, err := rados.Connect(rados.Target{Conf: cf.conf, User: cf.id, Name: cf.name, Keyring: cf.keyring, Cluster: cf.cluster}, 0)
			if err != nil {
				return err
			}
			defer conn.Shutdown()
			s, err := cluster.Collect(conn)
			if err != nil {
				return err
			}
			if format == "json" {
				b, err := json.MarshalIndent(s, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(env.Stdout, "%s\n", b)
				return nil
			}
			s.Print(env.Stdout)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	return cmd
}
