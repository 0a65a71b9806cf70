package netbench

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cephbench/cephbench/result"
)

// The wire protocol. Every connection a client opens starts with a hello:
//
//	magic "CEPHBNET" | version uint16 | kind uint8 | length uint32 | JSON body
//
// (big endian), and the server answers a control hello with a reply of the
// same layout. The magic comes first and is checked as its bytes arrive,
// so an iperf3 client (whose first bytes are a 37-byte cookie), a port
// scanner or an HTTP client is told apart at once. After the hello, a
// control connection carries frames (length uint32 | JSON message), a data
// connection carries only payload in one direction, and an RTT connection
// carries ping-pong messages that the server echoes.
const (
	magic = "CEPHBNET"
	// protocolVersion changes when a message changes meaning; a server
	// refuses a client of another version, naming both.
	protocolVersion = 1
	headerLen       = len(magic) + 2 + 1 + 4

	maxHelloBody = 64 << 10
	// A report carries a few hundred bytes per second of test per
	// direction; this allows days.
	maxFrame = 64 << 20

	// helloTimeout bounds how long the server waits for a hello and the
	// client for the reply: a silent peer must not hold a connection.
	helloTimeout = 10 * time.Second
	// setupTimeout bounds each wait for the other end while a test is set
	// up (the data connections arriving, "go") and wound down (the last
	// bytes after "stop", the server's report).
	setupTimeout = 30 * time.Second
)

// kind says what a connection is for.
type kind uint8

const (
	kindControl kind = 1
	kindData    kind = 2
	kindRTT     kind = 3
	kindReply   kind = 0x81 // the server's answer to a control hello
)

// notOursError is the answer to a peer whose first bytes are not the magic.
type notOursError struct {
	first []byte // what it sent, up to the magic's length
}

func (e *notOursError) Error() string {
	if len(e.first) == 0 {
		return "closed without sending anything"
	}
	return fmt.Sprintf("does not speak cephbench net (first bytes %q)", e.first)
}

// writeHello sends the hello of a connection of kind k.
func writeHello(w io.Writer, k kind, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	msg := make([]byte, headerLen, headerLen+len(b))
	copy(msg, magic)
	binary.BigEndian.PutUint16(msg[8:], protocolVersion)
	msg[10] = byte(k)
	binary.BigEndian.PutUint32(msg[11:], uint32(len(b)))
	_, err = w.Write(append(msg, b...))
	return err
}

// readHello reads a hello and returns its version, kind and body. A peer
// that is not cephbench net gets a *notOursError; a hello of another
// version is returned with its body unread.
func readHello(r io.Reader) (uint16, kind, []byte, error) {
	var h [headerLen]byte
	// Check each read against the magic, so a peer that sent a few wrong
	// bytes and waits (an iperf3 server sends one) is told apart at once.
	for n := 0; n < len(magic); {
		k, err := r.Read(h[n:len(magic)])
		n += k
		switch {
		case string(h[:n]) != magic[:n], errors.Is(err, io.EOF):
			return 0, 0, nil, &notOursError{first: h[:n]}
		case err != nil:
			return 0, 0, nil, err
		}
	}
	if _, err := io.ReadFull(r, h[len(magic):]); err != nil {
		return 0, 0, nil, fmt.Errorf("truncated hello: %w", err)
	}
	version := binary.BigEndian.Uint16(h[8:])
	k := kind(h[10])
	if version != protocolVersion {
		return version, k, nil, nil
	}
	size := binary.BigEndian.Uint32(h[11:])
	if size > maxHelloBody {
		return version, k, nil, fmt.Errorf("hello of %d bytes (at most %d)", size, maxHelloBody)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return version, k, nil, fmt.Errorf("truncated hello: %w", err)
	}
	return version, k, body, nil
}

// controlHello opens a test.
type controlHello struct {
	Params  Params `json:"params"`
	Version string `json:"cephbench_version"`
}

// attachHello opens a data or RTT connection of the test the server named
// in its reply.
type attachHello struct {
	Test   string    `json:"test"`
	Stream int       `json:"stream,omitempty"`
	Dir    Direction `json:"dir,omitempty"`
}

// reply answers a control hello: a test id, or why not.
type reply struct {
	Test    string      `json:"test,omitempty"`
	Busy    bool        `json:"busy,omitempty"`
	Error   string      `json:"error,omitempty"`
	Version string      `json:"cephbench_version"`
	Host    result.Host `json:"host"`
}

// Control messages, client to server: "start" once every data connection
// is open, "stop" when the test's time is up. Server to client: "go" once
// every data connection has arrived, "report" with its figures once its
// streams are done.
type message struct {
	Op     string      `json:"op"`
	Report *sideReport `json:"report,omitempty"`
}

// sideReport is what one end measured.
type sideReport struct {
	Streams []streamCount `json:"streams"`
	Series  []Interval    `json:"series"`
}

// writeFrame sends one control message.
func writeFrame(w io.Writer, m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	msg := make([]byte, 4, 4+len(b))
	binary.BigEndian.PutUint32(msg, uint32(len(b)))
	_, err = w.Write(append(msg, b...))
	return err
}

// readFrame reads one control message.
func readFrame(r io.Reader) (message, error) {
	var m message
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return m, err
	}
	size := binary.BigEndian.Uint32(h[:])
	if size > maxFrame {
		return m, fmt.Errorf("control message of %d bytes (at most %d)", size, maxFrame)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("bad control message: %w", err)
	}
	return m, nil
}
