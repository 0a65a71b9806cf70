// Package sshtest starts real OpenSSH servers for tests: one sshd per fake
// host, each with its own host key, loopback address, port, pid file and
// log, all in the test's temporary folder, and the client files that reach
// them (a user key, known_hosts and an ssh_config naming each host by an
// alias). It never reads or writes the machine's own ssh configuration:
// sshd runs with -f and clients are meant to run with -F.
//
// The fake hosts log in the current user by key only (root included), so a
// remote command runs on this machine as the test's own user. StartIsolated
// puts each host's sshd in a network namespace of its own, whose link a
// test can cut.
package sshtest

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/io/atomicfile"
	"github.com/cephbench/cephbench/internal/vethtest"
)

// HostEnv is the environment variable each fake host's sshd sets, for
// every session, to the host's alias: a remote command can tell which
// server ran it.
const HostEnv = "SSHTEST_HOST"

// How long an sshd has to accept its first connection, and to stop.
const (
	startTimeout = 10 * time.Second
	stopTimeout  = 3 * time.Second
)

// Fleet is a set of fake hosts and the client files that reach them. Its
// methods are not safe for concurrent use; its files may be read by any
// number of ssh clients at once.
type Fleet struct {
	// Hosts are the hosts Start made, host1 first.
	Hosts []*Host
	// ConfigFile is the ssh_config naming every host by its alias, for
	// ssh -F: address, port, user, identity, known_hosts, strict host key
	// checking and batch mode.
	ConfigFile string
	// KnownHosts holds the host keys of Hosts (not of AddUnknown's).
	KnownHosts string
	// IdentityFile is the user's private key (ed25519).
	IdentityFile string

	dir      string
	sshd     string
	user     string
	loopback bool    // fake hosts get addresses of their own, not 127.0.0.1
	isolated bool    // each host in its own network namespace
	shared   string  // the one cache folder of every host, when not empty
	all      []*Host // Hosts and AddUnknown's, in the order they started
}

// Host is one fake host: an sshd of its own.
type Host struct {
	Alias   string // its name in the fleet's ssh_config
	Addr    string // the address its sshd listens on: loopback, or its namespace's
	Port    int
	PidFile string // written by sshd once it listens
	LogFile string // sshd's log (LogLevel VERBOSE)
	Known   bool   // whether its host key is in the fleet's known_hosts
	// CacheDir is the host's XDG_CACHE_HOME, set for every session: what
	// a test leaves in a host's cache stays in the test's folder, one
	// folder per host, as on separate machines, or one for all of
	// StartSharedHome's hosts.
	CacheDir string

	hostKey string         // the private host key; its public half beside it
	veth    *vethtest.Link // its network namespace and link, when isolated
	exited  chan struct{}
	proc    *os.Process
}

// Start starts n fake hosts, host1 to hostN, and returns once each sshd
// accepts connections; they are stopped when the test ends. It skips the
// test when OpenSSH's server or client is not installed
// (scripts/install-deps.sh installs both) and fails it when a server does
// not start.
func Start(t testing.TB, n int) *Fleet {
	t.Helper()
	return start(t, n, false, false)
}

// StartSharedHome is Start with one cache folder (XDG_CACHE_HOME) for
// every host, as on machines whose users share one home directory over
// NFS: what one host writes in its cache the others find there.
func StartSharedHome(t testing.TB, n int) *Fleet {
	t.Helper()
	return start(t, n, false, true)
}

func start(t testing.TB, n int, isolated, sharedHome bool) *Fleet {
	t.Helper()
	sshd := programs(t)
	if os.Geteuid() == 0 {
		// sshd run by root insists on its privilege separation folder,
		// which the system's ssh service would have made.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatalf("sshd needs /run/sshd: %v", err)
		}
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &Fleet{
		ConfigFile:   filepath.Join(dir, "ssh_config"),
		KnownHosts:   filepath.Join(dir, "known_hosts"),
		IdentityFile: filepath.Join(dir, "id_ed25519"),
		dir:          dir,
		sshd:         sshd,
		user:         u.Username,
		loopback:     canListen("127.0.0.2"),
		isolated:     isolated,
	}
	if sharedHome {
		f.shared = filepath.Join(dir, "home", ".cache")
	}
	keygen(t, f.IdentityFile)
	pub, err := os.ReadFile(f.IdentityFile + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.authorizedKeys(), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		f.Hosts = append(f.Hosts, f.start(t, fmt.Sprintf("host%d", i+1), true))
	}
	f.writeClientFiles(t)
	return f
}

// AddUnknown starts one more fake host, named unknownN in the fleet's
// ssh_config, whose host key is not in known_hosts: ssh must refuse it.
func (f *Fleet) AddUnknown(t testing.TB) *Host {
	t.Helper()
	n := 1
	for _, h := range f.all {
		if !h.Known {
			n++
		}
	}
	h := f.start(t, fmt.Sprintf("unknown%d", n), false)
	f.writeClientFiles(t)
	return h
}

// Aliases returns the names of Hosts, in order.
func (f *Fleet) Aliases() []string {
	names := make([]string, len(f.Hosts))
	for i, h := range f.Hosts {
		names[i] = h.Alias
	}
	return names
}

// Pid returns the pid sshd wrote to its pid file.
func (h *Host) Pid(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile(h.PidFile)
	if err != nil {
		t.Fatalf("%s: %v", h.Alias, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: pid file: %v", h.Alias, err)
	}
	return pid
}

// Log returns what the host's sshd has logged so far.
func (h *Host) Log(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(h.LogFile)
	if err != nil {
		t.Fatalf("%s: %v", h.Alias, err)
	}
	return string(b)
}

// programs returns sshd's path, or skips t when sshd, ssh or ssh-keygen is
// missing. sshd must be named by an absolute path to re-execute itself,
// and is often outside a user's PATH.
func programs(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no OpenSSH client (scripts/install-deps.sh installs openssh-client): %v", err)
		}
	}
	if p, err := exec.LookPath("sshd"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no sshd (scripts/install-deps.sh installs openssh-server)")
	return ""
}

func keygen(t testing.TB, path string) {
	t.Helper()
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "cephbench-sshtest", "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen %s: %v: %s", path, err, out)
	}
}

// canListen reports whether a TCP port can be bound on addr: 127.0.0.0/8
// is all loopback on Linux, not everywhere.
func canListen(addr string) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// address is the loopback address of the fleet's i-th host (from 0):
// 127.0.0.2 onwards, or 127.0.0.1 for all of them when only it works.
func (f *Fleet) address(i int) string {
	if !f.loopback {
		return "127.0.0.1"
	}
	n := i + 2
	return netip.AddrFrom4([4]byte{127, 0, byte(n >> 8), byte(n)}).String()
}

func (f *Fleet) authorizedKeys() string { return filepath.Join(f.dir, "authorized_keys") }

// start starts one host's sshd and waits until it accepts. A port picked
// free can be taken by another process before sshd binds it, so a failed
// start is tried again on another port.
func (f *Fleet) start(t testing.TB, alias string, known bool) *Host {
	t.Helper()
	dir := filepath.Join(f.dir, alias)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h := &Host{
		Alias:    alias,
		Addr:     f.address(len(f.all)),
		PidFile:  filepath.Join(dir, "sshd.pid"),
		LogFile:  filepath.Join(dir, "sshd.log"),
		Known:    known,
		CacheDir: cmp.Or(f.shared, filepath.Join(dir, "cache")),
		hostKey:  filepath.Join(dir, "ssh_host_ed25519_key"),
	}
	keygen(t, h.hostKey)
	if f.isolated {
		h.isolate(t)
	}
	var err error
	for range 3 {
		if err = f.run(h, dir); err == nil {
			f.all = append(f.all, h)
			t.Cleanup(h.stop)
			return h
		}
	}
	t.Fatalf("%s: %v", alias, err)
	return nil
}

// run starts h's sshd on a free port and waits until it accepts; on
// failure sshd is stopped and the error quotes its log.
func (f *Fleet) run(h *Host, dir string) error {
	if h.veth != nil {
		h.Port = 22 // nothing else listens in the host's own namespace
	} else {
		port, err := freePort(h.Addr)
		if err != nil {
			return err
		}
		h.Port = port
	}
	config := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(config, []byte(f.sshdConfig(h)), 0o600); err != nil {
		return err
	}
	argv := []string{f.sshd, "-D", "-f", config, "-E", h.LogFile}
	if h.veth != nil {
		argv = append([]string{"ip", "netns", "exec", h.veth.Netns}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting sshd: %w", err)
	}
	h.proc = cmd.Process
	h.exited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(h.exited)
	}()
	if err := h.waitAccepting(); err != nil {
		h.stop()
		log, _ := os.ReadFile(h.LogFile)
		return fmt.Errorf("sshd on %s:%d: %w; its log:\n%s", h.Addr, h.Port, err, log)
	}
	return nil
}

func freePort(addr string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// sshdConfig is h's whole server configuration: sshd -f reads nothing
// else. StrictModes is off because the test's folders live under /tmp,
// which sshd would refuse as the home of authorized keys.
func (f *Fleet) sshdConfig(h *Host) string {
	lines := []string{
		fmt.Sprintf("ListenAddress %s:%d", h.Addr, h.Port),
		"HostKey " + quote(h.hostKey),
		"PidFile " + quote(h.PidFile),
		"AuthorizedKeysFile " + quote(f.authorizedKeys()),
		"AllowUsers " + f.user,
		"PermitRootLogin prohibit-password",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"UseDNS no",
		"PrintMotd no",
		"PrintLastLog no",
		"X11Forwarding no",
		"AllowTcpForwarding no",
		"MaxStartups 100",
		"MaxSessions 100",
		"LogLevel VERBOSE",
		// bash run by sshd reads ~/.bashrc unless SHLVL says it is not
		// the first shell; a test machine's (version managers and the
		// like) can cost a second per login that fake hosts need not pay.
		"SetEnv " + HostEnv + "=" + h.Alias + " SHLVL=1 " + quote("XDG_CACHE_HOME="+h.CacheDir),
	}
	return strings.Join(lines, "\n") + "\n"
}

// waitAccepting waits until h's sshd sends its banner to a new connection.
func (h *Host) waitAccepting() error {
	addr := net.JoinHostPort(h.Addr, strconv.Itoa(h.Port))
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-h.exited:
			return errors.New("sshd exited")
		default:
		}
		err := readBanner(addr)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not accepting after %v: %w", startTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readBanner(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(time.Second)); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "SSH-2.0-") {
		return fmt.Errorf("not an SSH banner: %q", line)
	}
	return nil
}

// stop ends h's sshd (SIGTERM, then SIGKILL after stopTimeout) and waits
// for it. Sessions it already forked end as their clients disconnect.
func (h *Host) stop() {
	_ = h.proc.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
	case <-time.After(stopTimeout):
		_ = h.proc.Kill()
		<-h.exited
	}
}

// writeClientFiles writes known_hosts and ssh_config for every host
// started so far, each whole, so an ssh client running meanwhile reads
// the old files or the new ones.
func (f *Fleet) writeClientFiles(t testing.TB) {
	t.Helper()
	var known, config strings.Builder
	for _, h := range f.all {
		if h.Known {
			pub, err := os.ReadFile(h.hostKey + ".pub")
			if err != nil {
				t.Fatal(err)
			}
			fields := strings.Fields(string(pub))
			if len(fields) < 2 {
				t.Fatalf("%s: host key %q", h.Alias, pub)
			}
			name := fmt.Sprintf("[%s]:%d", h.Addr, h.Port)
			if h.Port == 22 {
				name = h.Addr // ssh looks the default port up unbracketed
			}
			fmt.Fprintf(&known, "%s %s %s\n", name, fields[0], fields[1])
		}
		fmt.Fprintf(&config, "Host %s\n", h.Alias)
		for _, kv := range [][2]string{
			{"HostName", h.Addr},
			{"Port", strconv.Itoa(h.Port)},
			{"User", f.user},
			{"IdentityFile", quote(f.IdentityFile)},
			{"IdentitiesOnly", "yes"},
			{"IdentityAgent", "none"},
			{"UserKnownHostsFile", quote(f.KnownHosts)},
			{"GlobalKnownHostsFile", "/dev/null"},
			{"StrictHostKeyChecking", "yes"},
			{"UpdateHostKeys", "no"},
			{"CheckHostIP", "no"},
			{"BatchMode", "yes"},
			{"ControlMaster", "no"},
			{"ControlPath", "none"},
		} {
			fmt.Fprintf(&config, "  %s %s\n", kv[0], kv[1])
		}
	}
	if err := atomicfile.Write(f.KnownHosts, []byte(known.String())); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(f.ConfigFile, []byte(config.String())); err != nil {
		t.Fatal(err)
	}
}

// quote makes a path one argument in ssh_config and sshd_config, which
// both take double quotes.
func quote(path string) string { return `"` + path + `"` }
