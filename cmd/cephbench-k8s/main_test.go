package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	batchv1 "k8s.io/api/batch/v1"
)

func runIn(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// A command line after -- is rendered as a Job of the pods asked for,
// whose deadline allows for the job's time and the pods' start, deleted
// 10 minutes after it finished; every object has the run's label.
func TestRenderACommandLine(t *testing.T) {
	code, out, errs := runIn(t, "render", "--clients", "2", "-n", "bench", "--image", "cephbench:v1", "--name", "run1",
		"--ceph-secret", "rook-ceph-client-bench", "--", "bench", "--target", "null://", "--duration", "60s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	docs := strings.Split(out, "\n---\n")
	if len(docs) != 5 {
		t.Fatalf("%d documents", len(docs))
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[4]), &job); err != nil {
		t.Fatal(err)
	}
	if got := *job.Spec.ActiveDeadlineSeconds; got != 60+300+120 {
		t.Errorf("deadline %ds; want the job's 60 s, the 5 min start timeout and 2 min", got)
	}
	if ttl := job.Spec.TTLSecondsAfterFinished; ttl == nil || *ttl != 600 {
		t.Errorf("ttlSecondsAfterFinished %v; want the finished Job deleted after 10 min", ttl)
	}
	for i, doc := range docs {
		if !strings.Contains(doc, "\n    app.kubernetes.io/instance: run1\n") {
			t.Errorf("document %d has not the run's label to delete it by:\n%s", i+1, doc)
		}
	}
	if args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "); !strings.HasSuffix(args, "--ceph-id bench") {
		t.Errorf("args %q; want the client named from its Secret", args)
	}
	if job.Name != "run1" || job.Namespace != "bench" || *job.Spec.Completions != 2 {
		t.Errorf("job %s/%s of %d pods; want bench/run1 of 2", job.Namespace, job.Name, *job.Spec.Completions)
	}
}

// Bad input is one line and exit 2, before any cluster is reached.
func TestBadInputIsRefusedInOneLine(t *testing.T) {
	job := filepath.Join(t.TempDir(), "job.json")
	os.WriteFile(job, []byte(`{"command":"bench","steps":[]}`), 0o644)
	base := []string{"render", "--clients", "2", "-n", "bench", "--image", "i"}
	for name, args := range map[string][]string{
		"no verb":        {"--clients", "2"},
		"no job":         base,
		"both":           append(append([]string{}, base...), "--job-file", job, "--", "bench"),
		"empty job":      append(append([]string{}, base...), "--job-file", job),
		"bad command":    append(append([]string{}, base...), "--", "bench", "--bs", "huge"),
		"unknown length": append(append([]string{}, base...), "--", "bench", "--target", "null://", "--ops", "1000"),
		"no clients":     {"render", "-n", "bench", "--image", "i", "--", "bench", "--target", "null://"},
		"bad flag":       append(append([]string{}, base...), "--colour"),
	} {
		code, out, errs := runIn(t, args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "cephbench: ") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line", name, code, out, errs)
		}
	}
}

// The image is built as make builds cephbench: the same tags and version
// stamp, on Debian 12 with Ceph's client libraries, as the user the pods
// run as.
func TestContainerfileBuildsAsMakeDoes(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := os.ReadFile("../../deploy/Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	tags := regexp.MustCompile(`(?m)^TAGS := (\S+)$`).FindSubmatch(mk)
	ldflags := regexp.MustCompile(`(?m)^LDFLAGS := -X (\S+)=\$\(VERSION\)$`).FindSubmatch(mk)
	if tags == nil || ldflags == nil {
		t.Fatal("the Makefile's TAGS or LDFLAGS changed shape")
	}
	build := `go build -tags ` + string(tags[1]) + ` -ldflags "-X ` + string(ldflags[1]) + `=${VERSION}" -o /out/cephbench ./cmd/cephbench`
	text := string(cf)
	for _, want := range []string{build, "FROM docker.io/library/debian:12-slim", "librados2 librbd1 libcephfs2", "librados-dev", "librbd-dev", "libcephfs-dev", "COPY --from=build /out/cephbench /usr/local/bin/cephbench", "USER 65532:65532"} {
		if !strings.Contains(text, want) {
			t.Errorf("the Containerfile lacks %q", want)
		}
	}
	if n := strings.Count(text, "\nFROM "); n != 2 {
		t.Errorf("%d stages; want a build stage and a runtime one", n)
	}
}

// --help and -h, alone or after a verb and other flags, print the usage
// and the flags on stdout and exit 0.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"-h"}, {"render", "--help"}, {"render", "-h"}, {"run", "--help"}, {"run", "-h"},
		{"render", "--clients", "2", "--help"},
	} {
		code, out, errs := runIn(t, args...)
		if code != 0 || !strings.HasPrefix(out, "usage: cephbench k8s render|run ") || !strings.Contains(out, "--clients int") || errs != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 0 and the usage with the flags", strings.Join(args, " "), code, out, errs)
		}
	}
}
