package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// run runs a program to completion and returns its stdout; the error
// carries the end of its stderr.
func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = cephEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if lines := strings.Split(msg, "\n"); len(lines) > 5 {
			msg = strings.Join(lines[len(lines)-5:], "\n")
		}
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// Ceph runs the ceph command line tool against the sandbox as
// client.admin and returns its standard output. The error says what
// failed and carries the end of its standard error. It gives up after
// 15 seconds without the mon answering.
func (c *Cluster) Ceph(ctx context.Context, args ...string) ([]byte, error) {
	return run(ctx, "ceph", append([]string{"-c", c.Conf(), "--connect-timeout", "15"}, args...)...)
}

// DaemonStatus is one daemon of the sandbox and whether it runs.
type DaemonStatus struct {
	Name string // as Ceph names it: "mon.a", "osd.0", "client.rgw.a"
	PID  int    // 0 when it is not running
	Log  string // its log file
}

// Daemons returns every daemon the sandbox has started, in the order it
// started them, with the pid of those running now.
func (c *Cluster) Daemons() []DaemonStatus {
	c.mu.Lock()
	ds := slices.Clone(c.st.Daemons)
	c.mu.Unlock()
	out := make([]DaemonStatus, len(ds))
	for i, d := range ds {
		out[i] = DaemonStatus{Name: string(d), PID: c.pid(d), Log: c.logFile(d)}
	}
	return out
}

// running returns the sandbox's daemons that are running, as
// "name (pid N)".
func (c *Cluster) running() []string {
	var out []string
	for _, d := range c.Daemons() {
		if d.PID != 0 {
			out = append(out, fmt.Sprintf("%s (pid %d)", d.Name, d.PID))
		}
	}
	return out
}

// Down stops every daemon of the sandbox: SIGTERM, then SIGKILL for those
// still running after 30 seconds, or at once when ctx is done. It returns
// when none of them runs, and removes nothing but the pid files of
// killed daemons. Clients of the OSDs (radosgw, the MDS) go first, as
// they flush to the OSDs on their way out, and the mon goes last, so that
// the others can tell it they are leaving. Calling Down on a stopped
// sandbox does nothing.
func (c *Cluster) Down(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var clients, servers []daemon
	for _, d := range c.st.Daemons {
		switch d {
		case rgw, mds:
			clients = append(clients, d)
		case mon:
		default:
			servers = append(servers, d)
		}
	}
	return errors.Join(c.stop(ctx, clients...), c.stop(ctx, servers...), c.stop(ctx, mon))
}

// Purge removes what the sandbox created: the files and folders it made
// in its folder, and the folder itself if Up created it and nothing else
// is left in it. It refuses while a daemon of the sandbox runs.
func (c *Cluster) Purge() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.st.Daemons {
		if pid := c.pid(d); pid != 0 {
			return fmt.Errorf("%s (pid %d) is running; stop the sandbox first", d, pid)
		}
	}
	names := []string{
		confFile, adminKeyring, rgwUserFile, "log", "run", "crash", "mon.keyring", "monmap",
		string(mon), string(mgr), string(mds), rgwID, stateFile + ".tmp",
	}
	for i := range c.st.OSDs {
		names = append(names, "osd."+strconv.Itoa(i))
	}
	names = append(names, stateFile) // last: without it, Load no longer finds what is left
	for _, n := range names {
		if err := os.RemoveAll(filepath.Join(c.dir, n)); err != nil {
			return err
		}
	}
	if c.st.CreatedDir {
		if err := os.Remove(c.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("left %s in place: %w", c.dir, err)
		}
	}
	return nil
}

// osd returns the daemon of OSD id, or an error if the sandbox has none.
func (c *Cluster) osd(id int) (daemon, error) {
	if id < 0 || id >= c.st.OSDs {
		return "", fmt.Errorf("no osd.%d: the sandbox has osd.0 to osd.%d", id, c.st.OSDs-1)
	}
	return daemon("osd." + strconv.Itoa(id)), nil
}

// StopOSD stops the OSDs ids, side by side (SIGTERM, SIGKILL after 30
// seconds), and returns once their processes have exited. A cleanly
// stopped OSD tells the mon, which marks it down at once (unless that
// would leave fewer than mon_osd_min_up_ratio of the OSDs up); a killed
// one is marked down after the heartbeat grace. None is marked out, so
// their PGs stay degraded until StartOSD. Stopping a stopped OSD does
// nothing.
func (c *Cluster) StopOSD(ctx context.Context, ids ...int) error {
	ds := make([]daemon, len(ids))
	for i, id := range ids {
		d, err := c.osd(id)
		if err != nil {
			return err
		}
		ds[i] = d
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop(ctx, ds...)
}

// StartOSD starts OSD id if it is not running, and returns once the mon
// reports it up. The PGs may still be peering or recovering: WaitHealthy
// waits for them.
func (c *Cluster) StartOSD(ctx context.Context, id int) error {
	d, err := c.osd(id)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pid(d) == 0 {
		if err := c.launch(ctx, d); err != nil {
			return err
		}
	}
	for {
		out, err := c.Ceph(ctx, "osd", "dump", "-f", "json")
		if err != nil {
			return err
		}
		var m struct {
			OSDs []struct {
				OSD int `json:"osd"`
				Up  int `json:"up"`
			} `json:"osds"`
		}
		if err := json.Unmarshal(out, &m); err != nil {
			return fmt.Errorf("ceph osd dump: %w", err)
		}
		for _, o := range m.OSDs {
			if o.OSD == id && o.Up == 1 {
				return nil
			}
		}
		if c.pid(d) == 0 {
			return c.daemonError(d, fmt.Errorf("%s stopped", d))
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %s to be up: %w", d, err)
		}
	}
}

// StopMon stops the monitor (SIGTERM, SIGKILL after 30 seconds) and
// returns once it has exited. Clients that hold the cluster's maps go on
// with I/O on the OSDs; whatever asks the monitor (the ceph tool, a new
// client, a snapshot of the cluster's state) waits, or times out, until
// StartMon. Stopping a stopped monitor does nothing.
func (c *Cluster) StopMon(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop(ctx, mon)
}

// StartMon starts the monitor if it is not running and returns once it
// answers.
func (c *Cluster) StartMon(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pid(mon) == 0 {
		if err := c.launch(ctx, mon); err != nil {
			return err
		}
	}
	return c.waitMon(ctx)
}

// KillRGW kills radosgw with SIGKILL, as a crash would end it, and returns
// once its process has exited: its clients' connections are reset and
// new ones refused until StartRGW. Killing a stopped radosgw does
// nothing; a sandbox without radosgw is an error.
func (c *Cluster) KillRGW(ctx context.Context) error {
	if c.st.RGWPort == 0 {
		return errors.New("the sandbox has no radosgw")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if pid := c.pid(rgw); pid != 0 && !c.signalAndWait(ctx, pid, rgw, syscall.SIGKILL) {
		return fmt.Errorf("%s (pid %d) still runs after SIGKILL", rgw, pid)
	}
	// A killed daemon leaves its pid file.
	if err := os.Remove(c.pidFile(rgw)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// StartRGW starts radosgw if it is not running and returns once its
// endpoint answers HTTP.
func (c *Cluster) StartRGW(ctx context.Context) error {
	if c.st.RGWPort == 0 {
		return errors.New("the sandbox has no radosgw")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pid(rgw) == 0 {
		if err := c.launch(ctx, rgw); err != nil {
			return err
		}
	}
	return c.waitRGW(ctx)
}
