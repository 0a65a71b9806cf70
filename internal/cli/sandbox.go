package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/internal/shellword"
	"github.com/cephbench/cephbench/sandbox"
	"github.com/cephbench/cephbench/spec"
)

func newSandboxCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Start and stop a throwaway Ceph cluster on this host, for trying cephbench and for tests",
		Long: `A throwaway real Ceph cluster on this host, for trying cephbench and for
tests. It is NOT for data: its OSDs are small sparse files (bluestore) or RAM
(memstore), and "sandbox down --purge" deletes it all.

It runs the installed Debian daemons (apt-get install ceph-mon ceph-mgr
ceph-osd ceph-common, plus ceph-mds for --mds and radosgw for --rgw) as the
current user, on 127.0.0.1 only, on free ports, with everything (ceph.conf,
keyrings, data, logs, pid files, admin sockets) in one folder, so several
sandboxes can run side by side. The pool "cephbench" is there for clients.`,
		Example: `  eval "$(cephbench sandbox up --mds --rgw)"
  cephbench sandbox status
  cephbench sandbox down --purge`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newSandboxUpCmd(env), newSandboxStatusCmd(env), newSandboxDownCmd(env), newSandboxEnvCmd(env))
	return cmd
}

func dirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "dir", sandbox.DefaultDir, "the sandbox's folder")
}

func newSandboxUpCmd(env Env) *cobra.Command {
	var (
		o       sandbox.Options
		osdSize = spec.Size(4 << 30)
	)
	cmd := &cobra.Command{
		Use:   "up [--dir D] [--osds N] [--store bluestore|memstore] [--mds] [--rgw]",
		Short: "Start a sandbox cluster and wait until it is healthy",
		Long: `Start a throwaway cluster (for trying cephbench and for tests, not for data)
in a new or empty folder and wait until it is healthy: every OSD up and in,
every PG active+clean, the MDS active and radosgw answering when asked for,
and health OK but for warnings about clients' untagged pools or a busy host.

Prints shell exports on stdout (as "sandbox env" does), so that
  eval "$(cephbench sandbox up)"
points ceph, rados and cephbench at it; progress goes to stderr. With --rgw
the S3 user's keys are in D/rgw-user.json too.

A folder that already holds a sandbox, running or not, is refused (exit 2).
If a step fails the daemons are stopped and the folder is kept with their
logs; Ctrl-C stops the daemons and removes what was created.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.OSDs < 1 {
				return usagef("--osds %d: want 1 to 16", o.OSDs)
			}
			o.OSDSize = int64(osdSize)
			o.Progress = env.Stderr
			ctx := cmd.Context()
			c, err := sandbox.Up(ctx, o)
			switch {
			case errors.Is(err, sandbox.ErrRefused):
				return usageErr(err)
			case err != nil && ctx.Err() != nil:
				fmt.Fprintln(env.Stderr, "interrupted: stopped the daemons it had started and removed what it had created")
				return errInterrupted
			case err != nil:
				dir := o.Dir
				if dir == "" {
					dir = sandbox.DefaultDir
				}
				fmt.Fprintf(env.Stderr, "%v\n", err)
				return failuref("sandbox up failed and its daemons are stopped; logs are in %s; \"cephbench sandbox down --purge --dir %s\" removes it",
					filepath.Join(dir, "log"), dir)
			}
			c.WriteExports(env.Stdout)
			c.WriteServices(env.Stderr)
			fmt.Fprintf(env.Stderr, "\nstop it with: cephbench sandbox down --dir %s\n", shellword.Quote(o.Dir))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Dir, "dir", sandbox.DefaultDir, "the sandbox's folder: new, or empty")
	fl.IntVar(&o.OSDs, "osds", 3, "number of OSDs; pools have min(2, osds) replicas")
	fl.StringVar(&o.Store, "store", "bluestore", "bluestore (a sparse file per OSD in the folder) or memstore (RAM)")
	fl.Var(&osdSize, "osd-size", "size of each OSD: the bluestore file, or the memstore limit")
	fl.BoolVar(&o.MDS, "mds", false, "also start an MDS and create the CephFS \"cephfs\"")
	fl.BoolVar(&o.RGW, "rgw", false, "also start radosgw and create an S3 user")
	fl.StringVar(&o.Auth, "auth", "cephx", "cephx, or none")
	fl.IntVar(&o.Port, "port", 0, "the mon's msgr2 port; msgr1 uses the next one (default: free ports)")
	fl.IntVar(&o.RGWPort, "rgw-port", 0, "radosgw's port (default: a free port)")
	fl.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "how long to wait for the cluster to become healthy")
	return cmd
}

// failuref is an error that exits 1: the sandbox did not do what was
// asked, through no fault of the command line.
func failuref(format string, args ...any) error {
	return &exitError{ExitFailure, fmt.Errorf(format, args...)}
}

// loadSandbox is Load with a missing sandbox as bad input.
func loadSandbox(dir string) (*sandbox.Cluster, error) {
	c, err := sandbox.Load(dir)
	switch {
	case errors.Is(err, sandbox.ErrNoSandbox):
		return nil, usageErr(err)
	case err != nil:
		return nil, failuref("%w", err)
	}
	return c, nil
}

func newSandboxStatusCmd(env Env) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "status [--dir D]",
		Short: "Show the sandbox's daemons and ceph -s",
		Long: `Show each daemon of the sandbox with its pid, or "stopped", then "ceph -s"
if the mon runs. Exits 0 when every daemon runs and the cluster answered, 1
otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := loadSandbox(dir)
			if err != nil {
				return err
			}
			if err := c.WriteStatus(cmd.Context(), env.Stdout); err != nil {
				return failuref("%w", err)
			}
			return nil
		},
	}
	dirFlag(cmd, &dir)
	return cmd
}

func newSandboxDownCmd(env Env) *cobra.Command {
	var (
		dir   string
		purge bool
	)
	cmd := &cobra.Command{
		Use:   "down [--dir D] [--purge]",
		Short: "Stop the sandbox's daemons, and with --purge remove what it created",
		Long: `Stop exactly the daemons the sandbox started, by the pids in their pid
files: SIGTERM, then SIGKILL for any still running after 30 seconds; it
returns when none runs. The folder is kept unless --purge is given, which
removes what the sandbox created in it, and the folder too if the sandbox
made it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := loadSandbox(dir)
			if err != nil {
				return err
			}
			// Stopping must finish even after Ctrl-C: a second one exits.
			if err := c.Down(context.WithoutCancel(cmd.Context())); err != nil {
				return failuref("%w", err)
			}
			if purge {
				if err := c.Purge(); err != nil {
					return failuref("%w", err)
				}
				fmt.Fprintf(env.Stderr, "stopped and removed the sandbox in %s\n", c.Dir())
				return nil
			}
			fmt.Fprintf(env.Stderr, "stopped the sandbox in %s\n", c.Dir())
			return nil
		},
	}
	dirFlag(cmd, &dir)
	cmd.Flags().BoolVar(&purge, "purge", false, "also remove what the sandbox created")
	return cmd
}

func newSandboxEnvCmd(env Env) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "env [--dir D]",
		Short: "Print the shell exports a client of the sandbox needs",
		Long: `Print shell exports for a client of the sandbox: CEPH_CONF (which names the
admin keyring), CEPH_KEYRING, CEPHBENCH_SANDBOX, and with radosgw
AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. Use it as
  eval "$(cephbench sandbox env)"`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			c, err := loadSandbox(dir)
			if err != nil {
				return err
			}
			c.WriteExports(env.Stdout)
			return nil
		},
	}
	dirFlag(cmd, &dir)
	return cmd
}
