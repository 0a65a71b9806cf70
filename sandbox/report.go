package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/cephbench/cephbench/internal/shellword"
)

// WriteExports writes the shell exports of Env to w, one "export KEY=value"
// line each, the value quoted for a POSIX shell.
func (c *Cluster) WriteExports(w io.Writer) {
	for _, kv := range c.Env() {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(w, "export %s=%s\n", k, shellword.Quote(v))
	}
}

// WriteServices writes, on one line without its newline, what a client
// of the sandbox can use: the pool, the CephFS and the S3 endpoint it has.
func (c *Cluster) WriteServices(w io.Writer) {
	fmt.Fprintf(w, "pool %q", Pool)
	if c.st.MDS {
		fmt.Fprintf(w, ", CephFS %q", FS)
	}
	if s3 := c.S3(); s3 != nil {
		fmt.Fprintf(w, ", S3 on %s (keys in %s)", s3.Endpoint, filepath.Join(c.Dir(), "rgw-user.json"))
	}
}

// WriteStatus writes the sandbox's folder and each daemon with its pid or
// "stopped" to w, then "ceph -s" if any daemon runs (waiting for it at
// most 30 seconds). Its error says that the sandbox or some of its
// daemons are stopped, or why ceph -s failed.
func (c *Cluster) WriteStatus(ctx context.Context, w io.Writer) error {
	fmt.Fprintf(w, "sandbox %s\n", c.Dir())
	stopped := 0
	for _, d := range c.Daemons() {
		state := fmt.Sprintf("running, pid %d", d.PID)
		if d.PID == 0 {
			state, stopped = "stopped", stopped+1
		}
		fmt.Fprintf(w, "  %-14s %s\n", d.Name, state)
	}
	if stopped == len(c.Daemons()) {
		return errors.New("the sandbox is stopped")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := c.Ceph(ctx, "-s")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s", out)
	if stopped > 0 {
		return fmt.Errorf("%d of the sandbox's daemons are stopped", stopped)
	}
	return nil
}
