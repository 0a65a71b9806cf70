package cli

import (
	"errors"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/cmdline"
	"github.com/cephbench/cephbench/netbench"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

func newNetCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "net",
		Short: "Measure the network between two hosts: TCP throughput, retransmits and round-trip latency",
		Long: `The network baseline of the test plan, iperf3's test natively: run
"cephbench net server" on one host and "cephbench net client HOST" on the
other. The client prints iperf3's per-second table (Transfer, Bitrate in
Gbits/sec, Retr) and its sender and receiver summary, then round-trip
latency percentiles from a ping-pong phase, and saves a JSON result with
both ends' figures and both hosts' facts.

The two speak a protocol of their own (not iperf3's): a server serves one
test at a time, tells a second client it is busy, and closes connections
from anything else (an iperf3 client, a port scanner) with a one-line log.`,
		Example: `  cephbench net server                        # on host A
  cephbench net client A --time 30s           # on host B: B to A
  cephbench net client A --parallel 4 --reverse`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newNetServerCmd(env), newNetClientCmd(env))
	return cmd
}

func newNetServerCmd(env Env) *cobra.Command {
	var (
		listen string
		port   int
		once   bool
	)
	cmd := &cobra.Command{
		Use:   "server [--listen [HOST]:5201 | [--listen HOST] -p PORT] [--once]",
		Short: "Serve network tests to cephbench net clients, one at a time",
		Long: `Serve network tests until Ctrl-C (or SIGTERM), one at a time. Each test's
report from the server's side (the per-second table and the server's own
count of each stream, in exact bytes too) goes to stdout; a connection that
is refused (busy, or not a cephbench net client) gets one line on stderr.

Stopping the server is its normal end: exit 0, also when a running test had
to be cut short (its client then fails). --once serves one test and exits:
0 if it completed, 1 if it failed. A --listen address that cannot be used
(bad, or in use) exits 2.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s := netbench.Server{Out: env.Stdout, Log: env.Stderr, Once: once}
			err := s.ListenAndServe(cmd.Context(), listen, port)
			var bad *netbench.ListenError
			switch {
			case errors.As(err, &bad):
				return usageErr(err)
			case err != nil:
				return failuref("%w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on: [HOST]:PORT, a port, or a HOST with -p (default :5201)")
	cmd.Flags().IntVarP(&port, "port", "p", 0, "port to listen on, as iperf's -p (default 5201)")
	cmd.Flags().BoolVar(&once, "once", false, "serve one test, then exit")
	return cmd
}

// netClientLong is net client's help: the two phases, what the tables
// count, and the exit codes.
const netClientLong = `Run one test against "cephbench net server" on HOST.

First a ping-pong phase (--rtt, 1 s by default; 0 skips it): 64-byte
messages, one in flight, on their own connection over an idle path, each
round trip timed; its latency percentiles come from an HDR histogram of
every round trip. Then --time of throughput on --parallel TCP connections
per direction: client to server by default, server to client with
--reverse, both at once with --bidir. Each write and read is --length bytes.

The per-second table counts what the client sent or received; the summary
has a sender and a receiver line per stream (the server's count for the
half it saw), with the kernel's retransmit count of the sender's sockets
(TCP_INFO). Rates are bits per second in powers of 1000 (Gbits/sec), sizes
in powers of 1024 (GBytes), as iperf3 prints them. The JSON result (both
ends' per-second series, each stream, the round-trip histogram, both
hosts) is saved under --results.

Exit codes: 2 when the test cannot start for a reason in the command line
(a bad flag, an unknown host, nothing listening on the port, a peer that is
not a cephbench net server or refused the parameters); 1 when the server is
busy with another test or the test fails midway (the server or the network
went away: what was measured is not trustworthy, so no result is saved);
130 on Ctrl-C, after the test stopped early and its result was saved.`

func newNetClientCmd(env Env) *cobra.Command {
	var (
		p       = netbench.Params{Streams: 1, Duration: spec.Duration(10 * time.Second), RTT: spec.Duration(time.Second)}
		length  = spec.Size(128 << 10)
		port    int
		reverse bool
		bidir   bool
		format  string
		results string
		quiet   bool
	)
	cmd := &cobra.Command{
		Use:   "client HOST [--port 5201] [--time 10s] [--parallel N] [--reverse | --bidir] [--rtt 1s]",
		Short: "Measure TCP throughput and round-trip latency to a cephbench net server",
		Long:  netClientLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			host, err := netbench.ClientParams(args[0], &p, int64(length), reverse, bidir)
			if err != nil {
				return usageErr(err)
			}
			if format != "text" && format != "json" {
				return usagef("invalid --format %q (want text or json)", format)
			}
			name := "net-" + string(p.Mode)
			st := step.Step{Name: name, Save: stamped(env.path(results), name) + ".json",
				Front: step.Front{Command: "net client", Net: &step.Net{Host: host, Port: port, Params: p}}}
			return env.run(cmd.Context(), frontend.Job{Command: "net client", Steps: []step.Step{st}, Format: format, Quiet: quiet})
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&port, "port", "p", netbench.DefaultPort, "the server's port")
	fl.VarP(&p.Duration, "time", "t", "how long the data flows: 10s, 2m, or seconds")
	fl.IntVarP(&p.Streams, "parallel", "P", 1, "TCP connections per direction")
	fl.BoolVarP(&reverse, "reverse", "R", false, "the server sends, the client receives")
	fl.BoolVar(&bidir, "bidir", false, "both directions at once, on separate connections")
	fl.Var(&p.RTT, "rtt", "length of the ping-pong phase before the throughput test; 0 skips it")
	fl.VarP(&length, "length", "l", "size of each write and read: 128K, 1M, ...")
	fl.StringVar(&format, "format", "text", "text, or json (only the JSON result on stdout; the tables go to stderr)")
	resultsFlag(fl, &results)
	fl.BoolVarP(&quiet, "quiet", "q", false, "no per-second table")
	return cmd
}

// newIperfCmd runs iperf's command lines (report 003's iperf -s -p 6900
// and iperf -c HOST -p 6900) as cephbench net server and client.
func newIperfCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:                "iperf -s [-p PORT] | -c HOST [-p PORT] [-t SECS] [-P N] [-R]",
		Short:              "iperf's command lines, run as cephbench net server (-s) or net client (-c HOST)",
		DisableFlagParsing: true, // iperf's flags, not net's
		RunE: func(cmd *cobra.Command, args []string) error {
			if slices.Contains(args, "-h") || slices.Contains(args, "--help") {
				return cmd.Help()
			}
			netArgs, err := cmdline.Iperf(args)
			if err != nil {
				return usageErr(err)
			}
			root := newRoot(env)
			root.SetArgs(netArgs)
			return root.ExecuteContext(cmd.Context())
		},
	}
}
