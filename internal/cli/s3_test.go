package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/frontend"
)

// Bad s3 command lines fail on one line with exit 2 before any request:
// the endpoint here would refuse every connection.
func TestS3BadInputIsOneLineAndExit2(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDBADINPUT")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secretbadinput")
	dir := t.TempDir()
	cases := map[string]struct {
		args []string
		want string
	}{
		"nothing to do":       {[]string{"s3", "bench", "s3://bench"}, "nothing to do"},
		"mix sum":             {[]string{"s3", "bench", "--mixed", "get=45,put=15", "s3://bench"}, "sum to 60"},
		"mix kind":            {[]string{"s3", "bench", "--mixed", "get=50,copy=50", "s3://bench"}, "--mixed"},
		"mix twice":           {[]string{"s3", "bench", "--mixed", "get=50,get=50", "s3://bench"}, "twice"},
		"mix percentage":      {[]string{"s3", "bench", "--mixed", "get=150,put=-50", "s3://bench"}, "percentage"},
		"mix with phases":     {[]string{"s3", "bench", "--put", "--mixed", "get=100", "s3://bench"}, "phase of its own"},
		"zero concurrency":    {[]string{"s3", "bench", "--put", "--concurrent", "0", "s3://bench"}, "--concurrent"},
		"zero duration":       {[]string{"s3", "bench", "--put", "--duration", "0", "s3://bench"}, "--duration"},
		"bad size":            {[]string{"s3", "bench", "--put", "--obj-size", "4Q", "s3://bench"}, "4Q"},
		"huge size":           {[]string{"s3", "bench", "--put", "--obj-size", "2G", "s3://bench"}, "--obj-size"},
		"put nothing":         {[]string{"s3", "bench", "--put", "--objects", "0", "s3://bench"}, "--objects 0"},
		"keep deletes":        {[]string{"s3", "bench", "--put", "--delete", "--keep", "s3://bench"}, "--keep"},
		"not s3":              {[]string{"s3", "bench", "--get", "rados://bench"}, "s3://BUCKET"},
		"no bucket":           {[]string{"s3", "bench", "--get", "s3://"}, "no bucket"},
		"bad bucket":          {[]string{"s3", "bench", "--get", "s3://Bench_1"}, "bucket name"},
		"bad addressing":      {[]string{"s3", "bench", "--get", "--addressing", "dns", "s3://bench"}, "--addressing"},
		"bad endpoint":        {[]string{"s3", "bench", "--get", "--endpoint", "127.0.0.1:7480", "s3://bench"}, "http://"},
		"keys in the target":  {[]string{"s3", "bench", "--get", "s3://bench?secret_key=hush"}, "credentials never go in the target"},
		"half the keys":       {[]string{"s3", "bench", "--get", "--access-key", "AKIDFLAG", "s3://bench"}, "both"},
		"unreachable":         {[]string{"s3", "bench", "--get", "s3://bench"}, "cannot reach http://127.0.0.1:1"},
		"cleanup unreachable": {[]string{"s3", "cleanup", "s3://bench"}, "cannot reach"},
	}
	for name, c := range cases {
		args := c.args
		if args[1] == "bench" {
			args = append(args, "--results", dir+"/results")
		}
		code, stdout, stderr := cephbench(t, context.Background(), args...)
		wantUsageError(t, name, code, stdout, stderr)
		if !strings.Contains(stderr, c.want) {
			t.Errorf("%s: %q does not say %q", name, stderr, c.want)
		}
		for _, secret := range []string{"secretbadinput", "AKIDBADINPUT", "hush"} {
			if strings.Contains(stderr, secret) {
				t.Errorf("%s: the error shows a credential: %s", name, stderr)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad input left files behind: %v", entries)
	}
}

func TestS3NoEndpointSaysWhereToGiveOne(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "")
	code, _, stderr := cephbench(t, context.Background(), "s3", "bench", "--get", "s3://bench")
	if code != ExitUsage || !strings.Contains(stderr, "--endpoint") || !strings.Contains(stderr, "AWS_ENDPOINT_URL") {
		t.Errorf("exit %d, %q; want exit 2 and an error naming --endpoint and AWS_ENDPOINT_URL", code, stderr)
	}
}

// A plan reads an s3 bench command line into a job without a request,
// even one that reads kept objects, whose size only the service knows:
// the endpoint here, from the command's environment, would refuse every
// connection. The job runs a duration per phase and holds none of the
// environment's keys.
func TestS3BenchCommandLineIsAJobWithoutIO(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDPARSEONLY")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secretparseonly")
	getenv := func(k string) string {
		if k == "AWS_ENDPOINT_URL" {
			return "http://127.0.0.1:1"
		}
		return os.Getenv(k)
	}
	var j frontend.Job
	results := t.TempDir()
	code := Main(context.Background(), Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: getenv, parsed: &j},
		[]string{"s3", "bench", "--get", "--list", "--objects", "0", "--duration", "30s", "--results", results, "s3://bench/kept"})
	if code != ExitOK || len(j.Steps) != 2 {
		t.Fatalf("exit %d, %d steps; want exit 0 and the two phases, parsed without a request", code, len(j.Steps))
	}
	if loc := j.Steps[0].Workload.Target.Location; !strings.Contains(loc, "endpoint=http%3A%2F%2F127.0.0.1%3A1") {
		t.Errorf("the job's target %s does not name the endpoint of the command's environment", loc)
	}
	if d, exact := frontend.Estimate(j); d != time.Minute || !exact {
		t.Errorf("estimate %s (exact %v); want 1m0s exactly: two phases of 30s", d, exact)
	}
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"AKIDPARSEONLY", "secretparseonly"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the job holds a key of the environment: %s", b)
		}
	}
	if entries, _ := os.ReadDir(results); len(entries) != 0 {
		t.Errorf("parsing wrote %v", entries)
	}
}
