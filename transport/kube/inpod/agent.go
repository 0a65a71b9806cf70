package inpod

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/cephbench/cephbench/agent"
	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/step"
)

// What the run's pods are given, as the launcher's manifests give it.
const (
	// IndexEnv is the pod's completion index, which the Job controller
	// sets: it labels the agent.
	IndexEnv = "JOB_COMPLETION_INDEX"
	// NodeEnv is the pod's node, the host its hello names.
	NodeEnv = "NODE_NAME"
	// KeyEnv is the Ceph client's key, from its CephClient's Secret.
	KeyEnv = "CEPHBENCH_CEPH_KEY"
	// MonEndpoints is where Rook's rook-ceph-mon-endpoints ConfigMap's
	// data is mounted.
	MonEndpoints = "/etc/rook/mon-endpoints"
	// CephDir is where the pod's ceph.conf and keyring are written (an
	// emptyDir).
	CephDir = "/etc/ceph"
)

// Exit codes, as cephbench's.
const (
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

const usage = "usage: cephbench k8s agent --configmap NAME [--ceph-id ID]"

// Main is "cephbench k8s agent --configmap NAME [--ceph-id ID]" in a run's
// pod: it writes the Ceph configuration of client ID (when given), then
// serves the agent protocol with the pod's key of the ConfigMap as its
// input and stdout as its output, until the ConfigMap is deleted or ctx
// ends. It returns the exit code, having said why on stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := pflag.NewFlagSet("cephbench k8s agent", pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	name := fl.String("configmap", "", "the run's ConfigMap")
	cephID := fl.String("ceph-id", "", "the Ceph client (CephClient) whose configuration to write")
	err := fl.Parse(args)
	index := os.Getenv(IndexEnv)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(stdout, "%s\n\nThe agent of a cephbench k8s run's pod (the launcher's Job runs it).\n\nFlags:\n%s", usage, fl.FlagUsages())
		return 0
	case err != nil:
	case *name == "" || fl.NArg() > 0:
		err = errors.New(usage)
	case index == "":
		err = fmt.Errorf("%s is not set: the agent runs in a pod of an Indexed Job", IndexEnv)
	default:
		_, err = strconv.Atoi(index)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cephbench: %v\n", err)
		return exitUsage
	}
	err = serve(ctx, *name, index, *cephID, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, step.ErrInterrupted):
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "cephbench: %v\n", err)
	if engine.IsUsage(err) {
		return exitUsage
	}
	return exitFailure
}

// serve runs the agent labelled index on the run's ConfigMap name.
func serve(ctx context.Context, name, index, cephID string, stdout, stderr io.Writer) error {
	if cephID != "" {
		mons, err := os.ReadFile(MonEndpoints)
		if err != nil {
			return fmt.Errorf("reading Rook's mon endpoints: %w", err)
		}
		conf, err := WriteCephConfig(CephDir, string(mons), cephID, os.Getenv(KeyEnv))
		if err != nil {
			return err
		}
		os.Setenv("CEPH_CONF", filepath.Clean(conf))
	}
	api, namespace, err := InCluster()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := NewInput(StreamKey(index))
	go Follow(ctx, api, namespace, name, in)
	return agent.Serve(ctx, in, stdout, agent.Options{Host: os.Getenv(NodeEnv), Stderr: stderr})
}
