package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/multihost"
	"github.com/cephbench/cephbench/transport/ssh"
)

// hostFlags are the flags that run a command's job on other hosts, each
// through its own agent reached over ssh.
type hostFlags struct {
	list, file, sshConfig, remote, onFailure string
	maxSkew                                  time.Duration
}

func (h *hostFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&h.list, "hosts", "", "run on these client hosts at once, over ssh: h1,h2,... (results merged exactly)")
	fl.StringVar(&h.file, "hostfile", "", "run on the client hosts listed in this file, one a line")
	fl.StringVar(&h.sshConfig, "ssh-config", "", "ssh_config file for reaching the hosts (ssh -F; default: the user's)")
	fl.StringVar(&h.remote, "remote-cephbench", "cephbench", "the cephbench program on the hosts")
	fl.DurationVar(&h.maxSkew, "max-clock-skew", multihost.DefaultMaxSkew, "refuse a host whose clock is further than this from this host's")
	fl.StringVar(&h.onFailure, "on-host-failure", "stop", "when a host fails or is lost: stop every host, or continue on the others")
}

func (h *hostFlags) given() bool { return h != nil && (h.list != "" || h.file != "") }

// runOnHosts runs j on the hosts of the flags at once, printing the merged
// seconds and the merged result of each step, saved where the step says.
func (env Env) runOnHosts(ctx context.Context, j frontend.Job) error {
	h := env.hosts
	if h.onFailure != "stop" && h.onFailure != "continue" {
		return usagef("--on-host-failure %q: want stop or continue", h.onFailure)
	}
	names, err := ssh.Hosts(h.list, env.path(h.file))
	if err != nil {
		return err
	}
	hosts, closeAll, err := multihost.OverSSH(ctx, names, []string{h.remote, "agent", "--stdio"}, ssh.Options{ConfigFile: env.path(h.sshConfig)})
	if err != nil {
		return err
	}
	defer closeAll()
	opts := multihost.Options{MaxSkew: h.maxSkew, GoOn: h.onFailure == "continue"}
	opts.Lost = func(_ string, err error) {
		fmt.Fprintf(env.Stderr, "cephbench: %s; going on with the others\n", oneLine(err.Error()))
	}
	// Each step prints as its command prints it (rados bench's table for
	// rados bench...), from the hosts' seconds added.
	presenters := frontend.Presenters(j, frontend.IO{Stdout: env.Stdout, Stderr: env.Stderr})
	opts.Opened = func(s int) metrics.Subscriber {
		// Said once every host has checked in and the run is on: a host
		// refused before gives its one line alone.
		if s == 0 {
			fmt.Fprintf(env.Stderr, "%s on %d hosts, each running it in full: %s\n", j.Command, len(names), strings.Join(names, ", "))
		}
		return presenters[s].Opened()
	}
	out, runErr := multihost.Run(ctx, j, hosts, opts)
	for k, res := range out.Results {
		if res == nil {
			continue
		}
		if err := presenters[k].Done(res, out.Saved[k]); err != nil {
			return err
		}
	}
	return ranErr(runErr)
}
