package netbench

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cephbench/cephbench/result/netresult"
)

// stream is one data connection as this end drives it: it sends or it
// receives, never both.
type stream struct {
	id   int
	dir  Direction
	send bool
	conn *net.TCPConn
	raw  syscall.RawConn
	buf  []byte // one per stream, reused for every write or read

	bytes   atomic.Int64
	retrans atomic.Int64 // kernel total so far; only the sender's is kept

	end time.Time // set before done is closed

	done chan struct{}
}

func newStream(id int, dir Direction, send bool, conn net.Conn, bufSize int) (*stream, error) {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return nil, fmt.Errorf("stream %d: not a TCP connection", id)
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	st := &stream{id: id, dir: dir, send: send, conn: tc, raw: raw, buf: make([]byte, bufSize), done: make(chan struct{})}
	if send {
		// Random payload, as iperf3 sends, so a compressing link or NIC
		// cannot flatter the figure.
		r := rand.NewChaCha8([32]byte{byte(id)})
		_, _ = r.Read(st.buf)
	}
	return st, nil
}

// sendAll writes until stop is set, then half-closes and waits for the
// receiver to close: its FIN means every byte arrived, so the retransmit
// count read after it is final.
func (st *stream) sendAll(stop *atomic.Bool) error {
	for !stop.Load() {
		n, err := st.conn.Write(st.buf)
		st.bytes.Add(int64(n))
		if err != nil {
			st.end = time.Now()
			return err
		}
	}
	st.end = time.Now()
	if err := st.conn.CloseWrite(); err != nil {
		return err
	}
	n, err := st.conn.Read(st.buf[:1])
	switch {
	case n > 0:
		return errors.New("the receiving end sent data")
	case !errors.Is(err, io.EOF):
		return err
	}
	st.sampleRetrans()
	return nil
}

// receiveAll reads until the sender's half-close.
func (st *stream) receiveAll() error {
	for {
		n, err := st.conn.Read(st.buf)
		st.bytes.Add(int64(n))
		if err != nil {
			st.end = time.Now()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// sampleRetrans reads the kernel's retransmit count of the stream. It is
// called by the sampler and by the stream itself at its end; the larger
// value wins, since the count only grows.
func (st *stream) sampleRetrans() {
	v := int64(-1)
	err := st.raw.Control(func(fd uintptr) {
		if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			v = int64(info.Total_retrans)
		}
	})
	if err != nil {
		return
	}
	for {
		old := st.retrans.Load()
		if v <= old || st.retrans.CompareAndSwap(old, v) {
			return
		}
	}
}

func (st *stream) finished() bool {
	select {
	case <-st.done:
		return true
	default:
		return false
	}
}

// side is one end's streams of a test: they start together, and a
// sampler counts each second until the last one ends.
type side struct {
	streams []*stream
	stop    atomic.Bool // set to make the senders finish
	start   time.Time

	failOnce sync.Once
	failErr  error
	failed   chan struct{} // closed at the first stream error

	series []Interval    // read after done
	done   chan struct{} // closed once every stream ended and the last interval is out
}

func newSide(streams []*stream) *side {
	return &side{streams: streams, failed: make(chan struct{}), done: make(chan struct{})}
}

// begin starts the streams and the sampler, which calls onInterval (if
// set) from its own goroutine after each interval.
func (sd *side) begin(onInterval func(Interval)) {
	sd.start = time.Now()
	var wg sync.WaitGroup
	for _, st := range sd.streams {
		wg.Go(func() {
			defer close(st.done)
			var err error
			if st.send {
				err = st.sendAll(&sd.stop)
			} else {
				err = st.receiveAll()
			}
			_ = st.conn.Close()
			if err != nil {
				sd.failOnce.Do(func() {
					sd.failErr = fmt.Errorf("stream %d: %w", st.id, err)
					close(sd.failed)
				})
			}
		})
	}
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	go sd.sample(all, onInterval)
}

// abort closes every stream at once; their goroutines end with errors.
func (sd *side) abort() {
	for _, st := range sd.streams {
		_ = st.conn.Close()
	}
}

// err is the first stream error, if any; valid after done.
func (sd *side) err() error {
	select {
	case <-sd.failed:
		return sd.failErr
	default:
		return nil
	}
}

// sample closes an interval every second, and the last one once all is
// closed (every stream has ended).
func (sd *side) sample(all <-chan struct{}, onInterval func(Interval)) {
	defer close(sd.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastBytes := make([]int64, len(sd.streams))
	lastRetrans := make([]int64, len(sd.streams))
	var last time.Duration
	emit := func(final bool) {
		now := time.Since(sd.start)
		iv := Interval{Start: last.Seconds(), End: now.Seconds(), Streams: make([]netresult.StreamInterval, len(sd.streams))}
		moved := false
		for i, st := range sd.streams {
			if st.send && !st.finished() {
				st.sampleRetrans()
			}
			b, r := st.bytes.Load(), st.retrans.Load()
			si := netresult.StreamInterval{ID: st.id, Dir: st.dir, Bytes: b - lastBytes[i]}
			if st.send {
				si.Retransmits = r - lastRetrans[i]
			}
			lastBytes[i], lastRetrans[i] = b, r
			moved = moved || si.Bytes > 0 || si.Retransmits > 0
			iv.Streams[i] = si
			sum := &iv.Up
			if st.dir == Down {
				sum = &iv.Down
			}
			if *sum == nil {
				*sum = &netresult.IntervalSum{}
			}
			(*sum).Bytes += si.Bytes
			(*sum).Retransmits += si.Retransmits
		}
		if final && !moved {
			return // the streams ended right after the last tick
		}
		for _, sum := range []*netresult.IntervalSum{iv.Up, iv.Down} {
			if sum != nil {
				sum.BitsPerSec = bitsPerSec(sum.Bytes, (now - last).Seconds())
			}
		}
		last = now
		sd.series = append(sd.series, iv)
		if onInterval != nil {
			onInterval(iv)
		}
	}
	for {
		select {
		case <-tick.C:
			emit(false)
		case <-all:
			emit(true)
			return
		}
	}
}

// streamCount is one end's count of one stream, as the server reports it.
type streamCount struct {
	ID              int       `json:"id"`
	Dir             Direction `json:"direction"`
	netresult.Count `json:"count"`
}

// counts returns each stream's figures; valid after done.
func (sd *side) counts() []streamCount {
	out := make([]streamCount, len(sd.streams))
	for i, st := range sd.streams {
		c := netresult.Count{Bytes: st.bytes.Load(), Seconds: st.end.Sub(sd.start).Seconds()}
		c.BitsPerSec = bitsPerSec(c.Bytes, c.Seconds)
		if st.send {
			c.Retransmits = st.retrans.Load()
		}
		out[i] = streamCount{ID: st.id, Dir: st.dir, Count: c}
	}
	return out
}
