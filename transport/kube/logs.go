package kube

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/cephbench/cephbench/agent"
)

// Logs opens pod logs: followed, each line prefixed by its RFC 3339
// timestamp and a space, from since on (the whole log when since is
// zero), as the API server's log endpoint serves them with follow and
// timestamps.
type Logs interface {
	Open(ctx context.Context, pod string, since time.Time) (io.ReadCloser, error)
}

// APILogs are the pods' logs from the API server.
type APILogs struct {
	Pods corev1client.PodInterface
}

// Open follows pod's log from since on.
func (l APILogs) Open(ctx context.Context, pod string, since time.Time) (io.ReadCloser, error) {
	opts := &corev1.PodLogOptions{Follow: true, Timestamps: true}
	if !since.IsZero() {
		opts.SinceTime = &metav1.Time{Time: since}
	}
	return l.Pods.GetLogs(pod, opts).Stream(ctx)
}

// follower turns one pod's log into its agent's stdout: the protocol's
// lines, each once, however often the log stream had to be reopened.
// The pod's other lines (the agent's stderr, which the log mixes in) go
// to diag.
type follower struct {
	logs  Logs
	pods  *podWatch
	index int
	// patience is how long the pod may take to start.
	patience time.Duration
	// retry is the pause before a log stream that ended is reopened.
	retry time.Duration
	out   *io.PipeWriter
	diag  func(pod, line string)

	last        time.Time // the timestamp of the last line taken
	takenAtLast int       // how many lines were taken with that timestamp

	mu  sync.Mutex
	err error // why the log ended, once it has
}

// run follows the pod's log until the pod ends, is lost or ctx ends, and
// ends out with the reason (none when the pod succeeded).
func (f *follower) run(ctx context.Context) {
	err := f.follow(ctx)
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
	f.out.CloseWithError(err)
}

// ended is why the log ended, once it has.
func (f *follower) ended() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *follower) follow(ctx context.Context) error {
	st, err := f.pods.waitStarted(ctx, f.index, f.patience)
	if err != nil {
		return err
	}
	for {
		since := f.last.Truncate(time.Second) // the API takes whole seconds
		if rc, err := f.logs.Open(ctx, st.name, since); err == nil {
			err = f.copy(st.name, rc)
			rc.Close()
			if err != nil {
				return err
			}
		}
		cur, _, _ := f.pods.get(f.index)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case cur.lost() != nil:
			return cur.lost()
		case cur.phase == corev1.PodSucceeded:
			return nil // its log was read to the end before it was reopened
		}
		// Ended early while the pod runs (a kubelet or API server
		// restart, a proxy's timeout): reopen it where it was.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(f.retry):
		}
	}
}

// copy passes on the lines of one log stream not taken before; an error
// only when the agent's stdout is no longer read.
func (f *follower) copy(pod string, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	atLast := 0 // the lines of this stream stamped f.last
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			if werr := f.take(pod, line, &atLast); werr != nil {
				return werr
			}
		}
		switch {
		case errors.Is(err, errLongLine):
			return fmt.Errorf("pod %s: %w", pod, err)
		case err != nil:
			return nil // the stream ended; the caller sees why
		}
	}
}

// take passes on one timestamped line unless it was taken before:
// lines are told apart by their timestamp and, among those stamped
// alike, their order; atLast counts the stream's lines stamped f.last.
func (f *follower) take(pod string, line []byte, atLast *int) error {
	stamp, text, _ := bytes.Cut(line, []byte(" "))
	t, err := time.Parse(time.RFC3339Nano, string(stamp))
	if err != nil {
		f.diag(pod, string(line)) // not a line of the log endpoint's form
		return nil
	}
	switch {
	case t.Before(f.last):
		return nil
	case t.Equal(f.last):
		if *atLast++; *atLast <= f.takenAtLast {
			return nil
		}
		f.takenAtLast = *atLast
	default:
		f.last, f.takenAtLast, *atLast = t, 1, 1
	}
	text = joinFragments(text, t)
	if !bytes.HasPrefix(text, []byte(`{"type":`)) {
		f.diag(pod, string(text))
		return nil
	}
	_, err = f.out.Write(append(text, '\n'))
	return err
}

// fragmentStamp is the timestamp the kubelet puts before each fragment
// of a line the container runtime split (containerd at 16 KiB): with
// timestamps on, a long line comes back with stamps inside it.
var fragmentStamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d) `)

// joinFragments is text, a line stamped at, without the stamps of its
// later fragments: those within a minute of the line's own. A protocol
// line has no such text of its own (its times are quoted, its
// histograms base64).
func joinFragments(text []byte, at time.Time) []byte {
	if !fragmentStamp.Match(text) {
		return text
	}
	return fragmentStamp.ReplaceAllFunc(text, func(m []byte) []byte {
		t, err := time.Parse(time.RFC3339Nano, string(m[:len(m)-1]))
		if err != nil || t.Before(at) || t.Sub(at) > time.Minute {
			return m
		}
		return nil
	})
}

var errLongLine = fmt.Errorf("a log line longer than %d bytes", agent.MaxLine)

// readLine reads one line without its newline, however long (a result
// with its cluster state is long), up to agent.MaxLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		switch {
		case len(line) > agent.MaxLine:
			return nil, errLongLine
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, err
		}
	}
}
