package kube

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	_ "github.com/cephbench/cephbench/engine/null"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
	"github.com/cephbench/cephbench/transport/kube/inpod"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func nullJob(d time.Duration) frontend.Job {
	w := spec.Workload{
		Target: spec.Target{Scheme: "null"}, Pattern: spec.Random, ReadPercent: 100, BlockSize: 4096,
		Workers: 1, QueueDepth: 4, Duration: spec.Duration(d), RateIOPS: 3000,
	}
	return frontend.Job{Command: "bench", Steps: []step.Step{{Name: "many", Workload: w, Front: step.Front{Command: "bench"}}}}
}

func testSpec() Spec {
	return Spec{
		Name: "cephbench-test", Namespace: "rook-ceph", Image: "registry.example/cephbench:v1", Clients: 3,
		CephSecret: "rook-ceph-client-bench", CephID: "bench", Deadline: 10*time.Minute + 30*time.Second, Job: nullJob(30 * time.Second),
	}
}

// decodeStrict decodes each document of y into its API type, unknown
// fields being errors.
func decodeStrict(t *testing.T, y []byte) *Manifests {
	t.Helper()
	docs := strings.Split(string(y), "\n---\n")
	got := &Manifests{ServiceAccount: &corev1.ServiceAccount{}, Role: &rbacv1.Role{}, RoleBinding: &rbacv1.RoleBinding{}, ConfigMap: &corev1.ConfigMap{}, Job: &batchv1.Job{}}
	objs := got.objects()
	if len(docs) != len(objs) {
		t.Fatalf("%d documents; want %d", len(docs), len(objs))
	}
	for i, doc := range docs {
		if err := yaml.UnmarshalStrict([]byte(doc), objs[i]); err != nil {
			t.Fatalf("document %d does not decode strictly: %v\n%s", i+1, err, doc)
		}
	}
	return got
}

// The rendered manifests are the golden ones, and each document decodes
// strictly into its API type and back to what was rendered.
func TestRenderedManifestsDecodeStrictly(t *testing.T) {
	m, err := Render(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	y, err := m.YAML()
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/render.yaml"
	if *update {
		os.WriteFile(golden, y, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(y, want) {
		t.Errorf("the manifests differ from %s (go test -update rewrites it):\n%s", golden, y)
	}
	got := decodeStrict(t, y)
	for i, obj := range got.objects() {
		if !equality.Semantic.DeepEqual(obj, m.objects()[i]) {
			t.Errorf("document %d decodes to %+v; rendered %+v", i+1, obj, m.objects()[i])
		}
	}
	for i, kind := range []string{"ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Job"} {
		if !strings.Contains(strings.Split(string(y), "\n---\n")[i], "kind: "+kind+"\n") {
			t.Errorf("document %d is not the %s", i+1, kind)
		}
	}

	// A field the API does not have is refused, so the check above can fail.
	bad := strings.Replace(string(y), "backoffLimit: 0", "backoffLimit: 0\n    backofLimit: 3", 1)
	if err := yaml.UnmarshalStrict([]byte(strings.Split(bad, "\n---\n")[4]), &batchv1.Job{}); err == nil {
		t.Error("an unknown field decoded")
	}
}

// What the manifests promise: an Indexed Job of one pod per node, none
// retried, a deadline; a Role that reads the run's ConfigMap alone; the
// Ceph key from the CephClient's Secret.
func TestManifestsAskForOnePodANodeAndTheLeastRights(t *testing.T) {
	s := testSpec()
	m, err := Render(s)
	if err != nil {
		t.Fatal(err)
	}
	js := m.Job.Spec
	if *js.CompletionMode != batchv1.IndexedCompletion || *js.Completions != 3 || *js.Parallelism != 3 || *js.BackoffLimit != 0 ||
		*js.ActiveDeadlineSeconds != 630 || js.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("job spec %+v", js)
	}
	anti := js.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(anti) != 1 || anti[0].TopologyKey != "kubernetes.io/hostname" || anti[0].LabelSelector.MatchLabels[instanceLabel] != s.Name {
		t.Errorf("anti-affinity %+v; want one pod of the run per node", anti)
	}
	rules := m.Role.Rules
	if len(rules) != 1 || strings.Join(rules[0].ResourceNames, ",") != s.Name || strings.Join(rules[0].Resources, ",") != "configmaps" ||
		strings.Join(rules[0].Verbs, ",") != "get,list,watch" {
		t.Errorf("role rules %+v; want reading the run's ConfigMap only", rules)
	}
	if m.RoleBinding.Subjects[0].Name != js.Template.Spec.ServiceAccountName || m.RoleBinding.RoleRef.Name != m.Role.Name {
		t.Error("the binding does not give the pods' service account the role")
	}
	c := js.Template.Spec.Containers[0]
	key := c.Env[1].ValueFrom.SecretKeyRef
	if c.Env[1].Name != inpod.KeyEnv || key.Name != "rook-ceph-client-bench" || key.Key != "bench" {
		t.Errorf("the key comes from %+v; want the CephClient's Secret, under the client's name", key)
	}
	if strings.Join(c.Args, " ") != "k8s agent --configmap cephbench-test --ceph-id bench" {
		t.Errorf("args %q", c.Args)
	}
}

func TestBadSpecsAreRefusedBeforeAnything(t *testing.T) {
	for name, change := range map[string]func(*Spec){
		"name":      func(s *Spec) { s.Name = "Bench_1" },
		"namespace": func(s *Spec) { s.Namespace = "" },
		"image":     func(s *Spec) { s.Image = "" },
		"clients":   func(s *Spec) { s.Clients = 0 },
		"deadline":  func(s *Spec) { s.Deadline = 0 },
		"ceph id":   func(s *Spec) { s.CephID = "" },
		"too big":   func(s *Spec) { s.Clients = 5000 },
	} {
		s := testSpec()
		change(&s)
		if _, err := Render(s); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line", name, err)
		}
	}
}

// Rendered for kubectl, the objects cannot name the Job's UID, which
// only the API server gives: each carries the run's labels, by which
// one kubectl delete removes them all, and the Job still ends on its own,
// at its deadline, and is deleted finishedTTL after.
func TestRenderedObjectsCarryTheRunsLabelsAndTheJobItsTTL(t *testing.T) {
	s := testSpec()
	m, err := Render(s)
	if err != nil {
		t.Fatal(err)
	}
	y, err := m.YAML()
	if err != nil {
		t.Fatal(err)
	}
	got := decodeStrict(t, y)
	sel, err := labels.Parse(Selector(s.Name))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range got.objects() {
		o := obj.(metav1.Object)
		if !sel.Matches(labels.Set(o.GetLabels())) {
			t.Errorf("%T %s is labelled %v; want the run's labels (%s)", obj, o.GetName(), o.GetLabels(), Selector(s.Name))
		}
	}
	if !sel.Matches(labels.Set(got.Job.Spec.Template.Labels)) {
		t.Errorf("the pods are labelled %v; want the run's labels", got.Job.Spec.Template.Labels)
	}
	js := got.Job.Spec
	if js.TTLSecondsAfterFinished == nil || *js.TTLSecondsAfterFinished != 600 || js.ActiveDeadlineSeconds == nil || *js.ActiveDeadlineSeconds != 630 {
		t.Errorf("the Job's ttlSecondsAfterFinished %v, activeDeadlineSeconds %v; want 600 and 630", js.TTLSecondsAfterFinished, js.ActiveDeadlineSeconds)
	}
	if js.Suspend != nil && *js.Suspend {
		t.Error("the rendered Job is suspended: kubectl apply would start nothing")
	}
}
