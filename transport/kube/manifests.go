// Package kube runs a job's agents on Kubernetes: one pod per node of an
// Indexed Job, with the least RBAC they need to read their run's
// ConfigMap, through which they get their job and start times, while the
// coordinator reads what they measure in their logs and merges it as
// package multihost does for hosts reached over ssh. It uses client-go,
// so it is built into cephbench-k8s, apart from the cephbench binary that
// --push-binary copies and the pods run.
package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/transport/kube/inpod"
)

// Spec is a run on Kubernetes as the user asks for it.
type Spec struct {
	// Name names the run: every object it makes is called so and
	// labelled with it; a DNS label of at most 52 characters (the Job's
	// pods add their index and a suffix).
	Name      string
	Namespace string
	// Image is the container image with cephbench in it (this version).
	Image string
	// Clients is how many pods run the job at once, one per node.
	Clients int
	// CephSecret is the Secret Rook's CephClient made (empty: the job
	// needs no Ceph credentials); CephID is the client's name, the
	// Secret's key that holds its key.
	CephSecret, CephID string
	// Deadline bounds the Job's run (its activeDeadlineSeconds), from
	// its start; it should allow for the pods' start.
	Deadline time.Duration
	// Job is what every pod runs its share of.
	Job frontend.Job
}

// Manifests are the objects of one run, in the order kubectl applies
// them (YAML); Run creates the Job first and the others owned by it.
type Manifests struct {
	ServiceAccount *corev1.ServiceAccount
	Role           *rbacv1.Role
	RoleBinding    *rbacv1.RoleBinding
	ConfigMap      *corev1.ConfigMap
	Job            *batchv1.Job
}

// Labels every object of a run carries; Selector finds them.
const (
	nameLabel      = "app.kubernetes.io/name"
	instanceLabel  = "app.kubernetes.io/instance"
	managedByLabel = "app.kubernetes.io/managed-by"
	// IndexLabel is the label the Job controller puts on each pod: its
	// completion index.
	IndexLabel = "batch.kubernetes.io/job-completion-index"
)

// Selector selects every object of run name.
func Selector(name string) string {
	return fmt.Sprintf("%s=cephbench,%s=%s", managedByLabel, instanceLabel, name)
}

func runLabels(name string) map[string]string {
	return map[string]string{nameLabel: "cephbench", instanceLabel: name, managedByLabel: "cephbench"}
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// maxConfigMap is what one ConfigMap may hold, less room for its
// metadata and the start times appended as the run goes.
const maxConfigMap = 1<<20 - 64<<10

// RookMonEndpoints is the ConfigMap in which Rook lists its monitors, in
// the cluster's namespace.
const RookMonEndpoints = "rook-ceph-mon-endpoints"

// Check refuses a spec that cannot be applied, before anything is.
func (s Spec) Check() error {
	switch {
	case len(s.Name) > 52 || !dnsLabel.MatchString(s.Name):
		return engine.Usagef("run name %q: want lower-case letters, digits and '-', at most 52", s.Name)
	case s.Namespace == "" || !dnsLabel.MatchString(s.Namespace):
		return engine.Usagef("namespace %q: want a namespace's name", s.Namespace)
	case s.Image == "":
		return engine.Usagef("no image: --image names the image with this cephbench in it")
	case s.Clients < 1:
		return engine.Usagef("%d clients: want at least one", s.Clients)
	case s.Deadline < time.Second:
		return engine.Usagef("deadline %s: want at least a second", s.Deadline)
	case s.CephSecret != "" && s.CephID == "":
		return engine.Usagef("the Ceph client's name is needed with its Secret %s", s.CephSecret)
	}
	return nil
}

// Render makes the run's objects. Its ConfigMap starts empty: each pod's
// key gets the messages the coordinator sends it (package multihost's:
// its share of the job, its start times) once the pod has said hello.
func Render(s Spec) (*Manifests, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	meta := metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: runLabels(s.Name)}
	job, err := json.Marshal(s.Job)
	if err != nil {
		return nil, err
	}
	if size := len(job) * s.Clients; size > maxConfigMap {
		return nil, engine.Usagef("the %d pods' jobs take about %d KiB, more than a ConfigMap holds: run fewer steps or clients at once", s.Clients, size>>10)
	}
	return &Manifests{
		ServiceAccount: &corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: meta},
		Role: &rbacv1.Role{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{
			// A watch restricted to one name is allowed by its
			// resourceNames when it selects metadata.name.
			APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{s.Name}, Verbs: []string{"get", "list", "watch"},
		}}},
		RoleBinding: &rbacv1.RoleBinding{
			TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: meta,
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: s.Name, Namespace: s.Namespace}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: s.Name},
		},
		ConfigMap: &corev1.ConfigMap{TypeMeta: typeMeta("v1", "ConfigMap"), ObjectMeta: meta},
		Job:       &batchv1.Job{TypeMeta: typeMeta("batch/v1", "Job"), ObjectMeta: meta, Spec: jobSpec(s)},
	}, nil
}

func typeMeta(version, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: version, Kind: kind}
}

// finishedTTL is how long a finished Job is kept (its
// ttlSecondsAfterFinished) before Kubernetes deletes it, and with it
// whatever it owns: a launcher deletes its run itself at the end, so the
// TTL counts only when the launcher was killed, and leaves time to read
// the pods' logs.
const finishedTTL = 10 * time.Minute

// jobSpec is the Indexed Job: every pod at once, one a node, none
// restarted or replaced (a lost pod is a lost host), all gone at the
// deadline, the Job itself finishedTTL after.
func jobSpec(s Spec) batchv1.JobSpec {
	n := int32(s.Clients)
	indexed := batchv1.IndexedCompletion
	deadline := int64(s.Deadline.Round(time.Second) / time.Second)
	return batchv1.JobSpec{
		CompletionMode: &indexed, Completions: &n, Parallelism: &n,
		BackoffLimit: ptr(int32(0)), ActiveDeadlineSeconds: &deadline,
		TTLSecondsAfterFinished: ptr(int32(finishedTTL / time.Second)),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: runLabels(s.Name)},
			Spec:       podSpec(s),
		},
	}
}

func podSpec(s Spec) corev1.PodSpec {
	args := []string{"k8s", "agent", "--configmap", s.Name}
	env := []corev1.EnvVar{{Name: inpod.NodeEnv, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
	var mounts []corev1.VolumeMount
	var volumes []corev1.Volume
	if s.CephSecret != "" {
		// As Rook's toolbox: the monitors from Rook's ConfigMap, the
		// key from the CephClient's Secret, the configuration written
		// in an emptyDir.
		args = append(args, "--ceph-id", s.CephID)
		env = append(env, corev1.EnvVar{Name: inpod.KeyEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: s.CephSecret}, Key: s.CephID,
		}}})
		mounts = []corev1.VolumeMount{
			{Name: "mon-endpoints", MountPath: dir(inpod.MonEndpoints), ReadOnly: true},
			{Name: "ceph-config", MountPath: inpod.CephDir},
		}
		volumes = []corev1.Volume{
			{Name: "mon-endpoints", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: RookMonEndpoints},
				Items:                []corev1.KeyToPath{{Key: "data", Path: base(inpod.MonEndpoints)}},
			}}},
			{Name: "ceph-config", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}
	}
	return corev1.PodSpec{
		ServiceAccountName: s.Name,
		RestartPolicy:      corev1.RestartPolicyNever,
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{instanceLabel: s.Name}},
				TopologyKey:   "kubernetes.io/hostname",
			}},
		}},
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65532)), RunAsGroup: ptr(int64(65532))},
		Containers: []corev1.Container{{
			Name: "agent", Image: s.Image, Command: []string{"cephbench"}, Args: args, Env: env, VolumeMounts: mounts,
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
		Volumes: volumes,
	}
}

func ptr[T any](v T) *T { return &v }

func dir(p string) string  { return p[:strings.LastIndex(p, "/")] }
func base(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// YAML is the manifests as one multi-document YAML stream, in the order
// they are applied.
func (m *Manifests) YAML() ([]byte, error) {
	var out bytes.Buffer
	for i, obj := range m.objects() {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}

func (m *Manifests) objects() []any {
	return []any{m.ServiceAccount, m.Role, m.RoleBinding, m.ConfigMap, m.Job}
}
