// Command cephbench-k8s is "cephbench k8s render" and "cephbench k8s
// run": it renders and runs a job's agents as an Indexed Job on a
// Kubernetes cluster. It holds the Kubernetes client, which would more
// than double the cephbench binary that --push-binary copies and the
// pods run; cephbench runs it for its k8s command.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/internal/cli"
	"github.com/cephbench/cephbench/internal/interrupt"
	"github.com/cephbench/cephbench/multihost"
	"github.com/cephbench/cephbench/step"
	"github.com/cephbench/cephbench/transport/kube"

	_ "github.com/cephbench/cephbench/engine/dirobj"
	_ "github.com/cephbench/cephbench/engine/file"
	_ "github.com/cephbench/cephbench/engine/null"
)

const usage = `usage: cephbench k8s render|run --clients N --image IMAGE [-n NAMESPACE] [--ceph-secret NAME]
       [--ceph-id ID] [--name RUN] [--deadline D] [--kubeconfig FILE] (--job-file FILE | -- COMMAND...)`

// flags are the k8s command's.
type flags struct {
	clients                                     int
	namespace, image, secret, id, name, jobFile string
	kubeconfig, results                         string
	deadline, startTimeout                      time.Duration
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	interrupt.Notify(cancel, cli.ExitInterrupted, nil)
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command with args, its exit code as cephbench's.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := runErr(ctx, args, stdout, stderr)
	switch {
	case err == nil:
		return cli.ExitOK
	case errors.Is(err, step.ErrInterrupted):
		return cli.ExitInterrupted
	}
	fmt.Fprintf(stderr, "cephbench: %s\n", strings.Join(strings.Fields(err.Error()), " "))
	if engine.IsUsage(err) {
		return cli.ExitUsage
	}
	return cli.ExitFailure
}

func runErr(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
		args = []string{"render", "--help"} // the flags are both verbs'
	}
	if len(args) == 0 || (args[0] != "render" && args[0] != "run") {
		return engine.Usagef("%s", usage)
	}
	verb := args[0]
	var f flags
	fl := pflag.NewFlagSet("cephbench k8s", pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.IntVar(&f.clients, "clients", 0, "pods that run the job at once, one a node")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "the namespace (default: the kubeconfig context's); Rook's CephClient Secret must be in it")
	fl.StringVar(&f.image, "image", "", "the container image with this cephbench in it")
	fl.StringVar(&f.secret, "ceph-secret", "", "the Secret Rook's CephClient made (rook-ceph-client-NAME)")
	fl.StringVar(&f.id, "ceph-id", "", "the Ceph client's name (default: the Secret's, less rook-ceph-client-)")
	fl.StringVar(&f.name, "name", "", "the run's name, of every object it makes (default cephbench-TIME)")
	fl.StringVar(&f.jobFile, "job-file", "", "a job as JSON (frontend.Job), instead of a command line after --")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "the kubeconfig file (default: KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.results, "results", "cephbench-results", "folder under which a command line's results are saved")
	fl.DurationVar(&f.deadline, "deadline", 0, "the Job's deadline (default: the job's time, the start timeout and 2 minutes)")
	fl.DurationVar(&f.startTimeout, "start-timeout", 5*time.Minute, "how long a pod may take to start")
	switch err := fl.Parse(args[1:]); {
	case errors.Is(err, pflag.ErrHelp):
		_, err = fmt.Fprintf(stdout, "%s\n\nRender (print) or run a command's job as an Indexed Job, one pod a node.\n\nFlags:\n%s", usage, fl.FlagUsages())
		return err
	case err != nil:
		return engine.Usagef("%v", err)
	}
	j, err := f.job(fl.Args())
	if err != nil {
		return err
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.kubeconfig, Precedence: clientcmd.NewDefaultClientConfigLoadingRules().Precedence},
		&clientcmd.ConfigOverrides{})
	if f.namespace == "" {
		if f.namespace, _, err = loader.Namespace(); err != nil {
			return engine.Usagef("the namespace: %v (give -n)", err)
		}
	}
	s, err := f.spec(j)
	if err != nil {
		return err
	}
	m, err := kube.Render(s)
	if err != nil {
		return err
	}
	if verb == "render" {
		y, err := m.YAML()
		if err != nil {
			return err
		}
		_, err = stdout.Write(y)
		return err
	}
	clients, err := connect(loader)
	if err != nil {
		return err
	}
	return launch(ctx, clients, m, j, stdout, stderr)
}

// job is the job the flags or the command line ask for.
func (f flags) job(command []string) (frontend.Job, error) {
	switch {
	case f.jobFile != "" && len(command) > 0:
		return frontend.Job{}, engine.Usagef("give a job file or a command line, not both")
	case f.jobFile != "":
		b, err := os.ReadFile(f.jobFile)
		if err != nil {
			return frontend.Job{}, engine.Usagef("%v", err)
		}
		var j frontend.Job
		if err := json.Unmarshal(b, &j); err != nil || len(j.Steps) == 0 {
			return frontend.Job{}, engine.Usagef("%s: not a job with steps (%v)", f.jobFile, err)
		}
		return j, nil
	case len(command) == 0:
		return frontend.Job{}, engine.Usagef("no job: give --job-file FILE or a command line after --\n%s", usage)
	}
	j, err := cli.ParseJob(cli.Env{Stdout: io.Discard, Stderr: io.Discard}, command, f.results)
	if err != nil {
		return j, engine.Usagef("%s: %v", strings.Join(command, " "), err)
	}
	if len(j.Steps) == 0 {
		return j, engine.Usagef("%q runs no workload", strings.Join(command, " "))
	}
	return j, nil
}

// spec is the run the flags ask for; its deadline allows for the pods'
// start and the job's own time, which must be known.
func (f flags) spec(j frontend.Job) (kube.Spec, error) {
	if f.deadline == 0 {
		d, exact := frontend.Estimate(j)
		if !exact {
			return kube.Spec{}, engine.Usagef("the job's time is not known beforehand (it is bounded by ops or bytes): give --deadline")
		}
		f.deadline = d + f.startTimeout + 2*time.Minute
	}
	if f.id == "" {
		f.id = strings.TrimPrefix(f.secret, "rook-ceph-client-")
	}
	if f.name == "" {
		f.name = "cephbench-" + time.Now().Format("20060102-150405")
	}
	return kube.Spec{
		Name: f.name, Namespace: f.namespace, Image: f.image, Clients: f.clients,
		CephSecret: f.secret, CephID: f.id, Deadline: f.deadline, Job: j,
	}, nil
}

// connect reaches the cluster of the kubeconfig.
func connect(loader clientcmd.ClientConfig) (kube.Clients, error) {
	cfg, err := loader.ClientConfig()
	if err != nil {
		return kube.Clients{}, engine.Usagef("the kubeconfig: %v", err)
	}
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return kube.Clients{}, err
	}
	batch, err := batchv1client.NewForConfig(cfg)
	if err != nil {
		return kube.Clients{}, err
	}
	rbac, err := rbacv1client.NewForConfig(cfg)
	return kube.Clients{Core: core, Batch: batch, RBAC: rbac}, err
}

// launch runs m, printing each step as its command prints it, from the
// merged seconds and results, which are saved where the steps say.
func launch(ctx context.Context, c kube.Clients, m *kube.Manifests, j frontend.Job, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "%s: applying Job %s and its RBAC and ConfigMap in namespace %s; all are deleted at the end, or with the Job if this launcher is killed\n", j.Command, m.Job.Name, m.Job.Namespace)
	out := frontend.IO{Stdout: stdout, Stderr: stderr}
	p := multihost.Printing{Heading: fmt.Sprintf("%s on %d pods of Job %s", j.Command, *m.Job.Spec.Completions, m.Job.Name)}
	opts := kube.Options{
		Diag: func(pod, line string) { fmt.Fprintf(stderr, "%s: %s\n", pod, line) },
		Run: func(ctx context.Context, j frontend.Job, hosts []multihost.Host, o multihost.Options) (*multihost.Outcome, error) {
			return p.Run(ctx, j, hosts, o, out)
		},
	}
	_, err := kube.Run(ctx, c, kube.APILogs{Pods: c.Core.Pods(m.Job.Namespace)}, m, j, opts)
	return err
}
