package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/cluster"
)

// parseConf reads ceph.conf into section → key → value.
func parseConf(t *testing.T, text string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	var cur map[string]string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			name := strings.Trim(line, "[]")
			if out[name] != nil {
				t.Fatalf("section [%s] twice", name)
			}
			cur = map[string]string{}
			out[name] = cur
		default:
			k, v, ok := strings.Cut(line, " = ")
			if !ok || cur == nil {
				t.Fatalf("not a setting in a section: %q", line)
			}
			if _, dup := cur[k]; dup {
				t.Fatalf("%q set twice", k)
			}
			cur[k] = v
		}
	}
	return out
}

func TestConfBluestoreWithRGW(t *testing.T) {
	dir := "/tmp/sb"
	conf := parseConf(t, renderConf(confParams{
		dir: dir, fsid: "f00", addr: "127.0.0.1", monPort: 40000, osds: 3, store: "bluestore",
		osdSize: 4 << 30, cephx: true, rgwPort: 40100,
	}))
	global := conf["global"]
	want := map[string]string{
		"fsid":                                           "f00",
		"mon host":                                       "[v2:127.0.0.1:40000,v1:127.0.0.1:40001]",
		"public addr":                                    "127.0.0.1",
		"cluster addr":                                   "127.0.0.1",
		"auth cluster required":                          "cephx",
		"auth client required":                           "cephx",
		"osd pool default size":                          "2",
		"osd pool default min size":                      "1",
		"osd crush chooseleaf type":                      "0",
		"osd pool default pg num":                        "8",
		"mon allow pool delete":                          "true",
		"mon warn on pool no redundancy":                 "false",
		"mon warn on pool no app":                        "false",
		"mon pg warn max object skew":                    "0",
		"mon warn on insecure global id reclaim allowed": "false",
	}
	for k, v := range want {
		if global[k] != v {
			t.Errorf("[global] %s = %q, want %q", k, global[k], v)
		}
	}
	if got := conf["client"]["keyring"]; got != dir+"/"+adminKeyring {
		t.Errorf("clients' keyring %q", got)
	}
	osd := conf["osd"]
	if osd["osd class update on start"] != "false" || osd["osd objectstore"] != "bluestore" || osd["bluestore block size"] != "4294967296" ||
		osd["osd recovery sleep hdd"] != "0" {
		t.Errorf("[osd] %v", osd)
	}
	if p := osd["bluestore block path"]; filepath.Base(p) == "block" || !strings.HasPrefix(p, dir+"/osd.$id/") {
		t.Errorf("bluestore block path %q: want a file in the OSD's folder not named block", p)
	}
	if got := conf[rgwName]["rgw frontends"]; got != "beast endpoint=127.0.0.1:40100" {
		t.Errorf("rgw frontends %q: want the endpoint alone", got)
	}
	for _, name := range []string{"mon", "mgr", "osd", "mds", rgwName} {
		s := conf[name]
		for _, k := range []string{"pid file", "log file", "admin socket", "keyring"} {
			if !strings.HasPrefix(s[k], dir+"/") {
				t.Errorf("[%s] %s = %q: want a path in the sandbox folder", name, k, s[k])
			}
		}
	}
	// No path of the host's own Ceph setup.
	for name, s := range conf {
		for k, v := range s {
			if strings.Contains(v, "/") && !strings.Contains(v, "127.0.0.1") && !strings.HasPrefix(v, dir+"/") {
				t.Errorf("[%s] %s = %q is outside the sandbox folder", name, k, v)
			}
		}
	}
}

func TestConfOneMemstoreOSDWithoutAuth(t *testing.T) {
	conf := parseConf(t, renderConf(confParams{
		dir: "/x", fsid: "f", addr: "127.0.0.1", monPort: 3300, osds: 1, store: "memstore", osdSize: 2 << 30,
	}))
	if conf["global"]["osd pool default size"] != "1" || conf["global"]["auth service required"] != "none" {
		t.Errorf("[global] %v", conf["global"])
	}
	osd := conf["osd"]
	if osd["osd objectstore"] != "memstore" || osd["memstore device bytes"] != "2147483648" || osd["bluestore block path"] != "" {
		t.Errorf("[osd] %v", osd)
	}
	if conf[rgwName] != nil {
		t.Errorf("radosgw section without radosgw")
	}
}

func loadStatus(t *testing.T, name string) *cluster.Status {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := cluster.ParseStatus(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The testdata are "ceph status -f json" of a 3-OSD sandbox with an MDS
// and radosgw: healthy, and seconds after osd.2 was stopped.
func TestProblems(t *testing.T) {
	healthy := expect{osds: 3, pools: 8, pgs: 57, mds: true}
	if p := problems(loadStatus(t, "status-healthy.json"), healthy); len(p) != 0 {
		t.Errorf("healthy sandbox: %q", p)
	}
	p := strings.Join(problems(loadStatus(t, "status-osd-down.json"), healthy), "; ")
	for _, want := range []string{"2 of 3 OSDs up, 3 in", "18 active+undersized+degraded", "OSD_DOWN", "PG_DEGRADED"} {
		if !strings.Contains(p, want) {
			t.Errorf("an OSD down: problems %q lack %q", p, want)
		}
	}

	cases := map[string]struct {
		change func(*cluster.Status, *expect)
		want   string // "" for healthy
	}{
		"a pool the mgr has not seen": {func(_ *cluster.Status, e *expect) { e.pools, e.pgs = 9, 65 }, "mgr knows 57 PGs in 8 pools, the OSD map has 65 in 9"},
		"no MDS":                      {func(s *cluster.Status, _ *expect) { s.FSMap.ByRank = nil }, "no active MDS"},
		"no MDS wanted":               {func(s *cluster.Status, e *expect) { s.FSMap.ByRank, e.mds = nil, false }, ""},
		"no mgr":                      {func(s *cluster.Status, _ *expect) { s.MgrMap.Available = false }, "no active mgr"},
		"an OSD more than started":    {func(s *cluster.Status, _ *expect) { s.OSDMap.NumOSDs = 4 }, "3 of 3 OSDs up"},
		"an untagged pool":            {func(s *cluster.Status, _ *expect) { warn(s, "POOL_APP_NOT_ENABLED") }, ""},
		"a busy host":                 {func(s *cluster.Status, _ *expect) { warn(s, "OSD_SLOW_PING_TIME_BACK") }, ""},
		"slow ops":                    {func(s *cluster.Status, _ *expect) { warn(s, "SLOW_OPS") }, "HEALTH_WARN SLOW_OPS"},
		"a crash":                     {func(s *cluster.Status, _ *expect) { warn(s, "RECENT_CRASH") }, "RECENT_CRASH"},
	}
	for name, tc := range cases {
		s, e := loadStatus(t, "status-healthy.json"), healthy
		tc.change(s, &e)
		got := strings.Join(problems(s, e), "; ")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems %q, want %q", name, got, tc.want)
		}
	}
}

// warn adds a HEALTH_WARN check to s.
func warn(s *cluster.Status, name string) {
	s.Health.Status = "HEALTH_WARN"
	b, _ := json.Marshal(map[string]any{"checks": map[string]any{
		name: map[string]any{"severity": "HEALTH_WARN", "summary": map[string]any{"message": "something"}},
	}})
	json.Unmarshal(b, &s.Health)
}

func TestUpRefusesBeforeCreatingAnything(t *testing.T) {
	parent := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	cases := map[string]Options{
		"no OSDs":         {OSDs: -1},
		"17 OSDs":         {OSDs: 17},
		"unknown store":   {Store: "filestore"},
		"tiny OSD":        {OSDSize: 100 << 20},
		"unknown auth":    {Auth: "kerberos"},
		"port in use":     {Port: busyPort},
		"rgw port in use": {RGW: true, RGWPort: busyPort},
		"no parent":       {Dir: filepath.Join(parent, "no", "such")},
	}
	for name, o := range cases {
		if o.Dir == "" {
			o.Dir = filepath.Join(parent, "sb")
		}
		c, err := Up(context.Background(), o)
		if !errors.Is(err, ErrRefused) || c != nil {
			t.Errorf("%s: Up returned %v, %v; want ErrRefused", name, c, err)
		}
	}
	full := filepath.Join(parent, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "data"), []byte("mine"), 0o644)
	if _, err := Up(context.Background(), Options{Dir: full}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a folder with a file: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("refused Ups left %v", entries)
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("a refused Up changed a folder: %v", entries)
	}
}

func TestMissingProgramsNamePackages(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := filepath.Join(t.TempDir(), "sb")
	_, err := Up(context.Background(), Options{Dir: dir, MDS: true, RGW: true})
	var missing *MissingError
	if !errors.As(err, &missing) || !errors.Is(err, ErrRefused) {
		t.Fatalf("Up without Ceph installed: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"ceph-mon", "radosgw", "apt-get install ceph-common ceph-base ceph-mon ceph-mgr ceph-osd ceph-mds radosgw"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("%q is more than one line", msg)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the folder was created: %v", err)
	}
	if err := CheckPackages(false, false); !strings.Contains(err.Error(), "apt-get install ceph-common ceph-base ceph-mon ceph-mgr ceph-osd") || strings.Contains(err.Error(), "radosgw") {
		t.Errorf("without mds and rgw: %v", err)
	}
}

func TestLoadWithoutSandbox(t *testing.T) {
	if _, err := Load(t.TempDir()); !errors.Is(err, ErrNoSandbox) {
		t.Errorf("Load of an empty folder: %v", err)
	}
}

// A pid file that names a process that is not the sandbox's daemon (a
// stale file, and the pid given to another program since) must not get
// that process signalled.
func TestDownSignalsOnlyItsOwnDaemons(t *testing.T) {
	dir := t.TempDir()
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Process.Kill()
	c := &Cluster{dir: dir, st: state{OSDs: 1, Daemons: []daemon{mon, "osd.0"}}}
	os.Mkdir(filepath.Join(dir, "run"), 0o755)
	for _, d := range c.st.Daemons {
		os.WriteFile(c.pidFile(d), []byte(strconv.Itoa(other.Process.Pid)), 0o644)
	}
	if err := c.Down(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.StopOSD(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- other.Wait() }()
	select {
	case err := <-exited:
		t.Errorf("an unrelated process was stopped: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if d := c.Daemons(); d[0].PID != 0 || d[1].PID != 0 {
		t.Errorf("daemons %+v: want none running", d)
	}
	if err := c.StopOSD(context.Background(), 1); err == nil {
		t.Errorf("StopOSD of an OSD the sandbox does not have succeeded")
	}
}

// sandboxUnderTest returns the sandbox scripts/test.sh started for the
// whole run.
func sandboxUnderTest(t *testing.T) *Cluster {
	t.Helper()
	dir := os.Getenv("CEPHBENCH_SANDBOX")
	if dir == "" {
		t.Skip("CEPHBENCH_SANDBOX is not set: run scripts/test.sh, which starts a sandbox cluster for the tests")
	}
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type osdTree struct {
	Nodes []struct {
		Name   string `json:"name"`
		Type   string `json:"type"`
		Status string `json:"status"`
	} `json:"nodes"`
}

// osdsUp returns the names of the OSDs "ceph osd tree" shows up.
func osdsUp(t *testing.T, c *Cluster) (up []string, all int) {
	t.Helper()
	out, err := c.Ceph(context.Background(), "osd", "tree", "-f", "json")
	if err != nil {
		t.Fatal(err)
	}
	var tree osdTree
	if err := json.Unmarshal(out, &tree); err != nil {
		t.Fatal(err)
	}
	for _, n := range tree.Nodes {
		if n.Type == "osd" {
			all++
			if n.Status == "up" {
				up = append(up, n.Name)
			}
		}
	}
	return up, all
}

func TestSandboxIsHealthy(t *testing.T) {
	c := sandboxUnderTest(t)
	for _, d := range c.Daemons() {
		if d.PID == 0 {
			t.Errorf("%s is not running", d.Name)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if up, all := osdsUp(t, c); len(up) != c.OSDs() || all != c.OSDs() {
		t.Errorf("osd tree: %d OSDs, up %v; want all %d up", all, up, c.OSDs())
	}
	// What a user does after "eval $(cephbench sandbox env)": the exported
	// environment alone reaches the cluster.
	cmd := exec.CommandContext(ctx, "ceph", "osd", "pool", "ls")
	cmd.Env = append(cephEnv(), c.Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), Pool) {
		t.Errorf("ceph osd pool ls with the sandbox's environment: %v\n%s", err, out)
	}
	if s3 := c.S3(); s3 != nil {
		out, err := run(ctx, "radosgw-admin", "-c", c.Conf(), "user", "info", "--uid", s3.User)
		if err != nil || !strings.Contains(string(out), s3.AccessKey) {
			t.Errorf("radosgw-admin user info: %v\n%s", err, out)
		}
		if !httpAnswers(ctx, s3.Endpoint) {
			t.Errorf("radosgw does not answer on %s", s3.Endpoint)
		}
	}
}

// disruptive skips t unless CEPHBENCH_DISRUPTIVE is 1. Stopping an OSD
// stalls I/O on its PGs for a moment and makes the shared sandbox
// unhealthy, and starting a second cluster loads the machine: either would
// disturb the other packages' tests, so scripts/test.sh runs these tests
// on their own after the others.
func disruptive(t *testing.T) {
	t.Helper()
	if os.Getenv("CEPHBENCH_DISRUPTIVE") != "1" {
		t.Skip("CEPHBENCH_DISRUPTIVE is not 1: scripts/test.sh runs the disruptive tests after the others")
	}
}

func TestUpOnARunningSandboxIsRefused(t *testing.T) {
	c := sandboxUnderTest(t)
	_, err := Up(context.Background(), Options{Dir: c.Dir()})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "already running") {
		t.Errorf("Up on the running sandbox: %v", err)
	}
	if err := c.CheckHealth(context.Background()); err != nil && errors.Is(err, errNotRunning) {
		t.Errorf("the refused Up disturbed the sandbox: %v", err)
	}
}

func TestDisruptiveStopAndStartOSD(t *testing.T) {
	c := sandboxUnderTest(t)
	disruptive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	id := c.OSDs() - 1
	name := "osd." + strconv.Itoa(id)
	if err := c.StopOSD(ctx, id); err != nil {
		t.Fatal(err)
	}
	// Whatever happens below, leave the OSD running for the other tests.
	defer func() {
		if err := c.StartOSD(ctx, id); err != nil {
			t.Error(err)
		}
	}()
	for {
		up, _ := osdsUp(t, c)
		if !strings.Contains(strings.Join(up, " "), name) {
			break
		}
		if sleep(ctx, 500*time.Millisecond) != nil {
			t.Fatalf("%s still up in ceph osd tree after StopOSD", name)
		}
	}
	if err := c.CheckHealth(ctx); err == nil || !strings.Contains(err.Error(), name) {
		t.Errorf("health with %s stopped: %v", name, err)
	}
	if err := c.StartOSD(ctx, id); err != nil {
		t.Fatal(err)
	}
	if up, _ := osdsUp(t, c); len(up) != c.OSDs() {
		t.Errorf("after StartOSD, up: %v", up)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatalf("health did not recover: %v", err)
	}
}

// processesWith returns the pids of processes whose command line holds s.
func processesWith(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// A second sandbox runs beside the shared one (its own ports and files),
// and Down and Purge leave no process and no file of it behind.
func TestDisruptiveSecondSandboxUpDownPurge(t *testing.T) {
	shared := sandboxUnderTest(t)
	disruptive(t)
	dir := filepath.Join(t.TempDir(), "second")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := Up(ctx, Options{Dir: dir, OSDs: 1, Store: "memstore", OSDSize: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Down(ctx); err != nil {
			t.Error(err)
		}
	}()
	if err := c.CheckHealth(ctx); err != nil {
		t.Errorf("right after Up: %v", err)
	}
	if up, all := osdsUp(t, c); len(up) != 1 || all != 1 {
		t.Errorf("osd tree of the second sandbox: %d OSDs, up %v", all, up)
	}
	if err := shared.CheckHealth(ctx); err != nil {
		t.Errorf("the shared sandbox with a second one beside it: %v", err)
	}
	if err := c.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if pids := processesWith(t, c.Conf()); len(pids) != 0 {
		t.Errorf("processes left after Down: %v", pids)
	}
	for _, d := range c.Daemons() {
		if d.PID != 0 {
			t.Errorf("%s still running after Down", d.Name)
		}
	}
	if err := c.Purge(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Purge left %s: %v", dir, err)
	}
}

// cancelOnWrite cancels a context at the first progress line that holds
// a given text.
type cancelOnWrite struct {
	text   string
	cancel context.CancelFunc
}

func (w cancelOnWrite) Write(b []byte) (int, error) {
	if strings.Contains(string(b), w.text) {
		w.cancel()
	}
	return len(b), nil
}

func TestDisruptiveInterruptedUpStopsWhatItStarted(t *testing.T) {
	sandboxUnderTest(t)
	disruptive(t)
	dir := filepath.Join(t.TempDir(), "interrupted")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	upCtx, interrupt := context.WithCancel(ctx)
	_, err := Up(upCtx, Options{Dir: dir, OSDs: 2, Progress: cancelOnWrite{"mon.a is up", interrupt}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Up returned %v", err)
	}
	if pids := processesWith(t, filepath.Join(dir, confFile)); len(pids) != 0 {
		t.Errorf("processes left after an interrupted Up: %v", pids)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an interrupted Up left %s: %v", dir, err)
	}
}
