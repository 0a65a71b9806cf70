package netbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/result/netresult"
)

// SetupError is a test that could not start because of what the client
// was asked: the host is unknown, nothing listens on the port, the peer is
// not a cephbench net server or refused the parameters. No data moved.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

func setupErr(format string, args ...any) error {
	return &SetupError{fmt.Errorf(format, args...)}
}

// ErrBusy is returned (wrapped) when the server is running another test.
var ErrBusy = errors.New("the server is busy with another test")

// aLongTimeAgo is a deadline in the past: setting it makes blocked reads
// and writes return at once.
var aLongTimeAgo = time.Unix(1, 0)

// RunClient runs one test against the cephbench net server on host:port:
// the ping-pong phase if p.RTT is set, then p.Duration of throughput. The
// per-second table goes to progress (nil for none) as the test runs.
//
// Errors: a *SetupError when the test could not start, one wrapping
// ErrBusy when the server is running another test, ctx.Err() when ctx was
// canceled before anything was measured, and any other error when the
// test failed midway (the server or the network went away). Canceling ctx
// once something was measured stops the test early: the result, with
// Interrupted set, covers what ran. Each call has its own connections, so
// calls may run concurrently (against different servers: a server runs
// one test at a time).
func RunClient(ctx context.Context, host string, port int, p Params, progress io.Writer) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, &SetupError{err}
	}
	p.Buffer = p.WriteSize()
	if progress == nil {
		progress = io.Discard
	}
	c := &client{ctx: ctx, p: p, progress: progress}
	if err := c.connect(host, port); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	defer c.ctl.Close()

	res := &Result{
		Schema: Schema, Version: result.Version, Name: "net-" + string(p.Mode), Server: c.addr, Params: p,
		ClientHost: result.ThisHost(), ServerHost: c.reply.Host, ServerVersion: c.reply.Version,
		Start: time.Now().UTC(), Streams: []netresult.StreamResult{}, Series: []Interval{}, ServerSeries: []Interval{},
	}
	// Interrupted before the throughput phase: what the ping-pong
	// measured is still a result.
	interrupted := func() (*Result, error) {
		if res.RTT == nil || res.RTT.RoundTrips == 0 {
			return nil, ctx.Err()
		}
		res.End, res.Interrupted = time.Now().UTC(), true
		res.Notes = append(res.Notes, "interrupted before the throughput phase: only the round-trip latency was measured")
		return res, nil
	}
	if p.RTT > 0 {
		rtt, err := c.pingPong()
		if err != nil {
			return nil, err
		}
		res.RTT = rtt
	}
	if ctx.Err() != nil {
		return interrupted()
	}
	if err := c.throughput(res); err != nil {
		if ctx.Err() != nil && errors.Is(err, errNotStarted) {
			return interrupted()
		}
		return nil, err
	}
	res.End = time.Now().UTC()
	return res, nil
}

// errNotStarted marks a failure before any data moved.
var errNotStarted = errors.New("the throughput phase did not start")

type client struct {
	ctx      context.Context
	p        Params
	progress io.Writer
	addr     string // the server's address as dialed, every connection goes there
	ctl      *net.TCPConn
	reply    reply
}

// connect opens the control connection and has the server accept the test.
func (c *client) connect(host string, port int) error {
	if port < 1 || port > 65535 {
		return setupErr("port %d: want 1 to 65535", port)
	}
	d := net.Dialer{Timeout: helloTimeout}
	conn, err := d.DialContext(c.ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		return setupErr("unknown host %q: %v", host, dnsErr.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return setupErr("nothing listening on %s port %d (start \"cephbench net server\" there)", host, port)
	case err != nil:
		return setupErr("cannot connect to %s port %d: %v", host, port, err)
	}
	c.ctl = conn.(*net.TCPConn)
	c.addr = conn.RemoteAddr().String()
	stop := context.AfterFunc(c.ctx, func() { _ = conn.SetDeadline(aLongTimeAgo) })
	defer stop()
	_ = conn.SetDeadline(time.Now().Add(helloTimeout))
	if err := writeHello(conn, kindControl, controlHello{Params: c.p, Version: result.Version}); err != nil {
		conn.Close()
		return setupErr("%s: %v", c.addr, err)
	}
	version, k, body, err := readHello(conn)
	var notOurs *notOursError
	switch {
	case errors.As(err, &notOurs) && len(notOurs.first) == 0:
		err = setupErr("%s closed the connection: not a cephbench net server, or one that refused this client", c.addr)
	case errors.As(err, &notOurs):
		err = setupErr("%s is not a cephbench net server (it answered %q)", c.addr, notOurs.first)
	case err != nil:
		err = setupErr("%s did not answer as a cephbench net server: %v", c.addr, err)
	case version != protocolVersion:
		err = setupErr("%s speaks cephbench net protocol version %d; this client speaks %d", c.addr, version, protocolVersion)
	case k != kindReply:
		err = setupErr("%s sent a hello of kind %d where a reply was due", c.addr, k)
	default:
		if err = json.Unmarshal(body, &c.reply); err != nil {
			err = setupErr("%s sent a bad reply: %v", c.addr, err)
		}
	}
	switch {
	case err != nil:
	case c.reply.Busy:
		err = fmt.Errorf("%s: %w (%s); try again when it is done", c.addr, ErrBusy, c.reply.Error)
	case c.reply.Error != "":
		err = setupErr("%s refused the test: %s", c.addr, c.reply.Error)
	}
	if err != nil {
		conn.Close()
		return err
	}
	_ = conn.SetDeadline(time.Time{})
	fmt.Fprintf(c.progress, "Connected to %s (%s, cephbench %s): %s\n", c.addr, c.reply.Host.Hostname, c.reply.Version, c.p.Describe())
	return nil
}

// attach opens a data or RTT connection of the test.
func (c *client) attach(k kind, h attachHello) (net.Conn, error) {
	d := net.Dialer{Timeout: helloTimeout}
	conn, err := d.DialContext(c.ctx, "tcp", c.addr)
	if err != nil {
		return nil, err
	}
	h.Test = c.reply.Test
	if err := writeHello(conn, k, h); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// pingPong runs the ping-pong phase: one message in flight on its own
// connection, each round trip recorded. Canceling the context ends it
// early with what it measured.
func (c *client) pingPong() (*netresult.RTT, error) {
	conn, err := c.attach(kindRTT, attachHello{})
	if err != nil {
		return nil, fmt.Errorf("opening the ping-pong connection: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(c.ctx, func() { _ = conn.SetDeadline(aLongTimeAgo) })
	defer stop()
	_ = conn.SetDeadline(time.Now().Add(c.p.RTT.D() + setupTimeout))

	col := metrics.NewCollector([]string{"rtt"})
	rec := col.NewRecorder()
	msg, echo := make([]byte, rttMessage), make([]byte, rttMessage)
	for i := range msg {
		msg[i] = byte(i)
	}
	start := time.Now()
	next := time.Second
	var elapsed time.Duration
	var series []metrics.Second
	for elapsed < c.p.RTT.D() {
		t0 := time.Now()
		if _, err = conn.Write(msg); err == nil {
			_, err = io.ReadFull(conn, echo)
		}
		lat := time.Since(t0)
		if err != nil {
			if c.ctx.Err() != nil {
				break
			}
			return nil, fmt.Errorf("ping-pong with %s: %w", c.addr, err)
		}
		if !bytes.Equal(msg, echo) {
			return nil, fmt.Errorf("ping-pong with %s: the echo differs from the message", c.addr)
		}
		elapsed = t0.Sub(start) + lat
		rec.Record(0, lat, rttMessage, elapsed)
		msg[0]++ // a stale echo would then differ
		if elapsed >= next && elapsed < c.p.RTT.D() {
			series = append(series, col.Tick(elapsed).Second)
			next = elapsed.Truncate(time.Second) + time.Second
		}
	}
	series = append(series, col.Tick(elapsed).Second)
	ops, _, _ := col.Totals(0)
	h := col.Histogram(0)
	enc, err := h.EncodeV2()
	if err != nil {
		return nil, fmt.Errorf("encoding the round-trip histogram: %w", err)
	}
	return &netresult.RTT{
		RoundTrips: ops, MessageBytes: rttMessage, Seconds: elapsed.Seconds(),
		Latency: metrics.LatencyOf(h), Series: series, Histogram: string(enc),
	}, nil
}

// ctlEvent is what the control connection brought during the test.
type ctlEvent struct {
	m   message
	err error
}

// throughput runs the throughput phase and completes res with both ends'
// figures.
func (c *client) throughput(res *Result) error {
	n := c.p.Streams
	var streams []*stream
	defer func() {
		for _, st := range streams {
			st.conn.Close()
		}
	}()
	for di, d := range c.p.Directions() {
		for j := range n {
			id := di*n + j + 1
			conn, err := c.attach(kindData, attachHello{Stream: id, Dir: d})
			if err != nil {
				return fmt.Errorf("%w: opening stream %d: %w", errNotStarted, id, err)
			}
			st, err := newStream(id, d, d == Up, conn, c.p.WriteSize())
			if err != nil {
				conn.Close()
				return fmt.Errorf("%w: %w", errNotStarted, err)
			}
			streams = append(streams, st)
		}
	}
	stopSetup := context.AfterFunc(c.ctx, func() { _ = c.ctl.SetDeadline(aLongTimeAgo) })
	_ = c.ctl.SetDeadline(time.Now().Add(setupTimeout))
	err := writeFrame(c.ctl, message{Op: "start"})
	var m message
	if err == nil {
		m, err = readFrame(c.ctl)
	}
	if !stopSetup() || err != nil || m.Op != "go" {
		if err == nil {
			err = fmt.Errorf("%q where \"go\" was due", m.Op)
		}
		return fmt.Errorf("%w: the server did not start it: %w", errNotStarted, err)
	}
	_ = c.ctl.SetDeadline(time.Time{})

	v := view{w: c.progress, p: c.p}
	v.header(c.p.Mode != Reverse)
	sd := newSide(streams)
	sd.begin(v.interval)
	// The server's next message is its report, after the stop; anything
	// before that (or the connection failing) ends the test.
	events := make(chan ctlEvent, 1)
	go func() {
		m, err := readFrame(c.ctl)
		events <- ctlEvent{m, err}
	}()

	timer := time.NewTimer(c.p.Duration.D())
	defer timer.Stop()
	var failure error
	select {
	case <-timer.C:
	case <-c.ctx.Done():
		res.Interrupted = true
	case <-sd.failed:
		failure = sd.err()
	case ev := <-events:
		failure = ev.err
		if failure == nil {
			failure = fmt.Errorf("the server sent %q mid-test", ev.m.Op)
		}
	}
	sd.stop.Store(true)
	if failure != nil {
		sd.abort()
		<-sd.done
		return fmt.Errorf("the test with %s failed: %w", c.addr, failure)
	}
	if err := writeFrame(c.ctl, message{Op: "stop"}); err != nil {
		sd.abort()
		<-sd.done
		return fmt.Errorf("the test with %s failed: telling the server to stop: %w", c.addr, err)
	}
	select {
	case <-sd.done:
	case <-time.After(setupTimeout):
		sd.abort()
		<-sd.done
		return fmt.Errorf("the test with %s failed: the streams did not end within %s of the stop", c.addr, setupTimeout)
	}
	if err := sd.err(); err != nil {
		return fmt.Errorf("the test with %s failed: %w", c.addr, err)
	}
	_ = c.ctl.SetReadDeadline(time.Now().Add(setupTimeout))
	ev := <-events
	switch {
	case ev.err != nil:
		return fmt.Errorf("the test with %s failed: reading its report: %w", c.addr, ev.err)
	case ev.m.Op != "report" || ev.m.Report == nil:
		return fmt.Errorf("the test with %s failed: %q where its report was due", c.addr, ev.m.Op)
	}
	return c.combine(res, sd, ev.m.Report)
}

// combine puts the client's and the server's counts together in res.
func (c *client) combine(res *Result, sd *side, server *sideReport) error {
	theirs := map[int]netresult.Count{}
	for _, s := range server.Streams {
		theirs[s.ID] = s.Count
	}
	for _, mine := range sd.counts() {
		other, ok := theirs[mine.ID]
		if !ok {
			return fmt.Errorf("the server's report lacks stream %d", mine.ID)
		}
		sr := netresult.StreamResult{ID: mine.ID, Dir: mine.Dir, Sender: mine.Count, Receiver: other}
		if mine.Dir == Down {
			sr.Sender, sr.Receiver = other, mine.Count
		}
		sr.Receiver.Retransmits = 0
		res.Streams = append(res.Streams, sr)
	}
	for _, d := range c.p.Directions() {
		t := &netresult.Throughput{}
		for _, s := range res.Streams {
			if s.Dir == d {
				t.Streams++
				t.Sender = addCount(t.Sender, s.Sender)
				t.Receiver = addCount(t.Receiver, s.Receiver)
			}
		}
		var rates []float64
		for _, iv := range sd.series {
			sum := iv.Up
			if d == Down {
				sum = iv.Down
			}
			if iv.End-iv.Start >= 0.5 && sum != nil {
				rates = append(rates, sum.BitsPerSec)
			}
		}
		t.PerSecond = metrics.StatsOf(rates)
		if d == Up {
			res.Up = t
		} else {
			res.Down = t
		}
	}
	res.Series = sd.series
	if server.Series != nil {
		res.ServerSeries = server.Series
	}
	return nil
}

// ClientParams checks the client's host argument (a host or [IPv6]
// address, without a port) and completes p from the direction flags and
// the length of its writes, in bytes; it returns the host to dial. Its
// errors are bad input, one line each.
func ClientParams(arg string, p *Params, length int64, reverse, bidir bool) (string, error) {
	host := strings.TrimSuffix(strings.TrimPrefix(arg, "["), "]")
	if _, _, err := net.SplitHostPort(arg); err == nil {
		return "", fmt.Errorf("%s: give the host alone and the port with --port", arg)
	}
	if host == "" {
		return "", errors.New("no host given")
	}
	switch {
	case reverse && bidir:
		return "", errors.New("--reverse and --bidir: choose one")
	case reverse:
		p.Mode = Reverse
	case bidir:
		p.Mode = Bidir
	default:
		p.Mode = Forward
	}
	p.Buffer = int(min(length, 1<<40))
	if err := p.Validate(); err != nil {
		return "", err
	}
	return host, nil
}
