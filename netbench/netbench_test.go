package netbench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/result/netresult"
	"github.com/cephbench/cephbench/spec"
)

// syncBuffer is a bytes.Buffer the server may write while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serve starts a server on an ephemeral loopback port; it is stopped at
// the end of the test, which fails if Serve does not return nil.
func serve(t *testing.T) (host string, port int, out, log *syncBuffer, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	out, log = &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&Server{Out: out, Log: log}).Serve(ctx, ln) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("Serve did not return after its context was canceled")
			}
		})
	}
	t.Cleanup(stop)
	a := ln.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port, out, log, stop
}

func quick(mode netresult.Mode, streams int) Params {
	return Params{Mode: mode, Streams: streams, Duration: spec.Duration(time.Second), RTT: spec.Duration(100 * time.Millisecond)}
}

// waitFor polls s until it holds want.
func waitFor(t *testing.T, s *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(s.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("%q never came; got:\n%s", want, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestOtherProtocolsAreRejectedAndTheServerGoesOn(t *testing.T) {
	host, port, _, log, _ := serve(t)
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	openings := map[string][]byte{
		"iperf3 cookie": append([]byte("abcdefghijklmnopqrstuvwxyz2345672345"), 0),
		"http":          []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"random":        {0x9c, 0x01, 0xff, 0x00, 0x42, 0x17, 0x88, 0xe3, 0x5a, 0x00, 0x11},
		"magic prefix":  []byte("CEPH"), // then the connection closes
		"nothing":       nil,
	}
	for name, first := range openings {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(first); err != nil {
			t.Fatal(err)
		}
		if name == "magic prefix" || name == "nothing" {
			_ = conn.(*net.TCPConn).CloseWrite()
		}
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := io.ReadAll(conn)
		var ne net.Error
		if len(n) != 0 || errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: the server answered %q (%v); want the connection closed", name, n, err)
		}
		conn.Close()
	}
	for deadline := time.Now().Add(30 * time.Second); strings.Count(log.String(), "\n") < len(openings); {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections rejected, %d log lines:\n%s", len(openings), strings.Count(log.String(), "\n"), log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "rejected 127.0.0.1:") {
			t.Errorf("log line %q; want one \"rejected ADDR: why\" line per connection", l)
		}
	}
	if !strings.Contains(log.String(), `does not speak cephbench net (first bytes "abcdefgh")`) {
		t.Errorf("the iperf3 client's rejection does not say why:\n%s", log.String())
	}
	res, err := RunClient(context.Background(), host, port, quick(Forward, 1), nil)
	if err != nil {
		t.Fatalf("after the rejections: %v", err)
	}
	if res.Up.Sender.Bytes == 0 || res.Up.Sender.Bytes != res.Up.Receiver.Bytes {
		t.Errorf("sent %d, received %d", res.Up.Sender.Bytes, res.Up.Receiver.Bytes)
	}
}

// openControl opens a test by hand and leaves it waiting for "start".
func openControl(t *testing.T, host string, port int, version uint16) (net.Conn, reply) {
	t.Helper()
	conn, err := net.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writeHello(&buf, kindControl, controlHello{Params: quick(Forward, 1)}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint16(b[8:], version)
	if _, err := conn.Write(b); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	v, k, body, err := readHello(conn)
	if err != nil || v != protocolVersion || k != kindReply {
		t.Fatalf("reply: version %d kind %d: %v", v, k, err)
	}
	var r reply
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	return conn, r
}

func TestABusyServerRefusesASecondClient(t *testing.T) {
	host, port, _, log, _ := serve(t)
	first, r := openControl(t, host, port, protocolVersion)
	if r.Test == "" || r.Error != "" || r.Host.Hostname == "" {
		t.Fatalf("the first client was not given a test: %+v", r)
	}
	_, err := RunClient(context.Background(), host, port, quick(Forward, 1), nil)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("second client: %v; want ErrBusy", err)
	}
	waitFor(t, log, "busy with the test of "+first.LocalAddr().String())
	first.Close()
	// The server frees the slot once it sees the first client go.
	for {
		_, err = RunClient(context.Background(), host, port, quick(Reverse, 2), nil)
		if !errors.Is(err, ErrBusy) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("after the first client left: %v", err)
	}
}

func TestAnotherProtocolVersionIsRefusedByName(t *testing.T) {
	host, port, _, log, _ := serve(t)
	conn, r := openControl(t, host, port, protocolVersion+1)
	defer conn.Close()
	if r.Test != "" || !strings.Contains(r.Error, "protocol version 2; this server speaks 1") {
		t.Errorf("reply %+v; want a refusal naming both versions", r)
	}
	waitFor(t, log, "rejected")
}

func TestAClientOfAnotherServerFailsToStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	_, err = RunClient(context.Background(), "127.0.0.1", port, quick(Forward, 1), nil)
	var setup *SetupError
	if !errors.As(err, &setup) || !strings.Contains(err.Error(), "not a cephbench net server") {
		t.Errorf("against an SSH server: %v; want a SetupError saying it is not a cephbench net server", err)
	}
}

func TestStoppingTheServerMidTestFailsTheClient(t *testing.T) {
	host, port, out, _, stop := serve(t)
	p := quick(Forward, 1)
	p.Duration = spec.Duration(time.Hour)
	p.RTT = 0
	done := make(chan error, 1)
	go func() {
		_, err := RunClient(context.Background(), host, port, p, nil)
		done <- err
	}()
	waitFor(t, out, "[  1]   0.00-")
	stop()
	err := <-done
	var setup *SetupError
	if err == nil || errors.As(err, &setup) || errors.Is(err, context.Canceled) {
		t.Errorf("client: %v; want a mid-test failure", err)
	}
	if !strings.Contains(out.String(), "ended early: interrupted: the server is stopping") {
		t.Errorf("the server's report does not say the test was cut short:\n%s", out.String())
	}
}

func TestUnitsAreIperf3s(t *testing.T) {
	cases := []struct {
		n    float64
		bits bool
		want string
	}{
		{1.03 * (1 << 30), false, "1.03 GByte"},
		{10.3 * (1 << 30), false, "10.3 GByte"},
		{112 << 20, false, " 112 MByte"},
		{128 << 10, false, " 128 KByte"},
		{8.83e9, true, "8.83 Gbit"},
		{15.4e9, true, "15.4 Gbit"},
		{770e6, true, " 770 Mbit"},
		{0, true, "0.00 bit"},
	}
	for _, c := range cases {
		if got := unit(c.n, c.bits); got != c.want {
			t.Errorf("unit(%g, %v) = %q; want %q", c.n, c.bits, got, c.want)
		}
	}
}

// net server's --listen and iperf's -p make one address: "net server -p
// 6900" listens on every address, as iperf -s -p 6900 does.
func TestListenAddr(t *testing.T) {
	for _, c := range []struct {
		listen string
		port   int
		want   string
	}{
		{"", 0, ":5201"}, {"", 6900, ":6900"}, {"127.0.0.1", 6900, "127.0.0.1:6900"}, {"::1", 6900, "[::1]:6900"},
		{"6901", 0, ":6901"}, {"127.0.0.1:6902", 0, "127.0.0.1:6902"},
	} {
		if got, err := ListenAddr(c.listen, c.port); err != nil || got != c.want {
			t.Errorf("--listen %q -p %d: %q, %v; want %q", c.listen, c.port, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		listen string
		port   int
	}{{"127.0.0.1:5201", 6900}, {"6901", 6900}, {"", 70000}, {"", -1}} {
		if _, err := ListenAddr(bad.listen, bad.port); err == nil {
			t.Errorf("--listen %q -p %d: no error", bad.listen, bad.port)
		}
	}
}

// ListenAndServe says where it listens and that it stopped; an address
// that is bad or in use is a ListenError, with nothing served.
func TestListenAndServe(t *testing.T) {
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&Server{Out: out}).ListenAndServe(ctx, "127.0.0.1:0", 0) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "\n") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(out.String()), "Server listening on ")
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("output %q, want Server listening on 127.0.0.1:PORT", out.String())
	}
	// The port is taken while it serves.
	var le *ListenError
	if err := (&Server{}).ListenAndServe(context.Background(), addr, 0); !errors.As(err, &le) || !strings.HasPrefix(err.Error(), "--listen "+addr+": ") {
		t.Errorf("a second server on %s: %v, want a ListenError naming --listen", addr, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}
	if !strings.HasSuffix(out.String(), "\nServer stopped\n") {
		t.Errorf("output %q, want it to end with Server stopped", out.String())
	}
	if err := (&Server{}).ListenAndServe(context.Background(), "127.0.0.1:5201", 6900); !errors.As(err, &le) {
		t.Errorf("--listen with a port and -p: %v, want a ListenError", err)
	}
}
