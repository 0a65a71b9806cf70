package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/netbench"
)

// lockedBuffer is output a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitForOutput polls out until it holds want.
func waitForOutput(t *testing.T, out fmt.Stringer, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("%q never came; the output so far:\n%s", want, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// netServer is "cephbench net server" running in-process.
type netServer struct {
	port           string
	stdout, stderr *lockedBuffer
	cancel         context.CancelFunc // Ctrl-C
	exit           chan int
}

// startNetServer starts a server on an ephemeral loopback port; the test
// ends it with Ctrl-C if it has not.
func startNetServer(t *testing.T) *netServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &netServer{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, cancel: cancel, exit: make(chan int, 1)}
	go func() {
		s.exit <- Main(ctx, Env{Stdout: s.stdout, Stderr: s.stderr}, []string{"net", "server", "--listen", "127.0.0.1:0"})
	}()
	waitForOutput(t, s.stdout, "\n")
	m := regexp.MustCompile(`Server listening on 127\.0\.0\.1:(\d+)\n`).FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("no listening line: %q", s.stdout.String())
	}
	s.port = m[1]
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.exit:
		case <-time.After(30 * time.Second):
			t.Error("the server did not stop after Ctrl-C")
		}
	})
	return s
}

// stop is Ctrl-C; it returns the exit code.
func (s *netServer) stop(t *testing.T) int {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.exit:
		s.exit <- code // for the cleanup
		return code
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop after Ctrl-C")
		return 0
	}
}

// netClient runs "cephbench net client" with --format json and returns the
// exit code, the result (nil if none was printed) and stderr.
func netClient(t *testing.T, ctx context.Context, port string, args ...string) (int, *netbench.Result, string) {
	t.Helper()
	results := t.TempDir()
	args = append([]string{"net", "client", "127.0.0.1", "--port", port, "--format", "json", "--results", results}, args...)
	code, stdout, stderr := cephbench(t, ctx, args...)
	if stdout == "" {
		return code, nil, stderr
	}
	var r netbench.Result
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("stdout is not a JSON result: %v\n%s", err, stdout)
	}
	saved, _ := filepath.Glob(filepath.Join(results, "*-"+r.Name+".json"))
	if len(saved) != 1 {
		t.Errorf("%d results saved in %s; want 1", len(saved), results)
	}
	return code, &r, stderr
}

// checkAgreement checks what a user reads off a result: both ends counted
// the same bytes on every stream, each direction has its streams and a
// per-second series that adds up to its count, and, if the ping-pong
// phase ran, ordered latency percentiles.
func checkAgreement(t *testing.T, r *netbench.Result, dirs []netbench.Direction, streams int) {
	t.Helper()
	if len(r.Streams) != len(dirs)*streams {
		t.Errorf("%d streams in the result; want %d", len(r.Streams), len(dirs)*streams)
	}
	for _, s := range r.Streams {
		if s.Sender.Bytes == 0 || s.Sender.Bytes != s.Receiver.Bytes {
			t.Errorf("stream %d (%s): sender counted %d bytes, receiver %d", s.ID, s.Dir, s.Sender.Bytes, s.Receiver.Bytes)
		}
	}
	for _, d := range dirs {
		tp := r.Up
		if d == netbench.Down {
			tp = r.Down
		}
		if tp == nil {
			t.Errorf("no %s figures", d)
			continue
		}
		if tp.Streams != streams || tp.Sender.Bytes != tp.Receiver.Bytes || tp.Receiver.BitsPerSec <= 0 {
			t.Errorf("%s: %d streams, sent %d, received %d bytes, %g bits/s", d, tp.Streams, tp.Sender.Bytes, tp.Receiver.Bytes, tp.Receiver.BitsPerSec)
		}
		for who, series := range map[string][]netbench.Interval{"client": r.Series, "server": r.ServerSeries} {
			var sum int64
			for _, iv := range series {
				s := iv.Up
				if d == netbench.Down {
					s = iv.Down
				}
				if s != nil {
					sum += s.Bytes
				}
			}
			if len(series) == 0 || sum != tp.Sender.Bytes {
				t.Errorf("%s: the %s's %d intervals add up to %d bytes; %d were sent", d, who, len(series), sum, tp.Sender.Bytes)
			}
		}
	}
	if r.RTT == nil {
		return
	}
	ps := r.RTT.Latency.Percentiles
	if r.RTT.RoundTrips == 0 || len(ps) != 17 {
		t.Fatalf("round-trip latency: %d round trips, %d percentiles", r.RTT.RoundTrips, len(ps))
	}
	prev := r.RTT.Latency.MinNs
	for _, p := range ps {
		if p.Ns < prev {
			t.Errorf("round-trip p%g %d ns is below the percentile before it (%d ns)", p.P, p.Ns, prev)
		}
		prev = p.Ns
	}
	if prev > r.RTT.Latency.MaxNs || r.RTT.Latency.MinNs <= 0 || r.RTT.Histogram == "" {
		t.Errorf("round-trip latency: min %d, p99.99 %d, max %d ns, histogram %d bytes", r.RTT.Latency.MinNs, prev, r.RTT.Latency.MaxNs, len(r.RTT.Histogram))
	}
}

func TestNetOnLoopback(t *testing.T) {
	srv := startNetServer(t)
	up, down := netbench.Up, netbench.Down
	cases := []struct {
		name    string
		args    []string
		dirs    []netbench.Direction
		streams int
	}{
		{"forward", nil, []netbench.Direction{up}, 1},
		{"reverse", []string{"--reverse"}, []netbench.Direction{down}, 1},
		{"bidir", []string{"--bidir"}, []netbench.Direction{up, down}, 1},
		{"parallel 4", []string{"--parallel", "4"}, []netbench.Direction{up}, 4},
	}
	for _, c := range cases {
		args := append([]string{"--time", "1s", "--rtt", "200ms"}, c.args...)
		code, r, stderr := netClient(t, context.Background(), srv.port, args...)
		if code != 0 || r == nil {
			t.Fatalf("%s: exit %d\n%s", c.name, code, stderr)
		}
		checkAgreement(t, r, c.dirs, c.streams)
		if r.Schema != netbench.Schema || r.ClientHost.CPUs == 0 || r.ServerHost.Hostname == "" || r.Interrupted {
			t.Errorf("%s: schema %q, client host %+v, server host %+v, interrupted %v", c.name, r.Schema, r.ClientHost, r.ServerHost, r.Interrupted)
		}
		// The server reports the exact bytes it received and sent.
		for _, d := range c.dirs {
			tp, verb := r.Up, "received"
			if d == down {
				tp, verb = r.Down, "sent"
			}
			if want := fmt.Sprintf("%s %d bytes (%s)", verb, tp.Receiver.Bytes, d); !strings.Contains(srv.stdout.String(), want) {
				t.Errorf("%s: the server's report lacks %q:\n%s", c.name, want, srv.stdout.String())
			}
		}
		for _, want := range []string{"Interval           Transfer     Bitrate         Retr", "bits/sec", "sender", "receiver", "rtt: ", "p99.9 "} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: the client's tables (on stderr with --format json) lack %q:\n%s", c.name, want, stderr)
			}
		}
	}
	if strings.Contains(srv.stderr.String(), "rejected") {
		t.Errorf("the server rejected a connection:\n%s", srv.stderr.String())
	}
}

func TestNetBusyServerAndCtrlC(t *testing.T) {
	srv := startNetServer(t)
	ctx, ctrlC := context.WithCancel(context.Background())
	type outcome struct {
		code   int
		r      *netbench.Result
		stderr string
	}
	first := make(chan outcome, 1)
	go func() {
		code, r, stderr := netClient(t, ctx, srv.port, "--time", "1h", "--rtt", "0", "--parallel", "2")
		first <- outcome{code, r, stderr}
	}()
	waitForOutput(t, srv.stdout, "[SUM]   0.00-")

	code, r, stderr := netClient(t, context.Background(), srv.port, "--time", "1s")
	if code != ExitFailure || r != nil || !strings.Contains(stderr, "busy with another test") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("second client: exit %d, stderr %q; want exit 1 and one line saying the server is busy", code, stderr)
	}
	waitForOutput(t, srv.stderr, "refused 127.0.0.1:")

	ctrlC()
	got := <-first
	if got.code != ExitInterrupted || got.r == nil || !got.r.Interrupted {
		t.Fatalf("first client after Ctrl-C: exit %d, result %v\n%s", got.code, got.r != nil, got.stderr)
	}
	checkAgreement(t, got.r, []netbench.Direction{netbench.Up}, 2)
	if !strings.Contains(got.stderr, "INTERRUPTED") {
		t.Errorf("the summary does not say the test was interrupted:\n%s", got.stderr)
	}
}

func TestNetServerRejectsOtherClientsAndGoesOn(t *testing.T) {
	srv := startNetServer(t)
	junk := make([]byte, 64)
	_, _ = rand.Read(junk)
	for _, first := range [][]byte{junk, []byte("GET / HTTP/1.1\r\n\r\n")} {
		conn, err := net.Dial("tcp", "127.0.0.1:"+srv.port)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = conn.Write(first)
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		if n, err := conn.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Errorf("the server answered %d bytes to %q (%v); want the connection closed", n, first[:8], err)
		}
		conn.Close()
	}
	waitForOutput(t, srv.stderr, "GET / HT")
	for _, l := range strings.Split(strings.TrimSpace(srv.stderr.String()), "\n") {
		if !strings.HasPrefix(l, "rejected 127.0.0.1:") || !strings.Contains(l, "does not speak cephbench net") {
			t.Errorf("server log line %q; want \"rejected ADDR: does not speak cephbench net ...\"", l)
		}
	}
	code, r, stderr := netClient(t, context.Background(), srv.port, "--time", "1s", "--rtt", "0")
	if code != 0 {
		t.Fatalf("a client after the junk: exit %d\n%s", code, stderr)
	}
	checkAgreement(t, r, []netbench.Direction{netbench.Up}, 1)
	if r.RTT != nil {
		t.Errorf("--rtt 0 measured round trips: %+v", r.RTT)
	}
}

func TestNetServerEndsOnCtrlC(t *testing.T) {
	srv := startNetServer(t)
	if code := srv.stop(t); code != 0 {
		t.Errorf("server after Ctrl-C: exit %d; want 0", code)
	}
	if !strings.HasSuffix(srv.stdout.String(), "Server stopped\n") || srv.stderr.String() != "" {
		t.Errorf("stdout %q, stderr %q", srv.stdout.String(), srv.stderr.String())
	}
	if conn, err := net.Dial("tcp", "127.0.0.1:"+srv.port); err == nil {
		conn.Close()
		t.Error("the port still accepts connections after the server stopped")
	}
}

func TestNetStoppedServerFailsItsClient(t *testing.T) {
	srv := startNetServer(t)
	done := make(chan string, 1)
	codes := make(chan int, 1)
	go func() {
		code, _, stderr := netClient(t, context.Background(), srv.port, "--time", "1h", "--rtt", "0")
		codes <- code
		done <- stderr
	}()
	waitForOutput(t, srv.stdout, "[  1]   0.00-")
	srv.stop(t)
	code, stderr := <-codes, <-done
	if code != ExitFailure || strings.Count(stderr, "cephbench: ") != 1 || !strings.Contains(stderr, "failed") {
		t.Errorf("client of a server stopped mid-test: exit %d, stderr %q; want exit 1 and one error line", code, stderr)
	}
}

func TestNetBadInputIsOneLineAndExit2(t *testing.T) {
	// A port where nothing listens: one that was just free.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	busyLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busyLn.Close()
	dir := t.TempDir()
	cases := map[string][]string{
		"bad time":         {"net", "client", "127.0.0.1", "--time", "ten"},
		"zero time":        {"net", "client", "127.0.0.1", "--time", "0"},
		"port 0":           {"net", "client", "127.0.0.1", "--port", "0"},
		"port too big":     {"net", "client", "127.0.0.1", "--port", "70000"},
		"port not number":  {"net", "client", "127.0.0.1", "--port", "http"},
		"unknown host":     {"net", "client", "no-such-host.invalid"},
		"nothing there":    {"net", "client", "127.0.0.1", "--port", closed},
		"host:port":        {"net", "client", "127.0.0.1:5201"},
		"no host":          {"net", "client"},
		"reverse bidir":    {"net", "client", "127.0.0.1", "--reverse", "--bidir"},
		"zero parallel":    {"net", "client", "127.0.0.1", "--parallel", "0"},
		"tiny length":      {"net", "client", "127.0.0.1", "--length", "10"},
		"bad format":       {"net", "client", "127.0.0.1", "--format", "xml"},
		"listen bad":       {"net", "server", "--listen", "127.0.0.1:http-alt-x"},
		"listen in use":    {"net", "server", "--listen", busyLn.Addr().String()},
		"server extra arg": {"net", "server", "x"},
		"port twice":       {"net", "server", "--listen", "127.0.0.1:5201", "-p", "6900"},
		"iperf no mode":    {"iperf", "-p", "6900"},
		"iperf udp":        {"iperf", "-c", "127.0.0.1", "-u"},
		"iperf bad flag":   {"iperf", "-s", "-t", "10"},
	}
	for name, args := range cases {
		if args[1] == "client" {
			args = append(args, "--results", dir)
		}
		code, stdout, stderr := cephbench(t, context.Background(), args...)
		wantUsageError(t, name, code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad input saved results: %v", entries)
	}
}

// Two network namespaces joined by a veth pair: the server runs in one,
// the client in the other, so the data crosses a real (virtual) link
// rather than loopback.
func TestNetBetweenNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2)")
	}
	suffix := strings.ToLower(rand.Text()[:6])
	nsA, nsB := "cbnetA-"+suffix, "cbnetB-"+suffix
	vethA, vethB := "cbA"+suffix, "cbB"+suffix
	ip := func(args ...string) error {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	for _, ns := range []string{nsA, nsB} {
		if err := ip("netns", "add", ns); err != nil {
			t.Skipf("cannot create network namespaces here: %v", err)
		}
		t.Cleanup(func() {
			if err := ip("netns", "del", ns); err != nil {
				t.Error(err)
			}
		})
	}
	// A private subnet that exists only inside these two namespaces.
	steps := [][]string{
		{"link", "add", vethA, "netns", nsA, "type", "veth", "peer", "name", vethB, "netns", nsB},
		{"-n", nsA, "addr", "add", "10.213.7.1/30", "dev", vethA},
		{"-n", nsB, "addr", "add", "10.213.7.2/30", "dev", vethB},
		{"-n", nsA, "link", "set", vethA, "up"},
		{"-n", nsB, "link", "set", vethB, "up"},
		{"-n", nsA, "link", "set", "lo", "up"},
		{"-n", nsB, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			t.Fatal(err)
		}
	}

	bin := filepath.Join(t.TempDir(), "cephbench")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/cephbench").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	server := exec.Command("ip", "netns", "exec", nsA, bin, "net", "server", "--listen", "10.213.7.1:5201", "--once")
	serverOut, serverLog := &lockedBuffer{}, &lockedBuffer{}
	server.Stdout, server.Stderr = serverOut, serverLog
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	var serverErr error
	serverDone := make(chan struct{})
	go func() { serverErr = server.Wait(); close(serverDone) }()
	t.Cleanup(func() {
		select {
		case <-serverDone:
		default:
			_ = server.Process.Kill()
			<-serverDone
		}
	})
	waitForOutput(t, serverOut, "Server listening on 10.213.7.1:5201")

	results := t.TempDir()
	client := exec.Command("ip", "netns", "exec", nsB, bin, "net", "client", "10.213.7.1",
		"--time", "1s", "--rtt", "200ms", "--parallel", "2", "--format", "json", "--results", results)
	var stdout, stderr bytes.Buffer
	client.Stdout, client.Stderr = &stdout, &stderr
	if err := client.Run(); err != nil {
		t.Fatalf("client: %v\n%s", err, stderr.String())
	}
	var r netbench.Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("client stdout is not a JSON result: %v\n%s", err, stdout.String())
	}
	checkAgreement(t, &r, []netbench.Direction{netbench.Up}, 2)
	<-serverDone
	if serverErr != nil {
		t.Errorf("server --once: %v\n%s", serverErr, serverLog.String())
	}
	if want := fmt.Sprintf("received %d bytes (up)", r.Up.Receiver.Bytes); !strings.Contains(serverOut.String(), want) {
		t.Errorf("the server's report lacks %q:\n%s", want, serverOut.String())
	}
	if !strings.HasPrefix(r.Server, "10.213.7.1:") {
		t.Errorf("the client tested %s; want the server's namespace address", r.Server)
	}
}

// freePort is a loopback port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// Report 003's iperf command lines run with the cephbench prefix, as net
// server -p and net client HOST -p do; the servers here listen on
// loopback only (-B, --listen HOST), the one thing added to the report's
// lines.
func TestIperfAndPortForms(t *testing.T) {
	for _, c := range []struct{ server, client string }{
		{"net server --listen 127.0.0.1 -p PORT --once", "net client 127.0.0.1 -p PORT -t 1 --rtt 0"},
		{"iperf -s -B 127.0.0.1 -p PORT -1", "iperf -c 127.0.0.1 -p PORT -t 1"},
	} {
		port := freePort(t)
		var stdout, stderr lockedBuffer
		exit := make(chan int, 1)
		go func() {
			exit <- Main(context.Background(), Env{Stdout: &stdout, Stderr: &stderr}, strings.Fields(strings.ReplaceAll(c.server, "PORT", port)))
		}()
		waitForOutput(t, &stdout, "Server listening on 127.0.0.1:"+port+"\n")
		code, out, errOut := cephbench(t, context.Background(), append(strings.Fields(strings.ReplaceAll(c.client, "PORT", port)), "--results", t.TempDir())...)
		if code != 0 || !strings.Contains(out+errOut, "sender") || !strings.Contains(out+errOut, "receiver") {
			t.Errorf("cephbench %s: exit %d\n%s\n%s", c.client, code, out, errOut)
		}
		select {
		case code := <-exit:
			if code != 0 {
				t.Errorf("cephbench %s: exit %d after its one test\n%s", c.server, code, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("cephbench %s did not exit after its one test", c.server)
		}
	}
}
