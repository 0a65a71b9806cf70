package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/frontend"
	"github.com/cephbench/cephbench/result"
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
		"negative op timeout": {[]string{"s3", "bench", "--put", "--op-timeout", "-1s", "s3://bench"}, "negative"},
		"bad op timeout":      {[]string{"s3", "bench", "--put", "--op-timeout", "soon", "s3://bench"}, "soon"},
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

// hangingS3 is an S3 service in memory, on 127.0.0.1, that answers
// everything until it has taken puts data puts (of rados bench's
// benchmark_data_ objects), and then never answers a put: each waits
// until its client gives up.
func hangingS3(t *testing.T, puts int) {
	t.Helper()
	var mu sync.Mutex
	objects := map[string][]byte{}
	taken := 0
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		q := r.URL.Query()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == http.MethodPut && key != "":
			b, _ := io.ReadAll(r.Body)
			if strings.HasPrefix(key, "benchmark_data_") {
				if taken++; taken > puts {
					mu.Unlock()
					select {
					case <-r.Context().Done():
					case <-stop:
					}
					mu.Lock()
					return
				}
			}
			objects[key] = b
			w.Header().Set("ETag", `"0"`)
		case r.Method == http.MethodGet && q.Has("location"):
			fmt.Fprint(w, `<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></LocationConstraint>`)
		case r.Method == http.MethodGet && key == "":
			fmt.Fprint(w, `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bench</Name><IsTruncated>false</IsTruncated>`)
			for k, b := range objects {
				if strings.HasPrefix(k, q.Get("prefix")) {
					fmt.Fprintf(w, `<Contents><Key>%s</Key><Size>%d</Size></Contents>`, k, len(b))
				}
			}
			fmt.Fprint(w, `</ListBucketResult>`)
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			b, ok := objects[key]
			if !ok && key != "" {
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `<Error><Code>NoSuchKey</Code></Error>`)
				return
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			w.Write(b)
		case r.Method == http.MethodDelete:
			delete(objects, key)
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodPost && q.Has("delete"):
			var req struct {
				Objects []struct{ Key string } `xml:"Object"`
			}
			_ = xml.NewDecoder(r.Body).Decode(&req)
			fmt.Fprint(w, `<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
			for _, o := range req.Objects {
				delete(objects, o.Key)
				fmt.Fprintf(w, `<Deleted><Key>%s</Key></Deleted>`, o.Key)
			}
			fmt.Fprint(w, `</DeleteResult>`)
		default:
			t.Errorf("the fake S3 service does not answer %s %s", r.Method, r.URL)
			w.WriteHeader(http.StatusNotImplemented)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // first: Close waits for the puts left waiting
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDHANG")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secrethang")
	t.Setenv("AWS_REGION", "us-east-1")
}

// An S3 service that stops answering puts mid-run: each put left waiting
// fails after --op-timeout and is counted as a timeout, and the run ends
// within the op timeout of its planned end, where it waited for the
// engine's 60 s default before.
func TestS3BenchOpTimeoutEndsARunWhoseServiceStopsAnswering(t *testing.T) {
	hangingS3(t, 20)
	results := t.TempDir()
	begin := time.Now()
	code, stdout, stderr := cephbench(t, context.Background(), "s3", "bench", "--put", "--obj-size", "4K", "--concurrent", "4",
		"--duration", "3s", "--op-timeout", "2s", "--results", results, "s3://bench")
	took := time.Since(begin)
	files, _ := filepath.Glob(filepath.Join(results, "*", "*.json"))
	var phase []string
	for _, f := range files {
		if filepath.Base(f) != "manifest.json" {
			phase = append(phase, f)
		}
	}
	if len(phase) != 1 {
		t.Fatalf("exit %d after %v, results %v\n%s\n%s", code, took, files, stdout, stderr)
	}
	r, err := result.Load(phase[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exit %d after %.1fs; run %s to %s; puts %d, failed %d, errors %v; notes %q", code, took.Seconds(),
		r.Start.Format("15:04:05.0"), r.End.Format("15:04:05.0"), r.Ops["put"].Ops, r.Ops["put"].Errors, r.Errors, r.Notes)
	// A hang check, not a speed check: the 60 s default would pass none.
	if limit := 3*time.Second + 2*time.Second + 30*time.Second; took > limit {
		t.Errorf("the command took %v; want within %v", took, limit)
	}
	// Each of the 4 workers is left waiting at least once.
	if put := r.Ops["put"]; put.Ops != 20 || put.Errors < 4 || r.Errors["timeout"] != put.Errors {
		t.Errorf("%d puts, %d failed, errors %v: want the 20 the service took, then every put timed out", put.Ops, put.Errors, r.Errors)
	}
	if code != ExitOK {
		t.Errorf("exit %d; want 0, the timeouts counted in the result\n%s", code, stderr)
	}
	if notes := strings.Join(r.Notes, " | "); !strings.Contains(notes, "an op timed out after 2s") {
		t.Errorf("notes %q do not name the op timeout", notes)
	}
}
