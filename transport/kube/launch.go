package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/multihost"
	"github.com/cephbench/cephbench/transport/kube/inpod"
)

// Clients are the API groups a run uses.
type Clients struct {
	Core  corev1client.CoreV1Interface
	Batch batchv1client.BatchV1Interface
	RBAC  rbacv1client.RbacV1Interface
}

// Options are how a run follows its pods. The zero value takes the
// defaults.
type Options struct {
	// Hosts are the merge's options; its clocks are never measured, and
	// its Lead and Silence default to what a pod's log allows: 3 s and
	// 10 s.
	Hosts multihost.Options
	// Run runs the job on the pods' agents; nil is multihost.Run (a
	// multihost.Printing's Run prints it as its command does).
	Run func(ctx context.Context, j frontend.Job, hosts []multihost.Host, opts multihost.Options) (*multihost.Outcome, error)
	// Poll is how often the pods are listed; zero is 1 s.
	Poll time.Duration
	// StartTimeout is how long a pod may take to start (scheduled, its
	// image pulled); zero is 5 minutes.
	StartTimeout time.Duration
	// Diag gets the pods' lines that are not the protocol's (the
	// agents' stderr), one a call, from several goroutines; nil drops
	// them.
	Diag func(pod, line string)
}

func (o Options) withDefaults() Options {
	o.Hosts.UnmeasuredClocks = true
	if o.Hosts.Lead == 0 {
		o.Hosts.Lead = 3 * time.Second
	}
	if o.Hosts.Silence == 0 {
		o.Hosts.Silence = 10 * time.Second
	}
	if o.Poll == 0 {
		o.Poll = time.Second
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 5 * time.Minute
	}
	if o.Run == nil {
		o.Run = multihost.Run
	}
	if o.Diag == nil {
		o.Diag = func(string, string) {}
	}
	return o
}

// Run applies m, runs j on its pods and merges what they measured, as
// multihost.Run does for hosts over ssh: the pods' check-in, their
// start together through the ConfigMap, the seconds and results merged
// and saved; the pods' clocks are taken as they are.
// A pod that fails, is deleted or does not start is a lost host: the
// run stops on every pod and the error names it. Everything m made is
// deleted before Run returns, whatever happened, ctx ending included.
// The outcome is never nil.
func Run(ctx context.Context, c Clients, logs Logs, m *Manifests, j frontend.Job, opts Options) (out *multihost.Outcome, err error) {
	opts = opts.withDefaults()
	defer func() {
		if derr := Delete(context.WithoutCancel(ctx), c, m); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	if err := apply(ctx, c, m); err != nil {
		return &multihost.Outcome{}, err
	}
	// The pods are followed, and sent their stop, after ctx ends too:
	// what they measured until they stopped still comes.
	following, stopFollowing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFollowing()
	ns := m.Job.Namespace
	pods := newPodWatch(c.Core.Pods(ns), Selector(m.Job.Name), opts.Poll)
	go pods.run(following)

	n := int(*m.Job.Spec.Completions)
	hosts := make([]multihost.Host, n)
	readers := make([]*io.PipeReader, n)
	var wg sync.WaitGroup
	for i := range n {
		label := strconv.Itoa(i)
		r, w := io.Pipe()
		readers[i] = r
		f := &follower{logs: logs, pods: pods, index: i, patience: opts.StartTimeout, retry: opts.Poll, out: w, diag: opts.Diag}
		wg.Go(func() { f.run(following) })
		key := inpod.StreamKey(label)
		in := &streamWriter{ctx: following, configMaps: c.Core.ConfigMaps(ns), name: m.ConfigMap.Name, key: key}
		hosts[i] = multihost.Host{Label: label, In: in, Out: r, Ended: f.ended}
	}
	out, err = opts.Run(ctx, j, hosts, opts.Hosts)
	stopFollowing()
	for _, r := range readers {
		r.Close() // a follower still writing stops
	}
	wg.Wait()
	return out, err
}

// apply creates m's objects, leaving m as it is. The Job comes first,
// suspended (no pods yet), so that every other object is created owned
// by it: whatever becomes of the launcher, Kubernetes' garbage collector
// deletes them with the Job, which ends at its deadline and is deleted
// finishedTTL later. Once what its pods need is there, the Job is
// resumed.
func apply(ctx context.Context, c Clients, m *Manifests) error {
	ns := m.Job.Namespace
	fail := func(err error) error {
		return fmt.Errorf("creating the run's objects in namespace %s: %w", ns, err)
	}
	suspended := m.Job.DeepCopy()
	suspended.Spec.Suspend = ptr(true)
	job, err := c.Batch.Jobs(ns).Create(ctx, suspended, metav1.CreateOptions{})
	if err != nil {
		return fail(err)
	}
	owner := []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}}
	sa, role, binding, cm := m.ServiceAccount.DeepCopy(), m.Role.DeepCopy(), m.RoleBinding.DeepCopy(), m.ConfigMap.DeepCopy()
	for _, o := range []metav1.Object{sa, role, binding, cm} {
		o.SetOwnerReferences(owner)
	}
	steps := []func() error{
		func() error { _, err := c.Core.ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); return err },
		func() error { _, err := c.RBAC.Roles(ns).Create(ctx, role, metav1.CreateOptions{}); return err },
		func() error {
			_, err := c.RBAC.RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{})
			return err
		},
		func() error { _, err := c.Core.ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); return err },
		func() error {
			_, err := c.Batch.Jobs(ns).Patch(ctx, job.Name, types.MergePatchType, []byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{})
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fail(err)
		}
	}
	return nil
}

// deleteTimeout bounds the deletion at the end of a run.
const deleteTimeout = 30 * time.Second

// Delete deletes every object of m that exists: the Job with its pods
// (the pods at once too, not left to the garbage collector), the
// ConfigMap, whose deletion ends the agents' input, and the RBAC. What
// does not exist is not an error; it returns what could not be deleted.
func Delete(ctx context.Context, c Clients, m *Manifests) error {
	ctx, cancel := context.WithTimeout(ctx, deleteTimeout)
	defer cancel()
	ns, name := m.Job.Namespace, m.Job.Name
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	errs := []error{
		c.Core.ConfigMaps(ns).Delete(ctx, name, opts),
		c.Batch.Jobs(ns).Delete(ctx, name, opts),
		c.Core.Pods(ns).DeleteCollection(ctx, opts, metav1.ListOptions{LabelSelector: Selector(name)}),
		c.RBAC.RoleBindings(ns).Delete(ctx, name, opts),
		c.RBAC.Roles(ns).Delete(ctx, name, opts),
		c.Core.ServiceAccounts(ns).Delete(ctx, name, opts),
	}
	var left []string
	for _, err := range errs {
		if err != nil && !apierrors.IsNotFound(err) {
			left = append(left, err.Error())
		}
	}
	if len(left) > 0 {
		return errors.New("deleting the run's objects: " + strings.Join(left, "; ") + " (kubectl delete job,configmap,role,rolebinding,serviceaccount -l " + Selector(name) + ")")
	}
	return nil
}
