package inpod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The input is what the key gained, in order, and ends once the
// ConfigMap is gone; a key that lost what it held is an error.
func TestInputIsWhatTheKeyGained(t *testing.T) {
	in := NewInput(StreamKey("0"))
	got := make(chan string)
	go func() { b, err := io.ReadAll(in); got <- fmt.Sprintf("%s|%v", b, err) }()
	in.Update(map[string]string{StreamKey("0"): "job\n", StreamKey("1"): "other\n"})
	in.Update(map[string]string{StreamKey("0"): "job\n"})
	in.Update(map[string]string{StreamKey("0"): "job\nstart\n"})
	in.End(io.EOF)
	if g := <-got; g != "job\nstart\n|<nil>" {
		t.Errorf("read %q; want the job and the start, then the end", g)
	}

	in = NewInput(StreamKey("0"))
	in.Update(map[string]string{StreamKey("0"): "job\n"})
	in.Update(map[string]string{StreamKey("0"): "another\n"})
	if b, err := io.ReadAll(in); string(b) != "job\n" || err == nil || !strings.Contains(err.Error(), "rewritten") {
		t.Errorf("a rewritten key: read %q, %v", b, err)
	}
}

// apiServer speaks the API server's part for one ConfigMap: reads, and
// watches that serve the events queued for them.
type apiServer struct {
	t       *testing.T
	mu      sync.Mutex
	reads   []string   // per read to come, the ConfigMap's JSON (the last one stays)
	watches [][]string // per watch to come, its events
	asked   []string   // the requests, "GET path?query"
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer tok" {
		http.Error(w, "no token", http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	s.asked = append(s.asked, r.URL.Path+" rv="+q.Get("resourceVersion")+" watch="+q.Get("watch"))
	switch {
	case r.URL.Path == "/api/v1/namespaces/bench/configmaps/run1":
		if len(s.reads) == 0 {
			http.Error(w, `{"kind":"Status","code":404}`, http.StatusNotFound)
			return
		}
		io.WriteString(w, s.reads[0])
		if len(s.reads) > 1 {
			s.reads = s.reads[1:]
		}
	case r.URL.Path == "/api/v1/namespaces/bench/configmaps" && q.Get("watch") == "true" && q.Get("fieldSelector") == "metadata.name=run1":
		if len(s.watches) == 0 {
			s.t.Errorf("a watch more than planned: %s", r.URL)
			return
		}
		for _, ev := range s.watches[0] {
			io.WriteString(w, ev+"\n")
		}
		s.watches = s.watches[1:]
	default:
		s.t.Errorf("unexpected request %s", r.URL)
		http.NotFound(w, r)
	}
}

func configMapJSON(rv string, lines string) string {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]string{"name": "run1", "resourceVersion": rv}, "data": map[string]string{StreamKey("2"): lines}})
	return string(b)
}

func event(typ, object string) string { return fmt.Sprintf(`{"type":%q,"object":%s}`, typ, object) }

// Follow reads the ConfigMap, watches it from its version, resumes a
// watch the server ended, reads it again when its version is gone, and
// ends the input when it is deleted.
func TestFollowWatchesTheConfigMapThroughTheAPIServer(t *testing.T) {
	// After the 410, the ConfigMap is read anew.
	srv := &apiServer{t: t, reads: []string{configMapJSON("1", "job\n"), configMapJSON("4", "job\nstart 1\nstart 2\n")}}
	srv.watches = [][]string{
		{event("MODIFIED", configMapJSON("2", "job\nstart 1\n"))}, // then the server ends it
		{event("BOOKMARK", `{"metadata":{"resourceVersion":"3"}}`), event("ERROR", `{"kind":"Status","code":410,"message":"too old"}`)},
		{event("MODIFIED", configMapJSON("5", "job\nstart 1\nstart 2\nstop\n")), event("DELETED", configMapJSON("6", "job\nstart 1\nstart 2\nstop\n"))},
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	api := API{URL: hs.URL, Client: hs.Client(), Token: func() (string, error) { return "tok", nil }}
	in := NewInput(StreamKey("2"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go Follow(ctx, api, "bench", "run1", in)
	b, err := io.ReadAll(in)
	if err != nil || string(b) != "job\nstart 1\nstart 2\nstop\n" {
		t.Errorf("read %q, %v; want every line once, then the end", b, err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	want := []string{
		"/api/v1/namespaces/bench/configmaps/run1 rv= watch=",
		"/api/v1/namespaces/bench/configmaps rv=1 watch=true",
		"/api/v1/namespaces/bench/configmaps rv=2 watch=true",
		"/api/v1/namespaces/bench/configmaps/run1 rv= watch=",
		"/api/v1/namespaces/bench/configmaps rv=4 watch=true",
	}
	if strings.Join(srv.asked, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(srv.asked, "\n"), strings.Join(want, "\n"))
	}
}

// A ConfigMap already deleted ends the input at once, as a deleted one
// does.
func TestFollowEndsWhenTheConfigMapIsGone(t *testing.T) {
	hs := httptest.NewServer(&apiServer{t: t})
	defer hs.Close()
	in := NewInput(StreamKey("0"))
	Follow(context.Background(), API{URL: hs.URL, Client: hs.Client(), Token: func() (string, error) { return "tok", nil }}, "bench", "run1", in)
	if _, err := in.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("a deleted ConfigMap: %v; want EOF", err)
	}
}

// The Ceph configuration is Rook's monitors and the CephClient's key, as
// its toolbox writes them.
func TestCephConfigFromRooksMonitorsAndKey(t *testing.T) {
	dir := t.TempDir()
	conf, err := WriteCephConfig(dir, "a=10.0.0.1:6789,b=10.0.0.2:6789,c=[v2:10.0.0.3:3300,v1:10.0.0.3:6789]\n", "bench", "AQD3xyz==\n")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(conf)
	if !strings.Contains(string(b), "mon_host = 10.0.0.1:6789,10.0.0.2:6789,[v2:10.0.0.3:3300,v1:10.0.0.3:6789]\n") || !strings.Contains(string(b), "keyring = "+filepath.Join(dir, "keyring")) {
		t.Errorf("ceph.conf:\n%s", b)
	}
	k, _ := os.ReadFile(filepath.Join(dir, "keyring"))
	if string(k) != "[client.bench]\n\tkey = AQD3xyz==\n" {
		t.Errorf("keyring:\n%s", k)
	}
	for _, bad := range [][3]string{{"", "bench", "k"}, {"a=1.2.3.4:6789", "", "k"}, {"a=1.2.3.4:6789", "bench", " "}} {
		if _, err := WriteCephConfig(dir, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("mons %q, id %q, key %q: no error", bad[0], bad[1], bad[2])
		}
	}
}
