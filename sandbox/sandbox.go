// Package sandbox starts a throwaway Ceph cluster on this host from the
// installed Debian packages (ceph-mon, ceph-mgr, ceph-osd, and ceph-mds and
// radosgw when asked), listening on 127.0.0.1 only, for trying cephbench
// and for tests. It is not for data: its OSDs are small sparse files or
// RAM, and it keeps every file in one folder that Purge removes.
//
// Everything a sandbox is lives in its folder: ceph.conf, the admin
// keyring, each daemon's data, log, pid file and admin socket, and
// sandbox.json, which lets Load find the sandbox again from another
// process. Daemons are stopped by the pids in their pid files, checked
// against the process's command line, so only the sandbox's own daemons
// are ever signalled.
package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	mathrand "math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultDir is the sandbox folder when Options.Dir is empty.
const DefaultDir = "cephbench-sandbox"

// Pool is the replicated pool every sandbox has, for clients to use; its
// PGs being active+clean is part of being healthy.
const Pool = "cephbench"

// FS is the name of the CephFS a sandbox made with Options.MDS has.
const FS = "cephfs"

// Files in the sandbox folder, and daemon names.
const (
	stateFile       = "sandbox.json"
	confFile        = "ceph.conf"
	adminKeyring    = "ceph.client.admin.keyring"
	rgwUserFile     = "rgw-user.json"
	blockFile       = "block.img"
	rgwName         = "client.rgw.a"
	rgwID           = "rgw.a" // rgwName's folder
	osdMemoryTarget = 1 << 30
	defaultOSDSize  = 4 << 30
	defaultTimeout  = 5 * time.Minute
	mon             = daemon("mon.a")
	mgr             = daemon("mgr.x")
	mds             = daemon("mds.a")
	rgw             = daemon(rgwName)
)

// ErrRefused marks the errors of Up that are found before anything is
// created or started: invalid options, missing programs, or a folder that
// is not empty or already holds a sandbox.
var ErrRefused = errors.New("sandbox refused")

// ErrNoSandbox is returned by Load for a folder without a sandbox.
var ErrNoSandbox = errors.New("no sandbox")

// Options say what cluster Up starts. The zero value is valid: three
// bluestore OSDs of 4 GiB in ./cephbench-sandbox, with cephx.
type Options struct {
	Dir     string // the sandbox folder: must not exist (its parent must) or be empty
	OSDs    int    // number of OSDs, 1 to 16; 0 means 3
	Store   string // "bluestore" (the default: a sparse file per OSD) or "memstore" (RAM)
	OSDSize int64  // bytes per OSD, the file's size or memstore's limit; 0 means 4 GiB
	MDS     bool   // also start an MDS and create the CephFS named FS
	RGW     bool   // also start radosgw and create an S3 user
	Auth    string // "cephx" (the default) or "none"
	Port    int    // the mon's msgr2 port, msgr1 on Port+1; 0 picks two free ports
	RGWPort int    // radosgw's port; 0 picks a free one
	// Addr is the IPv4 address every daemon listens on and clients reach;
	// "" means 127.0.0.1.
	Addr string
	// Netns, if set, is a network namespace (as ip netns names it) made
	// by the caller, holding Addr, where the daemons run: a client in the
	// caller's namespace reaches them only through its link to Addr,
	// which the caller can cut. Needs root.
	Netns string
	// Timeout bounds the time from start to healthy; 0 means 5 minutes.
	Timeout time.Duration
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
}

func (o Options) withDefaults() (Options, error) {
	if o.Dir == "" {
		o.Dir = DefaultDir
	}
	if o.OSDs == 0 {
		o.OSDs = 3
	}
	if o.Store == "" {
		o.Store = "bluestore"
	}
	if o.OSDSize == 0 {
		o.OSDSize = defaultOSDSize
	}
	if o.Auth == "" {
		o.Auth = "cephx"
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1"
	}
	if o.Timeout == 0 {
		o.Timeout = defaultTimeout
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	switch {
	case o.OSDs < 1 || o.OSDs > 16:
		return o, refusedf("%d OSDs: want 1 to 16", o.OSDs)
	case o.Store != "bluestore" && o.Store != "memstore":
		return o, refusedf("store %q: want bluestore or memstore", o.Store)
	case o.OSDSize < 1<<30:
		// bluestore keeps a few hundred MiB for its own metadata.
		return o, refusedf("OSD size %d bytes: want at least 1 GiB", o.OSDSize)
	case o.Auth != "cephx" && o.Auth != "none":
		return o, refusedf("auth %q: want cephx or none", o.Auth)
	case o.Port < 0 || o.Port > 65534:
		return o, refusedf("port %d: want 1 to 65534 (msgr1 uses the next one)", o.Port)
	case o.RGWPort < 0 || o.RGWPort > 65535:
		return o, refusedf("rgw port %d: want 1 to 65535", o.RGWPort)
	case o.Timeout < 0:
		return o, refusedf("timeout %s: want a positive duration", o.Timeout)
	case !isIPv4(o.Addr):
		return o, refusedf("address %q: want an IPv4 address", o.Addr)
	case o.Netns != "" && o.Addr == "127.0.0.1":
		return o, refusedf("namespace %s: want the address of its link, which clients reach it by", o.Netns)
	}
	return o, nil
}

// refused is an error that Is ErrRefused without saying so in its text.
type refused struct{ error }

func (refused) Is(target error) bool { return target == ErrRefused }

func (r refused) Unwrap() error { return r.error }

func refusedf(format string, args ...any) error {
	return refused{fmt.Errorf(format, args...)}
}

// state is sandbox.json: what Load needs to find and stop the daemons.
type state struct {
	FSID       string   `json:"fsid"`
	MonPort    int      `json:"mon_port"`
	OSDs       int      `json:"osds"`
	Store      string   `json:"store"`
	OSDSize    int64    `json:"osd_size"`
	Auth       string   `json:"auth"`
	MDS        bool     `json:"mds"`
	RGWPort    int      `json:"rgw_port,omitempty"`
	Addr       string   `json:"addr,omitempty"`  // "" in sandboxes made before it was recorded: 127.0.0.1
	Netns      string   `json:"netns,omitempty"` // where the daemons run; "" for the caller's namespace
	CreatedDir bool     `json:"created_dir"`
	Daemons    []daemon `json:"daemons"` // in the order they were started
}

// S3User is the radosgw user of a sandbox made with Options.RGW, as
// recorded in rgw-user.json.
type S3User struct {
	Endpoint  string `json:"endpoint"` // http://127.0.0.1:PORT
	User      string `json:"user"`
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
}

// Cluster is a handle on a sandbox: its folder and its daemons. Its
// methods are safe for concurrent use; starting and stopping daemons
// (StopOSD, StartOSD, Down) are serialised. Handles in other processes
// (the CLI and a test binary, say) are not coordinated with this one:
// they share only the folder and the daemons' pid files.
type Cluster struct {
	dir string
	mu  sync.Mutex // serialises daemon starts and stops, and writes of st
	st  state
	s3  *S3User
}

// Dir returns the sandbox's folder, an absolute path.
func (c *Cluster) Dir() string { return c.dir }

// Conf returns the path of the sandbox's ceph.conf, which is all a Ceph
// client needs (it names the admin keyring).
func (c *Cluster) Conf() string { return filepath.Join(c.dir, confFile) }

// Keyring returns the path of the client.admin keyring.
func (c *Cluster) Keyring() string { return filepath.Join(c.dir, adminKeyring) }

// OSDs returns the number of OSDs the sandbox was made with; their ids
// are 0 to OSDs()-1.
func (c *Cluster) OSDs() int { return c.st.OSDs }

// S3 returns the S3 user of a sandbox made with Options.RGW, and nil
// otherwise.
func (c *Cluster) S3() *S3User { return c.s3 }

// Env returns the environment a client of the sandbox needs, as
// KEY=value: CEPHBENCH_SANDBOX (the folder), CEPH_CONF, CEPH_KEYRING and,
// with radosgw, AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY.
func (c *Cluster) Env() []string {
	env := []string{
		"CEPHBENCH_SANDBOX=" + c.dir,
		"CEPH_CONF=" + c.Conf(),
		"CEPH_KEYRING=" + c.Keyring(),
	}
	if c.s3 != nil {
		env = append(env,
			"AWS_ENDPOINT_URL="+c.s3.Endpoint,
			"AWS_ACCESS_KEY_ID="+c.s3.AccessKey,
			"AWS_SECRET_ACCESS_KEY="+c.s3.SecretKey)
	}
	return env
}

// Load returns the sandbox in dir, running or not. It starts nothing.
func Load(dir string) (*Cluster, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: abs}
	b, err := os.ReadFile(filepath.Join(abs, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", ErrNoSandbox, abs)
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &c.st); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(abs, stateFile), err)
	}
	if c.st.RGWPort != 0 {
		b, err := os.ReadFile(filepath.Join(abs, rgwUserFile))
		if err == nil {
			c.s3 = new(S3User)
			err = json.Unmarshal(b, c.s3)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return c, nil
}

// Up creates a sandbox in o.Dir, starts its daemons and returns once the
// cluster is healthy in the sense of CheckHealth. Errors wrapping
// ErrRefused come before anything is created. On any later error, and
// when ctx is canceled, Up stops every daemon it started; when ctx was
// canceled it also removes what it created, and otherwise it leaves the
// folder with the daemons' logs for a look (Purge removes it).
func Up(ctx context.Context, o Options) (*Cluster, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := CheckPackages(o.MDS, o.RGW); err != nil {
		return nil, refused{err}
	}
	monPort, err := pickPorts(o, o.Port, 2)
	if err != nil {
		return nil, err
	}
	rgwPort := 0
	if o.RGW {
		if rgwPort, err = pickPorts(o, o.RGWPort, 1); err != nil {
			return nil, err
		}
	}
	c, err := claim(o, monPort, rgwPort)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	err = c.create(cctx, o, start)
	if err == nil {
		fmt.Fprintf(o.Progress, "healthy after %.1fs\n", time.Since(start).Seconds())
		return c, nil
	}
	if ctx.Err() == nil && cctx.Err() != nil {
		err = fmt.Errorf("not up and healthy within %s: %w", o.Timeout, err)
	}
	// Stopping must not be cut short by the ctx that just ended.
	if stopErr := c.Down(context.WithoutCancel(ctx)); stopErr != nil {
		err = fmt.Errorf("%w; stopping it: %w", err, stopErr)
	}
	if ctx.Err() != nil {
		if purgeErr := c.Purge(); purgeErr != nil {
			err = fmt.Errorf("%w; removing it: %w", err, purgeErr)
		}
	}
	return nil, err
}

// claim makes or takes o.Dir for a new sandbox and writes its state file,
// exclusively, so that two Ups on one folder cannot both go ahead.
func claim(o Options, monPort, rgwPort int) (*Cluster, error) {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	created := false
	switch err := os.Mkdir(dir, 0o755); {
	case err == nil:
		created = true
	case errors.Is(err, fs.ErrExist):
		if existing, lerr := Load(dir); lerr == nil {
			if running := existing.running(); len(running) > 0 {
				return nil, refusedf("a sandbox is already running in %s (%s); \"cephbench sandbox down --dir %s\" stops it", dir, strings.Join(running, ", "), o.Dir)
			}
			return nil, refusedf("%s holds a stopped sandbox; \"cephbench sandbox down --purge --dir %s\" removes it", dir, o.Dir)
		}
		entries, rerr := os.ReadDir(dir)
		if rerr != nil {
			return nil, refusedf("%v", rerr)
		}
		if len(entries) > 0 {
			return nil, refusedf("%s is not empty; a sandbox needs a new or empty folder", dir)
		}
	default:
		return nil, refusedf("%v", err)
	}
	fsid, err := newUUID()
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, st: state{
		FSID: fsid, OSDs: o.OSDs, Store: o.Store, OSDSize: o.OSDSize, Auth: o.Auth,
		MDS: o.MDS, MonPort: monPort, RGWPort: rgwPort, CreatedDir: created, Netns: o.Netns,
	}}
	if o.Addr != "127.0.0.1" {
		c.st.Addr = o.Addr
	}
	f, err := os.OpenFile(filepath.Join(dir, stateFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, refusedf("%v", err)
	}
	f.Close()
	return c, c.save()
}

// save writes the state file; the caller holds c.mu or is the only user.
func (c *Cluster) save() error {
	b, err := json.MarshalIndent(c.st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(c.dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(c.dir, stateFile))
}

// create builds the cluster in c's claimed folder and waits until it is
// healthy.
func (c *Cluster) create(ctx context.Context, o Options, start time.Time) error {
	step := func(format string, args ...any) {
		fmt.Fprintf(o.Progress, "%5.1fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	for _, sub := range []string{"log", "run", "crash"} {
		if err := os.Mkdir(filepath.Join(c.dir, sub), 0o755); err != nil {
			return err
		}
	}
	conf := renderConf(confParams{
		dir: c.dir, fsid: c.st.FSID, addr: c.addr(), monPort: c.st.MonPort, osds: c.st.OSDs, store: c.st.Store,
		osdSize: c.st.OSDSize, cephx: c.st.Auth == "cephx", rgwPort: c.st.RGWPort,
	})
	if err := os.WriteFile(c.Conf(), []byte(conf), 0o644); err != nil {
		return err
	}
	if err := c.makeMon(ctx); err != nil {
		return err
	}
	step("mon.a is up on %s", monHost(c.addr(), c.st.MonPort))

	// After the mon, the steps below depend only on it; they run side by
	// side because each ceph command costs a fraction of a second.
	tasks := []func() error{
		func() error {
			return c.startWithKey(ctx, mgr, "mon", "allow profile mgr", "osd", "allow *", "mds", "allow *")
		},
		func() error {
			if _, err := c.Ceph(ctx, "osd", "pool", "create", Pool, "8", "8"); err != nil {
				return err
			}
			_, err := c.Ceph(ctx, "osd", "pool", "application", "enable", Pool, "rados")
			return err
		},
	}
	for i := range c.st.OSDs {
		tasks = append(tasks, func() error { return c.makeOSD(ctx, i) })
	}
	if o.MDS {
		tasks = append(tasks, func() error { return c.makeFS(ctx) })
	}
	if o.RGW {
		tasks = append(tasks, func() error {
			return c.startWithKey(ctx, rgw, "mon", "allow rw", "osd", "allow rwx", "mgr", "allow rw")
		})
	}
	if err := parallel(tasks...); err != nil {
		return err
	}
	started := fmt.Sprintf("mgr, %d %s OSDs", c.st.OSDs, c.st.Store)
	if o.MDS {
		started += ", mds"
	}
	step("%s started", started)
	if o.RGW {
		if err := c.makeS3User(ctx); err != nil {
			return err
		}
		step("radosgw answers on %s; S3 user in %s", c.s3.Endpoint, filepath.Join(c.dir, rgwUserFile))
	}
	return c.WaitHealthy(ctx)
}

// makeMon creates the keyrings and the mon, starts it and waits until it
// answers.
func (c *Cluster) makeMon(ctx context.Context) error {
	monKeyring := filepath.Join(c.dir, "mon.keyring")
	monmap := filepath.Join(c.dir, "monmap")
	defer os.Remove(monKeyring)
	defer os.Remove(monmap)
	steps := [][]string{
		{"ceph-authtool", "--create-keyring", c.Keyring(), "--gen-key", "-n", "client.admin",
			"--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mds", "allow *", "--cap", "mgr", "allow *"},
		{"ceph-authtool", "--create-keyring", monKeyring, "--gen-key", "-n", "mon.", "--cap", "mon", "allow *"},
		{"ceph-authtool", monKeyring, "--import-keyring", c.Keyring()},
		{"monmaptool", "--create", "--fsid", c.st.FSID, "--addv", mon.id(), monHost(c.addr(), c.st.MonPort),
			"--enable-all-features", "--set-min-mon-release", "pacific", monmap},
		{"ceph-mon", "-c", c.Conf(), "-i", mon.id(), "--mkfs", "--monmap", monmap, "--keyring", monKeyring},
	}
	for _, s := range steps {
		if _, err := run(ctx, s[0], s[1:]...); err != nil {
			return err
		}
	}
	if err := c.start(ctx, mon); err != nil {
		return err
	}
	// Every later step is a client of the mon.
	return c.waitMon(ctx)
}

// waitMon returns once the mon answers, or at once if it stopped.
func (c *Cluster) waitMon(ctx context.Context) error {
	for {
		_, err := c.Ceph(ctx, "mon", "stat")
		if err == nil {
			return nil
		}
		if c.pid(mon) == 0 {
			return c.daemonError(mon, errors.New("mon.a stopped"))
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// startWithKey gives d a key with caps and starts it.
func (c *Cluster) startWithKey(ctx context.Context, d daemon, caps ...string) error {
	folder := filepath.Join(c.dir, d.kind()+"."+d.id())
	if d == rgw {
		folder = filepath.Join(c.dir, rgwID)
	}
	if err := os.Mkdir(folder, 0o755); err != nil {
		return err
	}
	args := append([]string{"auth", "get-or-create", string(d)}, caps...)
	args = append(args, "-o", filepath.Join(folder, "keyring"))
	if _, err := c.Ceph(ctx, args...); err != nil {
		return err
	}
	return c.start(ctx, d)
}

// start records d in the state file, so that Down finds it even if Up is
// interrupted, and launches it. Up's daemons start side by side: only the
// record is under c.mu.
func (c *Cluster) start(ctx context.Context, d daemon) error {
	c.mu.Lock()
	c.st.Daemons = append(c.st.Daemons, d)
	err := c.save()
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.launch(ctx, d)
}

// makeOSD registers OSD id with the mon, creates its store and starts it.
// "ceph osd new" and "ceph-osd --mkfs" are given the same UUID: an OSD
// whose store was made with another one is refused at boot.
func (c *Cluster) makeOSD(ctx context.Context, id int) error {
	d := daemon("osd." + strconv.Itoa(id))
	folder := filepath.Join(c.dir, string(d))
	if err := os.Mkdir(folder, 0o755); err != nil {
		return err
	}
	uuid, err := newUUID()
	if err != nil {
		return err
	}
	key, err := run(ctx, "ceph-authtool", "--gen-print-key")
	if err != nil {
		return err
	}
	secret := strings.TrimSpace(string(key))
	if _, err := run(ctx, "ceph-authtool", "--create-keyring", filepath.Join(folder, "keyring"),
		"--name", string(d), "--add-key", secret); err != nil {
		return err
	}
	params := filepath.Join(folder, "new.json")
	if err := os.WriteFile(params, []byte(`{"cephx_secret": "`+secret+`"}`), 0o600); err != nil {
		return err
	}
	defer os.Remove(params)
	out, err := c.Ceph(ctx, "osd", "new", uuid, strconv.Itoa(id), "-i", params)
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(string(out)); got != strconv.Itoa(id) {
		return fmt.Errorf("ceph osd new %s %d: the mon gave id %q", uuid, id, got)
	}
	if _, err := run(ctx, "ceph-osd", "-c", c.Conf(), "-i", strconv.Itoa(id), "--mkfs", "--osd-uuid", uuid); err != nil {
		return c.daemonError(d, err)
	}
	return c.start(ctx, d)
}

// makeFS creates CephFS's two pools and the file system, and starts its
// MDS.
func (c *Cluster) makeFS(ctx context.Context) error {
	for _, args := range [][]string{
		{"osd", "pool", "create", FS + "_metadata", "8", "8"},
		{"osd", "pool", "create", FS + "_data", "8", "8"},
		{"fs", "new", FS, FS + "_metadata", FS + "_data"},
		// A one-MDS sandbox has no standby by design; without this the
		// file system warns that it wants one.
		{"fs", "set", FS, "standby_count_wanted", "0"},
	} {
		if _, err := c.Ceph(ctx, args...); err != nil {
			return err
		}
	}
	return c.startWithKey(ctx, mds, "mon", "allow profile mds", "osd", "allow rwx", "mds", "allow", "mgr", "allow profile mds")
}

// makeS3User waits until radosgw answers and creates the S3 user, whose
// keys it writes to rgw-user.json.
func (c *Cluster) makeS3User(ctx context.Context) error {
	if err := c.waitRGW(ctx); err != nil {
		return err
	}
	out, err := run(ctx, "radosgw-admin", "-c", c.Conf(), "user", "create",
		"--uid", "cephbench", "--display-name", "cephbench sandbox")
	if err != nil {
		return err
	}
	var u struct {
		Keys []struct {
			AccessKey string `json:"access_key"`
			SecretKey string `json:"secret_key"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(out, &u); err != nil || len(u.Keys) == 0 {
		return fmt.Errorf("radosgw-admin user create: no keys in %q", out)
	}
	s3 := &S3User{Endpoint: c.rgwEndpoint(), User: "cephbench", AccessKey: u.Keys[0].AccessKey, SecretKey: u.Keys[0].SecretKey}
	b, err := json.MarshalIndent(s3, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.dir, rgwUserFile), append(b, '\n'), 0o600); err != nil {
		return err
	}
	c.s3 = s3
	return nil
}

// rgwEndpoint is radosgw's URL.
func (c *Cluster) rgwEndpoint() string {
	return "http://" + net.JoinHostPort(c.addr(), strconv.Itoa(c.st.RGWPort))
}

// addr is the address the daemons listen on.
func (c *Cluster) addr() string {
	if c.st.Addr == "" {
		return "127.0.0.1"
	}
	return c.st.Addr
}

// waitRGW returns once radosgw answers HTTP, or at once if it stopped.
func (c *Cluster) waitRGW(ctx context.Context) error {
	for !httpAnswers(ctx, c.rgwEndpoint()) {
		if c.pid(rgw) == 0 {
			return c.daemonError(rgw, errors.New("radosgw stopped"))
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for radosgw on %s: %w", c.rgwEndpoint(), err)
		}
	}
	return nil
}

// parallel runs fns side by side and returns their errors joined.
func parallel(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, f := range fns {
		wg.Go(func() { errs[i] = f() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// pickPorts returns the first of n consecutive ports that are free on
// o.Addr now: port if it is not 0, and otherwise one picked at random
// below the ephemeral range. A daemon started later may still find one
// taken; it then fails with its log saying so. In a namespace of the
// caller's, where nothing else listens, any port is free.
func pickPorts(o Options, port, n int) (int, error) {
	isFree := func(first, n int) bool { return o.Netns != "" || free(o.Addr, first, n) }
	if port != 0 {
		if !isFree(port, n) {
			return 0, refusedf("port %d or one of the %d after it is in use on %s", port, n-1, o.Addr)
		}
		return port, nil
	}
	// Candidates come from below the kernel's ephemeral range, where the
	// daemons' own client connections (many, on a busy sandbox) never
	// sit; asking the kernel for a port would land among them.
	for range 200 {
		first := 10000 + mathrand.IntN(20000)
		if isFree(first, n) {
			return first, nil
		}
	}
	return 0, fmt.Errorf("found no %d free consecutive ports on %s", n, o.Addr)
}

// free reports whether ports first to first+n-1 are free on addr.
func free(addr string, first, n int) bool {
	for p := first; p < first+n; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(p)))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// newUUID returns a random (version 4) UUID.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
