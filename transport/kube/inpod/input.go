// Package inpod is the agent's side of a run on Kubernetes, with no
// Kubernetes client library, so that the binary the pods run stays the
// one --push-binary copies: the coordinator's messages come through the
// run's ConfigMap, watched over the API server's HTTP watch with the
// pod's service account, and the agent's go out on its stdout, which the
// coordinator reads as the pod's log.
package inpod

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// StreamKey is the key of the run's ConfigMap that holds what the
// coordinator has sent the agent labelled label, one message a line: its
// job first, then its start times and any stop, appended as they are
// sent.
func StreamKey(label string) string { return "agent-" + label }

// Input is what the coordinator sent one agent, read as the agent reads
// its stdin: the bytes its key of the ConfigMap gained since the last
// read. Update and End may be called from any goroutine while a Read
// waits.
type Input struct {
	key string

	mu      sync.Mutex
	changed *sync.Cond
	seen    string // the key's value so far
	read    int    // how much of seen was read
	err     error  // why the input ended, once it has
}

// NewInput is the input of the agent whose key is key (StreamKey).
func NewInput(key string) *Input {
	in := &Input{key: key}
	in.changed = sync.NewCond(&in.mu)
	return in
}

// Update takes the ConfigMap's data as it now is. A key that lost what
// it held ends the input with an error: the coordinator only appends.
func (in *Input) Update(data map[string]string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	v := data[in.key]
	if in.err != nil || v == in.seen {
		return
	}
	if !strings.HasPrefix(v, in.seen) {
		in.err = fmt.Errorf("the ConfigMap's %s was rewritten, not appended to", in.key)
	} else {
		in.seen = v
	}
	in.changed.Broadcast()
}

// End ends the input once what was sent is read: err is io.EOF when the
// ConfigMap was deleted (the coordinator is done, as when ssh closes
// stdin), or why it could not be followed.
func (in *Input) End(err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.err == nil {
		in.err = err
	}
	in.changed.Broadcast()
}

// Read reads what was sent and not yet read, waiting for more; it returns
// the input's end once all is read.
func (in *Input) Read(p []byte) (int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for in.read == len(in.seen) && in.err == nil {
		in.changed.Wait()
	}
	if in.read < len(in.seen) {
		n := copy(p, in.seen[in.read:])
		in.read += n
		return n, nil
	}
	return 0, in.err
}

var _ io.Reader = (*Input)(nil)
