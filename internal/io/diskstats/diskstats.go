// Package diskstats measures how busy the block devices under a benchmark's
// files were during a run, from the kernel's /proc/diskstats: the figures
// of fio's "Disk stats" section and its JSON "disk_util".
//
// The devices are found the way fio finds them: the device a path lives on
// (or the path itself, for a block device), its whole disk when that is a
// partition, and for stacked devices (dm, md) the devices under them,
// whose figures fio also prints averaged as "aggr" figures.
package diskstats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Device is a block device to sample, by its name in /proc/diskstats.
type Device struct {
	Name string
	// Slaves are the whole devices a stacked device (dm, md) is built on;
	// each is also in the list DevicesOf returns, after this one.
	Slaves []string
}

// DevicesOf returns the devices that hold paths, each once: a path's own
// device (a path that does not exist yet is on its directory's), its whole
// disk when that is a partition, then the devices under a stacked device.
// Paths on no block device (tmpfs, overlayfs, network file systems) add
// none, as they add no disk to fio's report.
func DevicesOf(paths ...string) ([]Device, error) {
	var devs []Device
	for _, p := range paths {
		maj, min, ok, err := deviceNumbers(p)
		if err != nil {
			return nil, err
		}
		if ok {
			devs = sysfs("/sys").add(devs, maj, min)
		}
	}
	return devs, nil
}

// deviceNumbers returns the device number of the block device path is, or
// lives on; ok is false for character devices and FIFOs, which live on no
// disk of their own.
func deviceNumbers(path string) (maj, min uint32, ok bool, err error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		if !errors.Is(err, unix.ENOENT) {
			return 0, 0, false, fmt.Errorf("%s: %w", path, err)
		}
		dir := filepath.Dir(path)
		if err := unix.Stat(dir, &st); err != nil {
			return 0, 0, false, fmt.Errorf("%s: %w", dir, err)
		}
		return unix.Major(st.Dev), unix.Minor(st.Dev), true, nil
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		return unix.Major(st.Rdev), unix.Minor(st.Rdev), true, nil
	case unix.S_IFCHR, unix.S_IFIFO:
		return 0, 0, false, nil
	}
	return unix.Major(st.Dev), unix.Minor(st.Dev), true, nil
}

// sysfs is the root of a sysfs tree: "/sys", or a copy of its shape in
// tests.
type sysfs string

// add appends the device maj:min (its whole disk, for a partition) and the
// devices under it to devs, unless already there.
func (s sysfs) add(devs []Device, maj, min uint32) []Device {
	dir, err := filepath.EvalSymlinks(filepath.Join(string(s), "dev", "block", fmt.Sprintf("%d:%d", maj, min)))
	if err != nil {
		return devs // no block device: an anonymous one, such as overlayfs's or btrfs's
	}
	return s.addDir(devs, dir)
}

// addDir is add for a device's sysfs directory.
func (s sysfs) addDir(devs []Device, dir string) []Device {
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		dir = filepath.Dir(dir) // a partition's directory is in its disk's
	}
	name := filepath.Base(dir)
	for _, d := range devs {
		if d.Name == name {
			return devs
		}
	}
	at := len(devs)
	devs = append(devs, Device{Name: name})
	entries, _ := os.ReadDir(filepath.Join(dir, "slaves")) // most devices have none
	for _, e := range entries {
		slave, err := filepath.EvalSymlinks(filepath.Join(dir, "slaves", e.Name()))
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(slave, "partition")); err == nil {
			slave = filepath.Dir(slave)
		}
		devs[at].Slaves = append(devs[at].Slaves, filepath.Base(slave))
		devs = s.addDir(devs, slave)
	}
	return devs
}

// Counters are a device's cumulative counters: the first eleven fields of
// its /proc/diskstats line. Ticks are milliseconds.
type Counters struct {
	ReadIOs, ReadMerges, ReadSectors, ReadTicks     uint64
	WriteIOs, WriteMerges, WriteSectors, WriteTicks uint64
	InFlight, IOTicks, TimeInQueue                  uint64
}

// ParseDiskstats reads /proc/diskstats' format: counters by device name.
func ParseDiskstats(b []byte) (map[string]Counters, error) {
	out := map[string]Counters{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 14 {
			return nil, fmt.Errorf("diskstats line %q: %d fields, want at least 14", sc.Text(), len(f))
		}
		var v [11]uint64
		for i := range v {
			n, err := strconv.ParseUint(f[3+i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("diskstats line %q: %w", sc.Text(), err)
			}
			v[i] = n
		}
		out[f[2]] = Counters{
			ReadIOs: v[0], ReadMerges: v[1], ReadSectors: v[2], ReadTicks: v[3],
			WriteIOs: v[4], WriteMerges: v[5], WriteSectors: v[6], WriteTicks: v[7],
			InFlight: v[8], IOTicks: v[9], TimeInQueue: v[10],
		}
	}
	return out, sc.Err()
}

// Figures are a device's use over a period, as fio prints it.
type Figures struct {
	ReadIOs, WriteIOs       uint64
	ReadMerges, WriteMerges uint64
	// ReadTicks and WriteTicks are the milliseconds reads and writes took.
	ReadTicks, WriteTicks uint64
	// InQueue is the milliseconds requests spent in the queue, weighted
	// by how many were there.
	InQueue uint64
	// Util is the share of the period the device was busy, in percent,
	// at most 100.
	Util float64
}

// Usage is one device's use over a period.
type Usage struct {
	Name string
	Figures
	// Slaves is fio's aggregate of the devices under a stacked device,
	// nil for others: each count averaged over them (rounded down, as fio
	// does) and the utilization of the busiest, since a stack is as busy
	// as its busiest member.
	Slaves *Figures
}

// Watch samples devices at its start and at Stop.
type Watch struct {
	devices []Device
	start   time.Time
	before  map[string]Counters
}

// diskstatsPath is where the kernel publishes the counters.
const diskstatsPath = "/proc/diskstats"

// Start samples devices now.
func Start(devices []Device) (*Watch, error) {
	before, err := sample()
	if err != nil {
		return nil, err
	}
	return &Watch{devices: devices, before: before, start: time.Now()}, nil
}

func sample() (map[string]Counters, error) {
	b, err := os.ReadFile(diskstatsPath)
	if err != nil {
		return nil, err
	}
	return ParseDiskstats(b)
}

// Stop samples the devices again and returns each one's use since Start,
// in the order of the devices given to Start. A device that has gone in
// between is left out.
func (w *Watch) Stop() ([]Usage, error) {
	after, err := sample()
	if err != nil {
		return nil, err
	}
	return Between(w.devices, w.before, after, time.Since(w.start)), nil
}

// Between returns each device's use from the counters before to those
// after, over wall time; devices missing from either are left out.
func Between(devices []Device, before, after map[string]Counters, wall time.Duration) []Usage {
	own := map[string]Usage{}
	var out []Usage
	for _, d := range devices {
		a, okA := after[d.Name]
		b, okB := before[d.Name]
		if !okA || !okB {
			continue
		}
		u := Usage{Name: d.Name, Figures: Figures{
			ReadIOs: a.ReadIOs - b.ReadIOs, WriteIOs: a.WriteIOs - b.WriteIOs,
			ReadMerges: a.ReadMerges - b.ReadMerges, WriteMerges: a.WriteMerges - b.WriteMerges,
			ReadTicks: a.ReadTicks - b.ReadTicks, WriteTicks: a.WriteTicks - b.WriteTicks,
			InQueue: a.TimeInQueue - b.TimeInQueue,
		}}
		if ms := wall.Milliseconds(); ms > 0 {
			u.Util = min(100, 100*float64(a.IOTicks-b.IOTicks)/float64(ms))
		}
		own[d.Name] = u
		out = append(out, u)
	}
	for i := range out {
		out[i].Slaves = aggregate(devices, own, out[i].Name)
	}
	return out
}

// aggregate is fio's aggregate of the slaves of the device named name.
func aggregate(devices []Device, own map[string]Usage, name string) *Figures {
	var slaves []string
	for _, d := range devices {
		if d.Name == name {
			slaves = d.Slaves
		}
	}
	var agg Figures
	n := uint64(0)
	for _, s := range slaves {
		u, ok := own[s]
		if !ok {
			continue
		}
		n++
		agg.ReadIOs += u.ReadIOs
		agg.WriteIOs += u.WriteIOs
		agg.ReadMerges += u.ReadMerges
		agg.WriteMerges += u.WriteMerges
		agg.ReadTicks += u.ReadTicks
		agg.WriteTicks += u.WriteTicks
		agg.InQueue += u.InQueue
		agg.Util = max(agg.Util, u.Util)
	}
	if n == 0 {
		return nil
	}
	agg.ReadIOs /= n
	agg.WriteIOs /= n
	agg.ReadMerges /= n
	agg.WriteMerges /= n
	agg.ReadTicks /= n
	agg.WriteTicks /= n
	agg.InQueue /= n
	return &agg
}
