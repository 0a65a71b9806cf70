// Package devsafe decides whether writing to a block device would destroy
// data in use: a mounted filesystem, active swap, a partition table, a
// device-mapper, LVM or md stack built on it, or a recognisable filesystem,
// volume or Ceph OSD signature. It only reads; it never writes.
package devsafe

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CheckDevice returns nil if writing to the block device at path would
// destroy nothing known to be in use, and otherwise an error naming the
// device and the reason, ending "pass --force to write anyway". It refuses
// a device when it, one of its partitions or anything stacked on it
// (device-mapper, LVM, md) is mounted or is active swap; when it has
// partitions or holders; when another program holds it open exclusively;
// and when its first bytes carry a signature that Signature recognises.
// Symbolic links such as /dev/disk/by-id/... are followed. A path that is
// not a block device, or that cannot be inspected, is an error too.
// CheckDevice reads /proc and /sys, and the device itself read-only; it is
// safe for concurrent use.
func CheckDevice(path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Stat(real, &st); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return fmt.Errorf("%s is not a block device", path)
	}
	dev := path
	if real != path {
		dev = fmt.Sprintf("%s (%s)", path, real)
	}
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("refusing to write to %s: %s; pass --force to write anyway", dev, fmt.Sprintf(format, args...))
	}

	name, err := sysName(st.Rdev)
	if err != nil {
		return fmt.Errorf("%s: %w", dev, err)
	}
	parts, err := partitions(sysBlock, name)
	if err != nil {
		return fmt.Errorf("%s: %w", dev, err)
	}
	holders, err := holdersOf(sysBlock, append([]string{name}, parts...))
	if err != nil {
		return fmt.Errorf("%s: %w", dev, err)
	}

	// who names each device whose use would be lost, by device number.
	who := map[uint64]string{st.Rdev: "it"}
	for _, p := range parts {
		if err := addDev(who, p, "its partition "+p); err != nil {
			return fmt.Errorf("%s: %w", dev, err)
		}
	}
	for _, h := range holders {
		if err := addDev(who, h, h+", which is built on it,"); err != nil {
			return fmt.Errorf("%s: %w", dev, err)
		}
	}
	if m, ok, err := mountedIn(who); err != nil {
		return err
	} else if ok {
		return refuse("%s is mounted at %s", who[m.dev], m.point)
	}
	if d, ok, err := swapIn(who); err != nil {
		return err
	} else if ok {
		return refuse("%s is in use as swap", who[d])
	}
	if len(holders) > 0 {
		return refuse("it is in use by %s (device-mapper, LVM or md)", strings.Join(holders, ", "))
	}
	if len(parts) > 0 {
		return refuse("it has partitions (%s)", strings.Join(parts, ", "))
	}

	// The kernel refuses an exclusive open of a device that a filesystem,
	// swap or a stacked driver has claimed, which catches users the checks
	// above cannot see (another mount namespace, a program holding it).
	f, err := os.OpenFile(real, os.O_RDONLY|unix.O_EXCL, 0)
	if errors.Is(err, unix.EBUSY) {
		return refuse("it is in use (the kernel or another program holds it exclusively)")
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sig, err := Signature(f)
	if err != nil {
		return fmt.Errorf("%s: reading its first blocks: %w", dev, err)
	}
	if sig != "" {
		return refuse("it carries a %s signature", sig)
	}
	return nil
}

// sysBlock has a directory for every block device, holding its
// partitions, its holders and its device number.
const sysBlock = "/sys/class/block"

// sysName returns the kernel's name for the block device numbered rdev
// ("sda", "sda1", "dm-0", "loop3").
func sysName(rdev uint64) (string, error) {
	link, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(rdev), unix.Minor(rdev)))
	if err != nil {
		return "", fmt.Errorf("finding the device in /sys: %w", err)
	}
	return filepath.Base(link), nil
}

// partitions lists the partitions of the device called name, in order.
func partitions(sys, name string) ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(sys, name, "*", "partition"))
	if err != nil {
		return nil, err
	}
	parts := make([]string, 0, len(dirs))
	for _, d := range dirs {
		parts = append(parts, filepath.Base(filepath.Dir(d)))
	}
	sort.Strings(parts)
	return parts, nil
}

// holdersOf lists the devices stacked on any of names, directly or through
// other holders (an LVM volume on an md array on a disk).
func holdersOf(sys string, names []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for len(names) > 0 {
		n := names[0]
		names = names[1:]
		entries, err := os.ReadDir(filepath.Join(sys, n, "holders"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if h := e.Name(); !seen[h] {
				seen[h] = true
				out = append(out, h)
				names = append(names, h)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// addDev records the device number of the block device called name.
func addDev(who map[uint64]string, name, desc string) error {
	file := filepath.Join(sysBlock, name, "dev")
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	d, err := parseDevNum(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	who[d] = desc
	return nil
}

// parseDevNum parses "major:minor".
func parseDevNum(s string) (uint64, error) {
	maj, min, ok := strings.Cut(s, ":")
	if !ok {
		return 0, fmt.Errorf("bad device number %q", s)
	}
	a, err := strconv.ParseUint(maj, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad device number %q", s)
	}
	b, err := strconv.ParseUint(min, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad device number %q", s)
	}
	return unix.Mkdev(uint32(a), uint32(b)), nil
}

// A mount is one line of /proc/self/mountinfo.
type mount struct {
	dev    uint64 // st_dev of the filesystem
	point  string
	source string // the mounted device or the filesystem's own name
}

// mountedIn returns a mount of a device in who.
func mountedIn(who map[uint64]string) (mount, bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return mount{}, false, err
	}
	defer f.Close()
	mounts, err := parseMountinfo(f)
	if err != nil {
		return mount{}, false, fmt.Errorf("/proc/self/mountinfo: %w", err)
	}
	for _, m := range mounts {
		if _, ok := who[m.dev]; ok {
			return m, true, nil
		}
		// Filesystems spanning devices (btrfs) report an anonymous st_dev,
		// so the source device is matched too.
		if d, ok := blockDevNum(m.source); ok {
			if _, ok := who[d]; ok {
				m.dev = d
				return m, true, nil
			}
		}
	}
	return mount{}, false, nil
}

// parseMountinfo reads the format of proc(5) /proc/PID/mountinfo.
func parseMountinfo(r io.Reader) ([]mount, error) {
	var out []mount
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// Optional fields end at " - ", after which come the filesystem
		// type and the source.
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 2 {
			return nil, fmt.Errorf("malformed line %q", sc.Text())
		}
		dev, err := parseDevNum(f[2])
		if err != nil {
			return nil, err
		}
		out = append(out, mount{dev: dev, point: unescape(f[4]), source: unescape(g[1])})
	}
	return out, sc.Err()
}

// swapIn returns the number of an active swap device in who.
func swapIn(who map[uint64]string) (uint64, bool, error) {
	f, err := os.Open("/proc/swaps")
	if errors.Is(err, os.ErrNotExist) { // a kernel without swap support
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	names, err := parseSwaps(f)
	if err != nil {
		return 0, false, fmt.Errorf("/proc/swaps: %w", err)
	}
	for _, n := range names {
		if d, ok := blockDevNum(n); ok {
			if _, ok := who[d]; ok {
				return d, true, nil
			}
		}
	}
	return 0, false, nil
}

// parseSwaps returns the file names listed in /proc/swaps.
func parseSwaps(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for first := true; sc.Scan(); first = false {
		f := strings.Fields(sc.Text())
		if first || len(f) == 0 { // the header
			continue
		}
		out = append(out, unescape(f[0]))
	}
	return out, sc.Err()
}

// blockDevNum returns the device number of the block device at path.
// Only /dev paths are looked at: other mount sources are names, not files,
// and statting them could touch a network filesystem.
func blockDevNum(path string) (uint64, bool) {
	if !strings.HasPrefix(path, "/dev/") {
		return 0, false
	}
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return 0, false
	}
	return st.Rdev, true
}

// unescape undoes the octal escapes (\040 for a space) that the kernel
// puts in paths in /proc/self/mountinfo and /proc/swaps.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
