//go:build ceph

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/result"
)

// s3Keys lists the keys in bucket; nil when it does not exist.
func s3Keys(t *testing.T, c *minio.Client, bucket string) []string {
	t.Helper()
	var keys []string
	for obj := range c.ListObjects(t.Context(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if minio.ToErrorResponse(obj.Err).Code == minio.NoSuchBucket {
			return nil
		}
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	return keys
}

func bucketExists(t *testing.T, c *minio.Client, bucket string) bool {
	t.Helper()
	ok, err := c.BucketExists(t.Context(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func putForeign(t *testing.T, c *minio.Client, bucket string, keys ...string) {
	t.Helper()
	if !bucketExists(t, c, bucket) {
		if err := c.MakeBucket(t.Context(), bucket, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range keys {
		data := []byte("someone else's")
		if _, err := c.PutObject(t.Context(), bucket, k, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// s3Results loads the results a run saved under dir.
func s3Results(t *testing.T, dir string) []*result.Result {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*-s3-bench", "*.json"))
	var all []*result.Result
	for _, f := range files {
		r, err := result.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	return all
}

// noCredentials fails the test if the keys appear in out or in a file
// under dir.
func noCredentials(t *testing.T, dir string, out ...string) {
	t.Helper()
	secrets := []string{os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")}
	_ = filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(path)
			out = append(out, string(b))
		}
		return nil
	})
	for _, s := range secrets {
		for _, o := range out {
			if strings.Contains(o, s) {
				t.Errorf("a credential appears in the output or a saved result:\n%s", o)
			}
		}
	}
}

// With the keys given as flags: put, then get, in a bucket the run
// creates; verified gets, their time to first byte, a result per phase,
// and nothing left behind, the bucket included. The keys appear nowhere.
func TestS3BenchPutGetWithFlagKeys(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbcli")
	results := t.TempDir()
	access, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	code, out, errOut := cephbench(t, context.Background(), "s3", "bench", "--put", "--get", "--obj-size", "64K",
		"--concurrent", "4", "--duration", "1s", "--access-key", access, "--secret-key", secret, "--results", results,
		"s3://"+bucket+"/run")
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"== s3-put:", "== s3-get:", "sec Cur ops   started  finished  avg MB/s", "  put ", "  get ",
		"  get-ttfb ", "p99", "result saved to ", "STEP", "results: "} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	rs := s3Results(t, results)
	if len(rs) != 2 || rs[0].Name != "s3-put" || rs[1].Name != "s3-get" {
		t.Fatalf("%d results; want s3-put and s3-get", len(rs))
	}
	put, get, ttfb := rs[0].Ops["put"], rs[1].Ops["get"], rs[1].Ops["get-ttfb"]
	if put.Ops == 0 || put.Errors != 0 || get.Ops == 0 || get.Errors != 0 {
		t.Errorf("put %d ops, %d errors; get %d ops, %d errors (verified); want ops and no errors", put.Ops, put.Errors, get.Ops, get.Errors)
	}
	if ttfb.Ops != get.Ops || ttfb.Latency.MeanNs <= 0 || ttfb.Latency.MeanNs > get.Latency.MeanNs || rs[1].Histograms["get-ttfb"] == "" {
		t.Errorf("get-ttfb: %d ops, mean %.0fns; want one per get (%d), no later than the last byte (mean %.0fns)",
			ttfb.Ops, ttfb.Latency.MeanNs, get.Ops, get.Latency.MeanNs)
	}
	if loc := rs[1].Spec.Target.Location; !strings.Contains(loc, url.QueryEscape(os.Getenv("AWS_ENDPOINT_URL"))) {
		t.Errorf("the result's target %q does not say which endpoint was measured", loc)
	}
	if bucketExists(t, c, bucket) {
		t.Errorf("the bucket the run created is still there, holding %v", s3Keys(t, c, bucket))
	}
	noCredentials(t, results, out, errOut)
}

// A bucket that was there keeps itself and its other objects, whatever
// the run put and deleted next to them; every kind of the mix is
// measured.
func TestS3BenchMixedKeepsForeignObjects(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbcli")
	foreign := []string{"mix/benchmark_data_elsewhere_1_object0", "mix/precious", "precious"}
	putForeign(t, c, bucket, foreign...)
	results := t.TempDir()
	code, out, errOut := cephbench(t, context.Background(), "s3", "bench", "--mixed", "get=45,put=15,delete=10,list=5,stat=25",
		"--obj-size", "16K", "--objects", "50", "--concurrent", "8", "--duration", "2s", "--results", results, "s3://"+bucket+"/mix")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	rs := s3Results(t, results)
	if len(rs) != 1 {
		t.Fatalf("%d results; want 1", len(rs))
	}
	for _, kind := range []string{"get", "get-ttfb", "put", "delete", "list", "stat"} {
		if s := rs[0].Ops[kind]; s.Ops == 0 || s.Errors != 0 {
			t.Errorf("%s: %d ops, %d errors; want ops and no errors\n%s", kind, s.Ops, s.Errors, out)
		}
	}
	if got := s3Keys(t, c, bucket); !slices.Equal(got, foreign) {
		t.Errorf("after the run the bucket holds %v; want only what was there before, %v", got, foreign)
	}
	get, ttfb := rs[0].Ops["get"].Latency.Percentiles, rs[0].Ops["get-ttfb"].Latency.Percentiles
	for _, p := range []float64{50, 99} {
		if ttfb.At(p) <= 0 || ttfb.At(p) > get.At(p) {
			t.Errorf("get-ttfb p%g %dns, get p%g %dns; want a first byte no later than the last", p, ttfb.At(p), p, get.At(p))
		}
	}
	ttfbLine := regexp.MustCompile(`\n  get-ttfb \d+ ops, .* p50 \S+ p99 \S+ p99\.9 `)
	if !ttfbLine.MatchString(out) || !strings.Contains(out, "(get-ttfb: from each get's start to the first byte of its response; get: to its last byte)") {
		t.Errorf("the summary does not show get-ttfb's percentiles and what they mean:\n%s", out)
	}
	noCredentials(t, results, out, errOut)
}

// A plan step that runs a mixed s3 bench draws the live line, which
// counts each get once.
func TestS3BenchMixedPlanStepShowsLiveLine(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbcli")
	plan := writePlan(t, "name: live\nsteps:\n  - name: a\n    run: s3 bench --mixed get=50,put=20,stat=20,delete=10 "+
		"--obj-size 4K --objects 20 --concurrent 4 --duration 2s s3://"+bucket+"/live\n")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), Env{Stdout: &stdout, Stderr: &stderr, StderrTerminal: true},
		[]string{"run", plan, "--out", filepath.Join(t.TempDir(), "r")})
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "\r\x1b[K[1/1] a #1 s3-mixed  1s of 2s, 1s left  now ") {
		t.Errorf("no live line for the mixed s3 bench; stderr %q", stderr.String())
	}
}

// --put --keep leaves the objects and a record of them; --get --objects
// 0 reads them; s3 cleanup removes them and the bucket the put created.
func TestS3BenchKeepThenGetThenCleanup(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbcli")
	target := "s3://" + bucket + "/kept"
	results := t.TempDir()
	code, out, errOut := cephbench(t, context.Background(), "s3", "bench", "--put", "--keep", "--objects", "20", "--obj-size", "16K",
		"--concurrent", "4", "--duration", "1m", "--results", results, target)
	if code != 0 {
		t.Fatalf("put --keep: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "stopped: no more objects") {
		t.Errorf("a put of at most 20 objects did not stop at 20:\n%s", out)
	}
	if n := len(s3Keys(t, c, bucket)); n != 21 {
		t.Fatalf("after a kept put of 20 objects the bucket holds %d keys; want 20 and the metadata object", n)
	}
	code, out, errOut = cephbench(t, context.Background(), "s3", "bench", "--get", "--list", "--objects", "0",
		"--concurrent", "4", "--duration", "1s", "--results", results, target)
	if code != 0 {
		t.Fatalf("get --objects 0: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "of 20 in s3://"+bucket+"/kept/") {
		t.Errorf("the get did not read the 20 kept objects:\n%s", out)
	}
	for _, r := range s3Results(t, results) {
		for kind, s := range r.Ops {
			if s.Errors != 0 {
				t.Errorf("%s: %s: %d errors", r.Name, kind, s.Errors)
			}
		}
	}
	if n := len(s3Keys(t, c, bucket)); n != 21 {
		t.Errorf("reading kept objects changed the bucket: %d keys", n)
	}
	code, out, errOut = cephbench(t, context.Background(), "s3", "bench", "--get", "--objects", "0", "--obj-size", "4K",
		"--duration", "1s", "--results", results, target)
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "are 16K, not --obj-size 4K") {
		t.Errorf("get --objects 0 --obj-size 4K of 16K objects: exit %d, stdout %q, stderr %q; want exit 2 naming both sizes", code, out, errOut)
	}
	code, out, errOut = cephbench(t, context.Background(), "s3", "cleanup", target)
	if code != 0 || !strings.Contains(out, "Removed 20 objects") {
		t.Fatalf("cleanup: exit %d\n%s\n%s", code, out, errOut)
	}
	if bucketExists(t, c, bucket) {
		t.Errorf("the bucket the kept put created is still there: %v", s3Keys(t, c, bucket))
	}
}

func TestS3BenchRefusals(t *testing.T) {
	c := cephtest.RGW(t)
	empty := cephtest.Bucket(t, c, "cbcli")
	putForeign(t, c, empty)
	cases := map[string]struct {
		args []string
		want string
	}{
		"wrong access key":       {[]string{"--get", "--access-key", "AKIDNOSUCHKEY", "--secret-key", "wrongsecretvalue", "s3://" + empty}, "InvalidAccessKeyId"},
		"wrong secret":           {[]string{"--get", "--access-key", os.Getenv("AWS_ACCESS_KEY_ID"), "--secret-key", "wrongsecretvalue", "s3://" + empty}, "SignatureDoesNotMatch"},
		"unknown bucket":         {[]string{"--get", "--objects", "0", "s3://cbcli-no-such-bucket"}, "does not exist"},
		"nothing kept":           {[]string{"--list", "--objects", "0", "s3://" + empty}, "no objects kept"},
		"https on an http port":  {[]string{"--put", "--endpoint", strings.Replace(os.Getenv("AWS_ENDPOINT_URL"), "http:", "https:", 1), "s3://" + empty}, "cannot reach"},
		"virtual-hosted by a IP": {[]string{"--put", "--addressing", "virtual", "s3://" + empty}, "s3:"},
	}
	for name, cs := range cases {
		results := t.TempDir()
		code, out, errOut := cephbench(t, context.Background(), append([]string{"s3", "bench", "--results", results}, cs.args...)...)
		if code != ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, cs.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line saying %q", name, code, out, errOut, cs.want)
		}
		if strings.Contains(errOut, "wrongsecretvalue") {
			t.Errorf("%s: the error shows the secret key: %s", name, errOut)
		}
		noCredentials(t, results, out, errOut)
	}
	if keys := s3Keys(t, c, empty); len(keys) != 0 {
		t.Errorf("refused runs wrote %v", keys)
	}
}

// tlsProxy serves radosgw over https with a certificate no one trusts.
func tlsProxy(t *testing.T) string {
	t.Helper()
	rgw, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(rgw)
		r.Out.Host = r.In.Host // the client signed it
	}})
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is the test
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestS3BenchHTTPS(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbcli")
	endpoint := tlsProxy(t)
	results := t.TempDir()
	args := []string{"s3", "bench", "--put", "--objects", "5", "--obj-size", "4K", "--duration", "1m", "--endpoint", endpoint,
		"--results", results, "s3://" + bucket}
	code, out, errOut := cephbench(t, context.Background(), args...)
	if code != ExitUsage || !strings.Contains(errOut, "--insecure") {
		t.Errorf("an untrusted certificate: exit %d, %q; want exit 2 and a hint at --insecure\n%s", code, errOut, out)
	}
	code, out, errOut = cephbench(t, context.Background(), append(args, "--insecure")...)
	if code != 0 {
		t.Fatalf("--insecure: exit %d\n%s\n%s", code, out, errOut)
	}
	if rs := s3Results(t, results); len(rs) != 1 || rs[0].Ops["put"].Ops != 5 {
		t.Errorf("--insecure: %d results; want one with 5 puts\n%s", len(rs), out)
	}
	if bucketExists(t, c, bucket) {
		t.Error("the bucket the run created over https is still there")
	}
}

// Keys from a profile of ~/.aws/credentials, chosen by AWS_PROFILE.
func TestS3BenchProfileCredentials(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbcli")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".aws"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := fmt.Sprintf("[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = notthisone\n[bench]\naws_access_key_id = %s\naws_secret_access_key = %s\n",
		os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"))
	if err := os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("AWS_PROFILE", "bench")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	code, out, errOut := cephbench(t, context.Background(), "s3", "bench", "--put", "--objects", "3", "--obj-size", "4K",
		"--duration", "1m", "--results", t.TempDir(), "s3://"+bucket)
	if code != 0 || !strings.Contains(out, "  put   3 ops") {
		t.Errorf("with AWS_PROFILE=bench: exit %d\n%s\n%s", code, out, errOut)
	}
}

// The built-in plan's object steps, as "cephbench run --target s3://..."
// runs them: a kept write, verified reads, then the cleanup of the kept
// objects and of the bucket the write created.
func TestRunPlanObjectStepsOnS3(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbcli")
	results := t.TempDir()
	code, stdout, stderr := cephbench(t, context.Background(), "run", "--target", "s3://"+bucket+"/plan", "--duration", "1s", "-q", "--results", results)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(results, "*-quick", "*", "*.json"))
	if len(files) != 3 {
		t.Fatalf("%d results; want the 3 object steps\n%s%s", len(files), stdout, stderr)
	}
	for _, f := range files {
		r, err := result.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for kind, s := range r.Ops {
			if s.Ops == 0 || s.Errors != 0 {
				t.Errorf("%s: %s: %d ops, %d errors", r.Name, kind, s.Ops, s.Errors)
			}
		}
	}
	if bucketExists(t, c, bucket) {
		t.Errorf("the plan's cleanup left the bucket it created\n%s%s", stdout, stderr)
	}
}

// Ctrl-C: the phase's result is saved, marked interrupted, and what the
// run wrote is removed, bucket included.
func TestS3BenchInterruptedSavesAndCleansUp(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbcli")
	results := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	code, out, errOut := cephbench(t, ctx, "s3", "bench", "--put", "--get", "--obj-size", "16K", "--concurrent", "4",
		"--duration", "1h", "--results", results, "s3://"+bucket)
	if code != ExitInterrupted {
		t.Fatalf("exit %d; want %d\n%s\n%s", code, ExitInterrupted, out, errOut)
	}
	rs := s3Results(t, results)
	if len(rs) != 1 || !rs[0].Interrupted || rs[0].Ops["put"].Ops == 0 {
		t.Fatalf("want one result, of the interrupted put phase, with its puts\n%s", out)
	}
	if bucketExists(t, c, bucket) {
		t.Errorf("after Ctrl-C the bucket the run created is still there, holding %d objects", len(s3Keys(t, c, bucket)))
	}
}
