//go:build ceph

package s3_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/enginetest"
	"github.com/cephbench/cephbench/engine/s3"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/internal/cephtest"
	"github.com/cephbench/cephbench/spec"
)

// keys lists every key in bucket; none when it does not exist.
func keys(t *testing.T, c *minio.Client, bucket string) []string {
	t.Helper()
	var ks []string
	for obj := range c.ListObjects(t.Context(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if minio.ToErrorResponse(obj.Err).Code == minio.NoSuchBucket {
			return nil
		}
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		ks = append(ks, obj.Key)
	}
	return ks
}

func put(t *testing.T, c *minio.Client, bucket, key string) {
	t.Helper()
	if ok, err := c.BucketExists(t.Context(), bucket); err != nil {
		t.Fatal(err)
	} else if !ok {
		if err := c.MakeBucket(t.Context(), bucket, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	data := []byte("not a benchmark's")
	if _, err := c.PutObject(t.Context(), bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestConformance(t *testing.T) {
	c := cephtest.RGW(t)
	buckets := map[string]bool{}
	enginetest.Run(t, enginetest.Config{
		NewTarget: func(t *testing.T) spec.Target {
			b := cephtest.Bucket(t, c, "cbtest")
			buckets[b] = true
			return spec.Target{Scheme: "s3", Location: b + "/run"}
		},
		Persistent: true,
		// Every key in the bucket, so that a write outside the prefix
		// shows.
		Leftovers: func(t *testing.T, target spec.Target) []string {
			b, _, _ := strings.Cut(target.Location, "/")
			return keys(t, c, b)
		},
		Plant: func(t *testing.T, target spec.Target) string {
			b, _, _ := strings.Cut(target.Location, "/")
			put(t, c, b, "run/precious-object")
			return "run/precious-object"
		},
		BadTarget: func(t *testing.T) spec.Target {
			return spec.Target{Scheme: "s3", Location: "Not_A_Bucket"}
		},
		EmptyReadIsUsage: true,
		WholeObjects:     true,
	})
	for b := range buckets {
		if ok, _ := c.BucketExists(context.Background(), b); ok && len(keys(t, c, b)) == 0 {
			t.Errorf("bucket %s, created by the engine, is still there, empty", b)
		}
	}
}

func workload(target string, reads int, keep bool) *spec.Workload {
	w := &spec.Workload{
		Target: spec.Target{Scheme: "s3", Location: target}, Pattern: spec.Sequential, ReadPercent: reads,
		BlockSize: 64 << 10, Objects: 4, Workers: 2, QueueDepth: 1, TotalOps: 4, Keep: keep,
	}
	if err := w.Validate(); err != nil {
		panic(err)
	}
	return w
}

func writeObjects(t *testing.T, s engine.Session, n int) {
	t.Helper()
	for i := range n {
		op := &engine.Op{Kind: engine.Write, Object: int64(i), Buf: make([]byte, 64<<10)}
		if err := s.Do(t.Context(), op); err != nil {
			t.Fatal(err)
		}
	}
}

// A kept write records its objects; the cleanup removes them, the record
// and the bucket it created, and nothing else.
func TestCleanupRemovesAKeptWriteAndItsBucket(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbtest")
	s, err := s3.Open(t.Context(), workload(bucket+"/kept", 0, true))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.BucketExists(t.Context(), bucket); !ok || err != nil {
		t.Fatalf("Open of a write on a missing bucket did not create it: %v", err)
	}
	writeObjects(t, s, 3)
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, c, bucket); len(got) != 4 || !slices.Contains(got, "kept/"+s3.MetadataName) {
		t.Fatalf("after a kept write of 3 objects the bucket holds %v; want them and the metadata object", got)
	}
	n, err := s3.Cleanup(t.Context(), bucket+"/kept", s3.Credentials{}, writeahead.NewJudge(false, 0))
	if err != nil || n != 3 {
		t.Fatalf("Cleanup removed %d objects, %v; want 3", n, err)
	}
	if ok, _ := c.BucketExists(t.Context(), bucket); ok {
		t.Errorf("the bucket the kept write created is still there after Cleanup: %v", keys(t, c, bucket))
	}
	if _, err := s3.Cleanup(t.Context(), bucket+"/kept", s3.Credentials{}, writeahead.NewJudge(false, 0)); !engine.IsUsage(err) {
		t.Errorf("a second Cleanup returned %v; want a usage error saying there is nothing kept", err)
	}
}

// The cleanup of a kept write in a bucket cephbench did not create, next
// to someone else's objects, leaves the bucket and those objects.
func TestCleanupLeavesAForeignBucket(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbtest")
	put(t, c, bucket, "precious")
	put(t, c, bucket, "kept/benchmark_data_elsewhere_1_object0")
	s, err := s3.Open(t.Context(), workload(bucket+"/kept", 0, true))
	if err != nil {
		t.Fatal(err)
	}
	writeObjects(t, s, 2)
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, err := s3.Cleanup(t.Context(), bucket+"/kept", s3.Credentials{}, writeahead.NewJudge(false, 0)); err != nil || n != 2 {
		t.Fatalf("Cleanup removed %d objects, %v; want 2", n, err)
	}
	want := []string{"kept/benchmark_data_elsewhere_1_object0", "precious"}
	if got := keys(t, c, bucket); !slices.Equal(got, want) {
		t.Errorf("after Cleanup the bucket holds %v; want %v", got, want)
	}
}

// Gets report when their response began, and stat, list and delete work
// on the session's own objects only.
func TestGetStatListDelete(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbtest")
	put(t, c, bucket, "p/benchmark_data_elsewhere_1_object0")
	s, err := s3.Open(t.Context(), workload(bucket+"/p", 0, false))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	writeObjects(t, s, 3)
	op := &engine.Op{Kind: engine.Read, Object: 1, Buf: make([]byte, 64<<10)}
	start := engine.Now()
	first, err := s.Get(t.Context(), op)
	end := engine.Now()
	if err != nil {
		t.Fatal(err)
	}
	if first < start || first > end {
		t.Errorf("Get's first byte at %v, outside the call (%v to %v)", first, start, end)
	}
	if size, err := s.Stat(t.Context(), 2); err != nil || size != 64<<10 {
		t.Errorf("Stat = %d, %v; want %d", size, err, 64<<10)
	}
	if n, err := s.List(t.Context()); err != nil || n != 3 {
		t.Errorf("List = %d, %v; want the session's 3 objects", n, err)
	}
	if err := s.Delete(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), op); engine.ErrorKind(err) != "not_found" {
		t.Errorf("Get of a deleted object: %v (kind %q); want not_found", err, engine.ErrorKind(err))
	}
}

// A multi-object delete whose response is cut short (a proxy or a
// connection failing on the way) is sent again for the objects it did not
// confirm: the run's objects and the bucket it made are still removed.
func TestCleanupDeletesAgainWhenADeleteResponseIsLost(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbtest")
	var cut atomic.Int32
	throughProxy(t, func(w http.ResponseWriter, r *http.Request, proxy http.Handler) bool {
		if r.Method != http.MethodPost || !r.URL.Query().Has("delete") || cut.Add(1) != 1 {
			return false
		}
		// rgw deletes the objects, but its answer never arrives whole.
		proxy.ServeHTTP(httptest.NewRecorder(), r)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return true
		}
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: 4096\r\n\r\n<?xml version=\"1.0\"")
		buf.Flush()
		conn.Close()
		return true
	})
	s, err := s3.Open(t.Context(), workload(bucket+"/cut", 0, false))
	if err != nil {
		t.Fatal(err)
	}
	writeObjects(t, s, 3)
	if err := s.Close(t.Context()); err != nil {
		t.Fatalf("the cleanup after a lost delete response: %v", err)
	}
	if cut.Load() < 2 {
		t.Errorf("%d multi-object deletes; want the cut one and another", cut.Load())
	}
	if ok, _ := c.BucketExists(t.Context(), bucket); ok {
		t.Errorf("the run's bucket is still there: %v", keys(t, c, bucket))
	}
}

// A radosgw that stops answering fails an op after the op timeout, as a
// timeout, instead of holding the run.
func TestAnOpThatGetsNoAnswerTimesOut(t *testing.T) {
	c := cephtest.RGW(t)
	bucket := cephtest.Bucket(t, c, "cbtest")
	var hung atomic.Bool
	throughProxy(t, func(_ http.ResponseWriter, r *http.Request, _ http.Handler) bool {
		if !hung.Load() {
			return false
		}
		// Once the body is read, the server sees the client go.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
		return true
	})
	w := workload(bucket+"/hung", 0, false)
	w.OpTimeout = spec.Duration(time.Second)
	s, err := s3.Open(t.Context(), w)
	if err != nil {
		t.Fatal(err)
	}
	writeObjects(t, s, 1)
	hung.Store(true)
	begin := time.Now()
	err = s.Do(t.Context(), &engine.Op{Kind: engine.Write, Object: 1, Buf: make([]byte, 64<<10)})
	// Generous: the second's timer fires late on a busy machine, never by
	// seconds more.
	if took := time.Since(begin); engine.ErrorKind(err) != "timeout" || took > 10*time.Second {
		t.Errorf("a PUT without an answer: %v (kind %q) after %v; want a timeout after 1s", err, engine.ErrorKind(err), took)
	}
	hung.Store(false)
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// throughProxy points the test's S3 endpoint at a server in front of
// radosgw, which hands each request to intercept first: intercept answers
// it (returning true), or leaves it to the proxy to radosgw.
func throughProxy(t *testing.T, intercept func(w http.ResponseWriter, r *http.Request, proxy http.Handler) bool) {
	t.Helper()
	rgw, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(rgw)
		r.Out.Host = r.In.Host // the client signed it
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !intercept(w, r, proxy) {
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
}
