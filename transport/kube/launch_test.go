package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cephbench/cephbench/agent"
	"github.com/cephbench/cephbench/internal/mergetest"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/multihost"
	"github.com/cephbench/cephbench/step"
	"github.com/cephbench/cephbench/transport/kube/inpod"
)

// cluster plays the Job controller and the kubelets on a fake clientset:
// once the run's Job exists it makes its pods, each running a real
// in-process agent whose input is the pod's key of the ConfigMap (as
// the pod's watch reads it) and whose stdout and stderr are the pod's
// log.
type cluster struct {
	t  *testing.T
	cs *fake.Clientset
	ns string

	mu   sync.Mutex
	logs map[string]*podLog // by pod name
	// cut, if set, ends each pod's first log stream after that many
	// lines, as a dropped connection does.
	cut int
	// fail, if set, is the index of the pod that fails failAfter after
	// the run's first merged second, however long the start took.
	fail      int
	failAfter time.Duration
	// measured is closed at the run's first merged second.
	measured     chan struct{}
	measuredOnce sync.Once
	opened       map[string]int    // log streams opened, per pod
	sent         map[string]string // what the ConfigMap's keys last held
	served       sync.WaitGroup
	// created is every object created but the pods, in order, as the
	// API server stored it (with its UID).
	created []runtime.Object
}

func newCluster(t *testing.T) *cluster {
	cs := fake.NewClientset()
	// The API server deletes a collection; the fake tracker does not.
	cs.PrependReactor("delete-collection", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		dc := a.(k8stesting.DeleteCollectionAction)
		sel, err := labels.Parse(dc.GetListRestrictions().Labels.String())
		if err != nil {
			return true, nil, err
		}
		list, err := cs.Tracker().List(corev1.SchemeGroupVersion.WithResource("pods"), corev1.SchemeGroupVersion.WithKind("Pod"), dc.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		for _, p := range list.(*corev1.PodList).Items {
			if sel.Matches(labels.Set(p.Labels)) {
				cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), p.Namespace, p.Name)
			}
		}
		return true, nil, nil
	})
	c := &cluster{t: t, cs: cs, ns: "bench", logs: map[string]*podLog{}, fail: -1, measured: make(chan struct{}), opened: map[string]int{}, sent: map[string]string{}}
	// The API server gives each object a UID; the fake tracker does not.
	cs.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca := a.(k8stesting.CreateAction)
		obj := ca.GetObject().DeepCopyObject()
		c.mu.Lock()
		defer c.mu.Unlock()
		obj.(metav1.Object).SetUID(types.UID(fmt.Sprintf("uid-%d", len(c.created)+1)))
		if err := cs.Tracker().Create(ca.GetResource(), obj, ca.GetNamespace()); err != nil {
			return true, nil, err
		}
		if ca.GetResource().Resource != "pods" {
			c.created = append(c.created, obj.DeepCopyObject())
		}
		return true, obj, nil
	})
	return c
}

func (c *cluster) clients() Clients {
	return Clients{Core: c.cs.CoreV1(), Batch: c.cs.BatchV1(), RBAC: c.cs.RbacV1()}
}

// run waits for the Job, not suspended, then starts its pods: Pending
// first, Running a moment later.
func (c *cluster) run(ctx context.Context, name string) {
	for ctx.Err() == nil {
		job, err := c.cs.BatchV1().Jobs(c.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || (job.Spec.Suspend != nil && *job.Spec.Suspend) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		for i := range int(*job.Spec.Completions) {
			c.startPod(ctx, job.Spec.Template.Labels, name, i)
		}
		return
	}
}

func (c *cluster) startPod(ctx context.Context, tmpl map[string]string, job string, i int) {
	lbl := map[string]string{IndexLabel: strconv.Itoa(i)}
	for k, v := range tmpl {
		lbl[k] = v
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d-x%d", job, i, i), Namespace: c.ns, Labels: lbl}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	pods := c.cs.CoreV1().Pods(c.ns)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		c.t.Error(err)
		return
	}
	log := newPodLog()
	c.mu.Lock()
	c.logs[pod.Name] = log
	c.mu.Unlock()
	in := inpod.NewInput(inpod.StreamKey(strconv.Itoa(i)))
	go c.watchConfigMap(ctx, job, in)
	agentCtx, kill := context.WithCancel(ctx)
	c.served.Go(func() {
		time.Sleep(200 * time.Millisecond)
		c.setPhase(pod.Name, corev1.PodRunning, "")
		log.Write([]byte("cephbench agent: a line of its own on stderr\n"))
		agent.Serve(agentCtx, in, log, agent.Options{Host: pod.Name, Stderr: log})
		failed := agentCtx.Err() != nil
		kill()
		log.close()
		if !failed {
			c.setPhase(pod.Name, corev1.PodSucceeded, "")
		}
	})
	if i == c.fail {
		go func() {
			select {
			case <-c.measured:
			case <-agentCtx.Done():
				return
			}
			time.Sleep(c.failAfter)
			// The container dies: its log ends with nothing more, its
			// pod fails.
			log.close()
			kill()
			c.setPhase(pod.Name, corev1.PodFailed, "OOMKilled")
		}()
	}
}

func (c *cluster) setPhase(name string, phase corev1.PodPhase, reason string) {
	pods := c.cs.CoreV1().Pods(c.ns)
	p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return // deleted
	}
	p.Status.Phase, p.Status.Reason = phase, reason
	pods.UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
}

// watchConfigMap feeds in the ConfigMap as the pod's watch would, and
// ends it when the ConfigMap is deleted.
func (c *cluster) watchConfigMap(ctx context.Context, name string, in *inpod.Input) {
	w, err := c.cs.CoreV1().ConfigMaps(c.ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		in.End(err)
		return
	}
	defer w.Stop()
	if cm, err := c.cs.CoreV1().ConfigMaps(c.ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
		in.Update(cm.Data)
	}
	for ev := range w.ResultChan() {
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok || cm.Name != name {
			continue
		}
		if ev.Type == "DELETED" {
			in.End(io.EOF)
			return
		}
		in.Update(cm.Data)
		c.mu.Lock()
		maps.Copy(c.sent, cm.Data)
		c.mu.Unlock()
	}
}

// Open serves a pod's log as the API server does with follow and
// timestamps, from since on.
func (c *cluster) Open(ctx context.Context, pod string, since time.Time) (io.ReadCloser, error) {
	c.mu.Lock()
	log, ok := c.logs[pod]
	c.opened[pod]++
	first := c.opened[pod] == 1
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("pod %s has no log", pod)
	}
	limit := -1
	if first && c.cut > 0 {
		limit = c.cut
	}
	r, w := io.Pipe()
	go func() { w.CloseWithError(log.serve(ctx, w, since, limit)) }()
	return r, nil
}

// podLog is one container's log as the kubelet keeps it: each line
// stamped when written, a line longer than split bytes in fragments
// stamped each, as the container runtime splits long lines.
type podLog struct {
	split   int
	mu      sync.Mutex
	changed chan struct{}
	entries []logEntry
	partial []byte
	closed  bool
}

type logEntry struct {
	stamp, text string
	fragment    bool // a line's part, without its newline
}

func newPodLog() *podLog { return &podLog{split: 1024, changed: make(chan struct{})} }

func (l *podLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, errors.New("the container is gone")
	}
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		for len(line) > l.split {
			l.entries = append(l.entries, logEntry{time.Now().UTC().Format(time.RFC3339Nano), line[:l.split], true})
			line = line[l.split:]
		}
		l.entries = append(l.entries, logEntry{time.Now().UTC().Format(time.RFC3339Nano), line, false})
		l.partial = l.partial[i+1:]
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *podLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	close(l.changed)
	l.changed = make(chan struct{})
}

// serve writes the entries stamped since or later as the log endpoint
// does with timestamps (each entry after its stamp, a fragment without a
// newline), following the log until it is closed, or until limit lines
// (none when negative).
func (l *podLog) serve(ctx context.Context, w io.Writer, since time.Time, limit int) error {
	next := 0
	for sent := 0; limit < 0 || sent < limit; {
		l.mu.Lock()
		entries, closed, changed := l.entries[next:], l.closed, l.changed
		l.mu.Unlock()
		for _, e := range entries {
			next++
			if t, _ := time.Parse(time.RFC3339Nano, e.stamp); t.Before(since) {
				continue
			}
			end := "\n"
			if e.fragment {
				end = ""
			}
			if _, err := io.WriteString(w, e.stamp+" "+e.text+end); err != nil {
				return err
			}
			if !e.fragment {
				if sent++; sent == limit {
					return nil
				}
			}
		}
		if closed { // every line was written before it closed
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
	return nil
}

// left is what the run left in the namespace.
func (c *cluster) left() []string {
	ctx, all := context.Background(), metav1.ListOptions{}
	lists := map[string]func() (runtime.Object, error){
		"pod":            func() (runtime.Object, error) { return c.cs.CoreV1().Pods(c.ns).List(ctx, all) },
		"configmap":      func() (runtime.Object, error) { return c.cs.CoreV1().ConfigMaps(c.ns).List(ctx, all) },
		"serviceaccount": func() (runtime.Object, error) { return c.cs.CoreV1().ServiceAccounts(c.ns).List(ctx, all) },
		"job":            func() (runtime.Object, error) { return c.cs.BatchV1().Jobs(c.ns).List(ctx, all) },
		"role":           func() (runtime.Object, error) { return c.cs.RbacV1().Roles(c.ns).List(ctx, all) },
		"rolebinding":    func() (runtime.Object, error) { return c.cs.RbacV1().RoleBindings(c.ns).List(ctx, all) },
	}
	var names []string
	for kind, list := range lists {
		l, err := list()
		if err != nil {
			c.t.Fatal(err)
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			c.t.Fatal(err)
		}
		for _, it := range items {
			names = append(names, kind+"/"+it.(metav1.Object).GetName())
		}
	}
	return names
}

func launch(t *testing.T, c *cluster, clients int, d time.Duration) func(context.Context, Options) (outcome, error) {
	t.Helper()
	s := Spec{Name: "run1", Namespace: c.ns, Image: "cephbench:test", Clients: clients, Deadline: time.Minute, Job: nullJob(d)}
	m, err := Render(s)
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, o Options) (outcome, error) {
		go c.run(ctx, s.Name)
		var mu sync.Mutex
		var seconds []metrics.Tick
		o.Poll = 50 * time.Millisecond
		o.Hosts.Lead = 300 * time.Millisecond
		o.Hosts.Opened = func(int) metrics.Subscriber {
			return func(tk metrics.Tick) {
				c.measuredOnce.Do(func() { close(c.measured) })
				mu.Lock()
				seconds = append(seconds, tk)
				mu.Unlock()
			}
		}
		var diag []string
		o.Diag = func(pod, line string) { mu.Lock(); diag = append(diag, pod+": "+line); mu.Unlock() }
		out, err := Run(ctx, c.clients(), c, m, s.Job, o)
		c.served.Wait()
		mu.Lock()
		defer mu.Unlock()
		return outcome{out, seconds, diag}, err
	}
}

// outcome is what a launch gave.
type outcome struct {
	*multihost.Outcome
	seconds []metrics.Tick
	diag    []string
}

// Three pods run a job: each gets its share and its start through its key
// of the ConfigMap, the launcher follows their logs (each dropped
// once and reopened, their long lines split in stamped fragments), starts them together through the ConfigMap, and
// merges exactly what they measured; then nothing of the run is left.
func TestPodsRunTheJobAndTheirTicksMerge(t *testing.T) {
	c := newCluster(t)
	c.cut = 4 // hello, its own line, ready, a tick: then the stream drops
	out, err := launch(t, c, 3, 2*time.Second)(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 || len(out.Results[0].Hosts) != 3 {
		t.Fatalf("results %+v; want one merged from 3 pods", out.Results)
	}
	m := out.Results[0]
	sum := mergetest.AddsUp(t, m, "read")
	var ticked int64
	for _, s := range out.seconds {
		ticked += s.Kinds["read"].Ops
	}
	if len(out.seconds) != 2 || ticked != sum {
		t.Errorf("%d merged seconds of %d reads; want 2 of %d", len(out.seconds), ticked, sum)
	}
	if !strings.Contains(strings.Join(m.Notes, "\n"), multihost.UnmeasuredClocksNote) {
		t.Errorf("notes %q; want the clocks' note", m.Notes)
	}
	c.mu.Lock()
	for i := range 3 {
		// Each pod's key got its share of the job, then its start.
		dec := agent.NewDecoder(strings.NewReader(c.sent[inpod.StreamKey(strconv.Itoa(i))]))
		first, err := dec.Decode()
		job, ok := first.(*agent.Job)
		if err != nil || !ok || job.Job.Steps[0].Workload.RateIOPS != 1000 || job.Deadline.IsZero() {
			t.Errorf("pod %d's first message: %v %+v; want its job with a third of the rate and a deadline", i, err, first)
		}
		if second, err := dec.Decode(); err != nil || second.Type() != "start" {
			t.Errorf("pod %d's second message: %v %v; want its start", i, err, second)
		}
	}
	for pod, n := range c.opened {
		if n < 2 {
			t.Errorf("pod %s's log was opened %d times; its first stream dropped", pod, n)
		}
	}
	c.mu.Unlock()
	if len(out.diag) != 3 || !strings.HasSuffix(out.diag[0], ": cephbench agent: a line of its own on stderr") {
		t.Errorf("the pods' own lines: %q", out.diag)
	}
	if left := c.left(); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A pod that fails mid-run stops the run on every pod: the error names
// it, what the others measured is kept as a partial result, and nothing
// of the run is left.
func TestAFailedPodStopsTheRun(t *testing.T) {
	c := newCluster(t)
	c.fail, c.failAfter = 1, 500*time.Millisecond
	began := time.Now()
	out, err := launch(t, c, 3, 30*time.Second)(context.Background(), Options{})
	if err == nil || !strings.Contains(err.Error(), "pod run1-1-x1 failed: OOMKilled") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a failed pod: %v; want one line naming it and why", err)
	}
	// A hang check: the run had most of its 30 s to go.
	if took := time.Since(began); took > 25*time.Second {
		t.Errorf("the run went on %s", took)
	}
	if len(out.Results) != 1 || !out.Results[0].Interrupted || len(out.Results[0].Hosts) != 2 || out.Results[0].Ops["read"].Ops == 0 {
		t.Errorf("results %+v; want the other two pods' partial result", out.Results)
	}
	if left := c.left(); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// Ctrl-C stops every pod through the ConfigMap, keeps what they measured
// and deletes the run.
func TestInterruptingTheLauncherStopsThePodsAndDeletesTheRun(t *testing.T) {
	c := newCluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	// Ctrl-C once the pods have measured a second, however slowly they
	// started.
	go func() {
		<-c.measured
		time.Sleep(500 * time.Millisecond)
		cancel()
	}()
	out, err := launch(t, c, 2, time.Minute)(ctx, Options{})
	if !errors.Is(err, step.ErrInterrupted) {
		t.Fatalf("interrupted: %v", err)
	}
	if len(out.Results) != 1 || len(out.Results[0].Hosts) != 2 || out.Results[0].Ops["read"].Ops == 0 {
		t.Errorf("results %+v; want both pods' partial results merged", out.Results)
	}
	if left := c.left(); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// Every object the launcher creates is owned by its Job, by the Job's
// UID, so the garbage collector deletes them with it when the launcher
// is killed and cannot; the Job is created first, suspended until they
// exist, and ends on its own: a deadline, and a time to live once
// finished.
func TestEveryObjectOfARunIsOwnedByItsJob(t *testing.T) {
	c := newCluster(t)
	if _, err := launch(t, c, 2, time.Second)(context.Background(), Options{}); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.created) != 5 {
		t.Fatalf("%d objects created; want the Job, the ServiceAccount, the Role, its binding and the ConfigMap", len(c.created))
	}
	job, ok := c.created[0].(*batchv1.Job)
	if !ok {
		t.Fatalf("the first object created is a %T; want the Job, so the others can be its", c.created[0])
	}
	if job.Spec.Suspend == nil || !*job.Spec.Suspend {
		t.Error("the Job was created running; want it suspended until what its pods need exists")
	}
	if ttl := job.Spec.TTLSecondsAfterFinished; ttl == nil || *ttl != int32(finishedTTL/time.Second) {
		t.Errorf("the Job's ttlSecondsAfterFinished is %v; want %v", ttl, finishedTTL)
	}
	if d := job.Spec.ActiveDeadlineSeconds; d == nil || *d != 60 {
		t.Errorf("the Job's activeDeadlineSeconds is %v; want the spec's 60", d)
	}
	for _, obj := range c.created[1:] {
		o := obj.(metav1.Object)
		refs := o.GetOwnerReferences()
		if len(refs) != 1 || refs[0].APIVersion != "batch/v1" || refs[0].Kind != "Job" || refs[0].Name != job.Name || refs[0].UID != job.UID || job.UID == "" {
			t.Errorf("%T %s is owned by %+v; want the Job %s, UID %q", obj, o.GetName(), refs, job.Name, job.UID)
		}
	}
}
