package kube

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// podState is what the launcher knows of the pod of one index.
type podState struct {
	name    string
	phase   corev1.PodPhase
	why     string    // why it failed or waits, in the cluster's words
	since   time.Time // when it was first seen
	deleted bool      // it was seen, and is gone
}

// started says whether the pod's container has run, so that it has a
// log to read.
func (p podState) started() bool {
	return p.phase == corev1.PodRunning || p.phase == corev1.PodSucceeded || p.phase == corev1.PodFailed
}

// lost is why the pod can no longer serve its agent, or nil.
func (p podState) lost() error {
	switch {
	case p.deleted:
		return fmt.Errorf("pod %s was deleted", p.name)
	case p.phase == corev1.PodFailed:
		return fmt.Errorf("pod %s failed: %s", p.name, p.why)
	}
	return nil
}

// podWatch keeps the state of a run's pods, listed by its labels every
// poll. Its methods are safe for concurrent use.
type podWatch struct {
	pods     corev1client.PodInterface
	selector string
	poll     time.Duration

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each change
	byIndex map[int]podState
}

func newPodWatch(pods corev1client.PodInterface, selector string, poll time.Duration) *podWatch {
	return &podWatch{pods: pods, selector: selector, poll: poll, changed: make(chan struct{}), byIndex: map[int]podState{}}
}

// run lists the pods until ctx ends.
func (w *podWatch) run(ctx context.Context) {
	tick := time.NewTicker(w.poll)
	defer tick.Stop()
	for {
		list, err := w.pods.List(ctx, metav1.ListOptions{LabelSelector: w.selector})
		if ctx.Err() != nil {
			return
		}
		w.update(list, err)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (w *podWatch) update(list *corev1.PodList, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { close(w.changed); w.changed = make(chan struct{}) }()
	if err != nil {
		return // the last list stands: a lost API server shows as silent pods
	}
	seen := map[int]bool{}
	for _, p := range list.Items {
		i, err := strconv.Atoi(p.Labels[IndexLabel])
		if err != nil {
			continue
		}
		seen[i] = true
		// Its age counts from when it was first seen: the API server's
		// clock is not this host's.
		st := podState{name: p.Name, phase: p.Status.Phase, why: why(p), since: time.Now()}
		if old, ok := w.byIndex[i]; ok && old.name == p.Name {
			st.since = old.since
		}
		if p.DeletionTimestamp != nil {
			st.deleted = true
		}
		w.byIndex[i] = st
	}
	for i, st := range w.byIndex {
		if !seen[i] {
			st.deleted = true
			w.byIndex[i] = st
		}
	}
}

// why is what the cluster says of a pod that failed or waits: its
// reason and message, its container's, or its scheduling condition's.
func why(p corev1.Pod) string {
	for _, c := range p.Status.ContainerStatuses {
		if t := c.State.Terminated; t != nil && t.ExitCode != 0 {
			return strings.TrimSpace(fmt.Sprintf("%s (exit %d) %s", t.Reason, t.ExitCode, t.Message))
		}
		if wt := c.State.Waiting; wt != nil && wt.Reason != "" {
			return strings.TrimSpace(wt.Reason + " " + wt.Message)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Status == corev1.ConditionFalse && c.Message != "" {
			return c.Message
		}
	}
	if p.Status.Reason != "" || p.Status.Message != "" {
		return strings.TrimSpace(p.Status.Reason + " " + p.Status.Message)
	}
	return string(p.Status.Phase)
}

// get is the state of pod i's, whether it exists yet, and a channel
// closed at the next change.
func (w *podWatch) get(i int) (podState, bool, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	st, ok := w.byIndex[i]
	return st, ok, w.changed
}

// waitStarted waits until pod i has started, and returns its state; an
// error if it is lost first, ctx ends, or it is still not running
// patience after it was made (or, if it is never made, after the wait
// began).
func (w *podWatch) waitStarted(ctx context.Context, i int, patience time.Duration) (podState, error) {
	began := time.Now()
	for {
		st, ok, changed := w.get(i)
		switch {
		case ok && st.lost() != nil:
			return st, st.lost()
		case ok && st.started():
			return st, nil
		case ok && time.Since(st.since) > patience:
			return st, fmt.Errorf("pod %s did not start in %s: %s", st.name, patience, st.why)
		case !ok && time.Since(began) > patience:
			return st, fmt.Errorf("no pod of index %d after %s (kubectl describe job says why)", i, patience)
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-changed:
		}
	}
}
