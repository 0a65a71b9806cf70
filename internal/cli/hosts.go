package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/metrics/promexport"
	"github.com/cephbench/cephbench/multihost"
	"github.com/cephbench/cephbench/transport/ssh"
)

// hostFlags are the flags that run a command's job on other hosts, each
// through its own agent reached over ssh.
type hostFlags struct {
	list, file, sshConfig, remote, onFailure string
	maxSkew                                  time.Duration
	push, perHost, shared                    bool
}

func (h *hostFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&h.list, "hosts", "", "run on these client hosts at once, over ssh: h1,h2,... (results merged exactly)")
	fl.StringVar(&h.file, "hostfile", "", "run on the client hosts listed in this file, one a line")
	fl.StringVar(&h.sshConfig, "ssh-config", "", "ssh_config file for reaching the hosts (ssh -F; default: the user's)")
	fl.StringVar(&h.remote, "remote-cephbench", "cephbench", "the cephbench program on the hosts")
	fl.DurationVar(&h.maxSkew, "max-clock-skew", multihost.DefaultMaxSkew, "refuse a host whose clock is further than this from this host's")
	fl.StringVar(&h.onFailure, "on-host-failure", "stop", "when a host fails or is lost: stop every host, or continue on the others")
	fl.BoolVar(&h.push, "push-binary", false, "copy this cephbench to a host whose own is missing or another version (~/.cache/cephbench/VERSION)")
	fl.BoolVar(&h.perHost, "per-host", false, "show each host's seconds and summary beneath the merged ones")
	fl.BoolVar(&h.shared, "shared-image", false, "every host uses the one rbd image, each its own region of it (the image must exist)")
}

func (h *hostFlags) given() bool { return h != nil && (h.list != "" || h.file != "") }

// stray is the first flag of a run on other hosts set to other than its
// default, which without hosts would do nothing; empty when none is.
func (h *hostFlags) stray() string {
	if h == nil {
		return ""
	}
	for _, f := range []struct {
		set  bool
		name string
	}{
		{h.sshConfig != "", "--ssh-config"}, {h.remote != "cephbench", "--remote-cephbench"},
		{h.maxSkew != multihost.DefaultMaxSkew, "--max-clock-skew"}, {h.onFailure != "stop", "--on-host-failure"},
		{h.push, "--push-binary"}, {h.perHost, "--per-host"}, {h.shared, "--shared-image"},
	} {
		if f.set {
			return f.name
		}
	}
	return ""
}

// hostCommand is how the flags run a job on their hosts.
func (env Env) hostCommand() (multihost.Command, error) {
	h := env.hosts
	names, err := ssh.Hosts(h.list, env.path(h.file))
	return multihost.Command{Hosts: names, SSH: ssh.Options{ConfigFile: env.path(h.sshConfig)}, Remote: h.remote,
		Push: h.push, MaxSkew: h.maxSkew, PerHost: h.perHost, OnFailure: h.onFailure, SharedTarget: h.shared}, err
}

// runner is how the flags run a job: here, or on their hosts at once,
// printing each step as its command prints it from the hosts' seconds
// and results added.
func (env Env) runner() (frontend.Runner, error) {
	if !env.hosts.given() {
		return frontend.Run, nil
	}
	c, err := env.hostCommand()
	return c.Run, err
}

// metricsFlags serve a run's live metrics over HTTP.
type metricsFlags struct {
	listen string
	linger time.Duration
}

func (m *metricsFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&m.listen, "metrics-listen", "", "serve live Prometheus metrics at this address: 127.0.0.1:9464 (:0 takes a free port)")
	fl.DurationVar(&m.linger, "metrics-linger", 0, "keep serving the metrics this long after the last step, for a last scrape (Ctrl-C ends it)")
}

// serve binds the flags' address, if any, and says where it serves; it
// returns run with its steps followed there, and what ends the serving
// once the run is over.
func (m *metricsFlags) serve(ctx context.Context, stderr io.Writer, run frontend.Runner) (frontend.Runner, func(), error) {
	switch {
	case m.listen == "" && m.linger != 0:
		return nil, nil, usagef("--metrics-linger is for --metrics-listen")
	case m.listen == "":
		return run, func() {}, nil
	}
	ep, err := promexport.Serve(m.listen)
	if err != nil {
		return nil, nil, usagef("--metrics-listen %s: %v", m.listen, err)
	}
	fmt.Fprintf(stderr, "cephbench: metrics at %s\n", ep.URL())
	return frontend.Following(run, ep.Follow), func() { ep.Close(ctx, m.linger) }, nil
}
