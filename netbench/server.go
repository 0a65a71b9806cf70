package netbench

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cephbench/cephbench/result"
)

// Server serves cephbench net tests, one at a time: a client that comes
// while a test runs is told the server is busy. Set its fields before
// Serve; Serve may be called once at a time.
type Server struct {
	// Out gets the report of each test from the server's side: who, what,
	// the per-second table and the server's own count of each stream.
	Out io.Writer
	// Log gets one line per refused connection: a client of another
	// protocol (iperf3, a port scanner), a busy refusal, a bad hello.
	Log io.Writer
	// Once makes Serve return after the first test.
	Once bool
}

// Serve accepts connections on ln until ctx is canceled (or, with Once,
// until the first test ends), then closes ln and every connection and
// returns once all its goroutines have ended. A canceled ctx is a normal
// end: Serve returns nil, after aborting a test that was running. With
// Once it returns the test's error, if it failed. Other errors are from
// ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sv := &serving{host: result.ThisHost(), conns: map[net.Conn]struct{}{}}
	var outMu sync.Mutex
	sv.out = lockedWriter{&outMu, orDiscard(s.Out)}
	sv.log = lockedWriter{&outMu, orDiscard(s.Log)}
	if s.Once {
		sv.finish = cancel
	}
	stop := context.AfterFunc(ctx, func() {
		_ = ln.Close()
		sv.mu.Lock()
		sv.closed = true
		for c := range sv.conns {
			_ = c.Close()
		}
		sv.mu.Unlock()
	})
	defer stop()

	var wg sync.WaitGroup
	var err error
	for {
		conn, aerr := ln.Accept()
		if aerr != nil {
			if ctx.Err() != nil || errors.Is(aerr, net.ErrClosed) {
				break
			}
			// Out of descriptors, most likely: wait for some to be
			// freed rather than spin or give up.
			fmt.Fprintf(sv.log, "accepting: %v\n", aerr)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if !sv.track(conn) {
			_ = conn.Close()
			break
		}
		wg.Go(func() {
			defer sv.untrack(conn)
			sv.handle(ctx, conn)
		})
	}
	cancel()
	wg.Wait()
	if s.Once {
		err = sv.onceErr
	}
	return err
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// lockedWriter serializes writes, so that lines from the test's sampler
// and from refused connections never interleave.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// serving is the state of one Serve.
type serving struct {
	out, log io.Writer
	host     result.Host
	finish   func() // set with Once: ends Serve after the test
	onceErr  error

	mu     sync.Mutex
	cur    *serverTest
	conns  map[net.Conn]struct{} // being handled, closed by a shutdown
	closed bool
}

func (sv *serving) track(c net.Conn) bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.closed {
		return false
	}
	sv.conns[c] = struct{}{}
	return true
}

func (sv *serving) untrack(c net.Conn) {
	sv.mu.Lock()
	delete(sv.conns, c)
	sv.mu.Unlock()
}

func (sv *serving) logf(format string, args ...any) {
	fmt.Fprintf(sv.log, format+"\n", args...)
}

// handle reads a connection's hello and serves it by its kind. It closes
// the connection unless a test took it.
func (sv *serving) handle(ctx context.Context, conn net.Conn) {
	peer := conn.RemoteAddr().String()
	taken := false
	defer func() {
		if !taken {
			_ = conn.Close()
		}
	}()
	_ = conn.SetDeadline(time.Now().Add(helloTimeout))
	version, k, body, err := readHello(conn)
	var ne net.Error
	switch {
	case ctx.Err() != nil:
		return
	case errors.As(err, &ne) && ne.Timeout():
		sv.logf("rejected %s: no hello within %s", peer, helloTimeout)
		return
	case err != nil:
		sv.logf("rejected %s: %v", peer, err)
		return
	case version != protocolVersion:
		why := fmt.Sprintf("protocol version %d; this server speaks %d", version, protocolVersion)
		if k == kindControl {
			_ = writeHello(conn, kindReply, reply{Error: why, Version: result.Version, Host: sv.host})
		}
		sv.logf("rejected %s: %s", peer, why)
		return
	}
	switch k {
	case kindControl:
		sv.control(ctx, conn, peer, body)
	case kindData:
		taken = sv.data(conn, peer, body)
	case kindRTT:
		sv.echo(conn, peer, body)
	default:
		sv.logf("rejected %s: unknown connection kind %d", peer, k)
	}
}

// control serves a test if none is running.
func (sv *serving) control(ctx context.Context, conn net.Conn, peer string, body []byte) {
	refuse := func(r reply, why string) {
		r.Version, r.Host = result.Version, sv.host
		_ = writeHello(conn, kindReply, r)
		sv.logf("refused %s: %s", peer, why)
	}
	var h controlHello
	if err := json.Unmarshal(body, &h); err != nil {
		refuse(reply{Error: "bad hello: " + err.Error()}, "bad hello: "+err.Error())
		return
	}
	if err := h.Params.Validate(); err != nil {
		refuse(reply{Error: "bad parameters: " + err.Error()}, "bad parameters: "+err.Error())
		return
	}
	t := &serverTest{sv: sv, id: rand.Text(), peer: peer, p: h.Params}
	t.arrive = make(chan *stream, len(t.p.Directions())*t.p.Streams)
	sv.mu.Lock()
	busy := sv.cur
	if busy == nil {
		sv.cur = t
	}
	sv.mu.Unlock()
	if busy != nil {
		refuse(reply{Busy: true, Error: "running a test for " + busy.peer}, "busy with the test of "+busy.peer)
		return
	}
	defer sv.release(t)
	if err := writeHello(conn, kindReply, reply{Test: t.id, Version: result.Version, Host: sv.host}); err != nil {
		sv.logf("dropped %s: answering its hello: %v", peer, err)
		return
	}
	_ = conn.SetDeadline(time.Time{})
	err := t.run(ctx, conn)
	if sv.finish != nil {
		if ctx.Err() == nil { // a stopped server ends well, test or not
			sv.onceErr = err
		}
		sv.finish()
	}
}

// release ends t's hold on the server, so that the next test may start,
// and closes streams that came too late for it. Calling it again does
// nothing.
func (sv *serving) release(t *serverTest) {
	sv.mu.Lock()
	if sv.cur == t {
		sv.cur = nil
	}
	sv.mu.Unlock()
	for {
		select {
		case st := <-t.arrive:
			_ = st.conn.Close()
		default:
			return
		}
	}
}

// test returns the running test if its id is id.
func (sv *serving) test(id string) *serverTest {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.cur == nil || sv.cur.id != id {
		return nil
	}
	return sv.cur
}

// data hands a data connection to its test and says whether it did.
func (sv *serving) data(conn net.Conn, peer string, body []byte) bool {
	var h attachHello
	if err := json.Unmarshal(body, &h); err != nil {
		sv.logf("rejected %s: bad data hello: %v", peer, err)
		return false
	}
	t := sv.test(h.Test)
	if t == nil {
		sv.logf("rejected %s: a data connection for no running test", peer)
		return false
	}
	dirs := t.p.Directions()
	if h.Stream < 1 || h.Stream > len(dirs)*t.p.Streams || dirs[(h.Stream-1)/t.p.Streams] != h.Dir {
		sv.logf("rejected %s: no stream %d %s in this test", peer, h.Stream, h.Dir)
		return false
	}
	st, err := newStream(h.Stream, h.Dir, h.Dir == Down, conn, t.p.WriteSize())
	if err != nil {
		sv.logf("rejected %s: %v", peer, err)
		return false
	}
	_ = conn.SetDeadline(time.Time{})
	// Under the lock, so that no stream arrives after the test ended and
	// drained its channel.
	sv.mu.Lock()
	taken := false
	if sv.cur == t {
		select {
		case t.arrive <- st:
			taken = true
		default:
		}
	}
	sv.mu.Unlock()
	if !taken {
		sv.logf("rejected %s: stream %d came when the test was not waiting for it", peer, h.Stream)
	}
	return taken
}

// echo serves the ping-pong phase: every byte read is written back.
func (sv *serving) echo(conn net.Conn, peer string, body []byte) {
	var h attachHello
	if err := json.Unmarshal(body, &h); err != nil {
		sv.logf("rejected %s: bad ping-pong hello: %v", peer, err)
		return
	}
	t := sv.test(h.Test)
	if t == nil {
		sv.logf("rejected %s: a ping-pong connection for no running test", peer)
		return
	}
	_ = conn.SetDeadline(time.Now().Add(t.p.RTT.D() + setupTimeout))
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			t.echoed.Add(int64(n))
			if _, werr := conn.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// serverTest is the test being served.
type serverTest struct {
	sv     *serving
	id     string
	peer   string
	p      Params
	arrive chan *stream
	echoed atomic.Int64 // bytes
}

// errStopped is a test cut short because the server was stopped.
var errStopped = errors.New("interrupted: the server is stopping")

// run serves the test on its control connection: it waits for the data
// connections, runs the server's side of the streams until the client
// says stop, then sends its report.
func (t *serverTest) run(ctx context.Context, ctl net.Conn) (err error) {
	out := t.sv.out
	fmt.Fprintf(out, "Accepted test from %s: %s\n", t.peer, t.p.Describe())
	stop := context.AfterFunc(ctx, func() { _ = ctl.SetDeadline(aLongTimeAgo) })
	defer stop()
	lost := func(err error) error {
		if ctx.Err() != nil {
			return errStopped
		}
		return fmt.Errorf("the client went away: %w", err)
	}
	var streams []*stream
	started := false
	defer func() {
		if !started {
			for _, st := range streams {
				_ = st.conn.Close()
			}
		}
		if err != nil {
			fmt.Fprintf(out, "test from %s ended early: %v\n", t.peer, err)
		}
	}()

	streams, err = t.awaitStreams(ctx, ctl, lost)
	if err != nil {
		return err
	}

	if err := writeFrame(ctl, message{Op: "go"}); err != nil {
		return lost(err)
	}
	v := view{w: out, server: true, p: t.p}
	v.header(t.p.Mode != Forward)
	sd := newSide(streams)
	sd.begin(v.interval)
	started = true

	if failure := t.awaitStop(ctx, ctl, sd, lost); failure != nil {
		sd.abort()
		<-sd.done
		return failure
	}
	counts := sd.counts()
	v.ownSummary(counts)
	fmt.Fprintf(out, "test from %s done: %s\n", t.peer, t.moved(v, counts))
	// Free before answering: a client that starts its next test as soon
	// as it has this one's report must not find the server busy, and the
	// server's account is printed by then.
	t.sv.release(t)
	_ = ctl.SetWriteDeadline(time.Now().Add(setupTimeout))
	if err := writeFrame(ctl, message{Op: "report", Report: &sideReport{Streams: counts, Series: sd.series}}); err != nil {
		return lost(err)
	}
	return nil
}

// awaitStreams waits for the client's "start" after its ping-pong phase,
// then for every data connection it opens, and returns them in stream
// order. On an error it returns the streams that arrived, for the caller
// to close.
func (t *serverTest) awaitStreams(ctx context.Context, ctl net.Conn, lost func(error) error) ([]*stream, error) {
	var streams []*stream
	// The client runs its ping-pong phase, opens its data connections and
	// says "start".
	_ = ctl.SetReadDeadline(time.Now().Add(t.p.RTT.D() + setupTimeout))
	m, err := readFrame(ctl)
	switch {
	case err != nil:
		return streams, lost(err)
	case m.Op != "start":
		return nil, fmt.Errorf("%q where \"start\" was due", m.Op)
	}
	if t.p.RTT > 0 {
		fmt.Fprintf(t.sv.out, "rtt: echoed %d round trips\n", t.echoed.Load()/rttMessage)
	}
	total := cap(t.arrive)
	timeout := time.NewTimer(setupTimeout)
	defer timeout.Stop()
	for len(streams) < total {
		select {
		case st := <-t.arrive:
			if slices.ContainsFunc(streams, func(o *stream) bool { return o.id == st.id }) {
				_ = st.conn.Close()
				return streams, fmt.Errorf("stream %d arrived twice", st.id)
			}
			streams = append(streams, st)
		case <-timeout.C:
			return streams, fmt.Errorf("only %d of %d data connections arrived within %s", len(streams), total, setupTimeout)
		case <-ctx.Done():
			return streams, errStopped
		}
	}
	slices.SortFunc(streams, func(a, b *stream) int { return a.id - b.id })
	return streams, nil
}

// awaitStop waits for the client's "stop" and the streams' end; it
// returns why the test failed, or nil.
func (t *serverTest) awaitStop(ctx context.Context, ctl net.Conn, sd *side, lost func(error) error) error {
	// The client's next message is "stop"; the connection failing (or
	// ctx, through the deadline) aborts the test.
	_ = ctl.SetReadDeadline(time.Now().Add(t.p.Duration.D() + setupTimeout))
	events := make(chan ctlEvent, 1)
	go func() {
		m, err := readFrame(ctl)
		events <- ctlEvent{m, err}
	}()
	var failure error
	select {
	case ev := <-events:
		switch {
		case ev.err != nil:
			failure = lost(ev.err)
		case ev.m.Op != "stop":
			failure = fmt.Errorf("%q where \"stop\" was due", ev.m.Op)
		}
	case <-sd.failed:
		failure = sd.err()
	}
	sd.stop.Store(true)
	if failure == nil {
		select {
		case <-sd.done:
			failure = sd.err()
		case <-time.After(setupTimeout):
			failure = fmt.Errorf("the streams did not end within %s of the stop", setupTimeout)
		case <-ctx.Done():
			failure = errStopped
		}
	}
	return failure
}

// moved says how many bytes each direction of the test moved, from this
// side's view ("sent 123 bytes (up)").
func (t *serverTest) moved(v view, counts []streamCount) string {
	var done []string
	for _, d := range t.p.Directions() {
		var n int64
		for _, c := range counts {
			if c.Dir == d {
				n += c.Count.Bytes
			}
		}
		verb := "received"
		if v.sends(d) {
			verb = "sent"
		}
		done = append(done, fmt.Sprintf("%s %d bytes (%s)", verb, n, d))
	}
	return strings.Join(done, ", ")
}

// DefaultPort is the port servers listen on and clients dial unless told
// otherwise: iperf3's.
const DefaultPort = 5201

// ListenAddr is the address a server listens on from its --listen
// ([HOST]:PORT, a bare port, a HOST alone, or "" for every address) and
// iperf's -p port (0: not given, DefaultPort unless listen has one). Its
// errors are bad input, one line.
func ListenAddr(listen string, port int) (string, error) {
	if _, err := strconv.Atoi(listen); err == nil {
		listen = ":" + listen // a bare port, as iperf3's -p takes it
	}
	_, _, err := net.SplitHostPort(listen)
	switch {
	case port == 0 && err == nil:
		return listen, nil
	case port == 0:
		port = DefaultPort
	case err == nil:
		return "", fmt.Errorf("--listen %s and -p %d: give the port once", listen, port)
	}
	if port < 0 || port > 65535 {
		return "", fmt.Errorf("-p %d: not a TCP port", port)
	}
	return net.JoinHostPort(listen, strconv.Itoa(port)), nil
}

// ListenError is a --listen address (or -p port) that cannot be used: bad,
// or in use. It is bad input, and nothing was served.
type ListenError struct{ Err error }

func (e *ListenError) Error() string { return e.Err.Error() }
func (e *ListenError) Unwrap() error { return e.Err }

// ListenAndServe listens on ListenAddr(listen, port), says so on Out, and
// serves as Serve does. When ctx ends the serving it says "Server
// stopped" on Out. An address that cannot be used is a *ListenError;
// other errors are Serve's.
func (s *Server) ListenAndServe(ctx context.Context, listen string, port int) error {
	addr, err := ListenAddr(listen, port)
	if err != nil {
		return &ListenError{err}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &ListenError{fmt.Errorf("--listen %s: %v", listen, err)}
	}
	out := orDiscard(s.Out)
	fmt.Fprintf(out, "Server listening on %s\n", ln.Addr())
	if err := s.Serve(ctx, ln); err != nil {
		return err
	}
	if ctx.Err() != nil {
		fmt.Fprintln(out, "Server stopped")
	}
	return nil
}
