package diskstats

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseDiskstats(t *testing.T) {
	// A kernel-6 line (20 fields: discard and flush counters follow) and a
	// kernel-4 line (14 fields).
	in := "   7       0 loop0 9646 1 338960 1354 1733 5467 691896 1288 0 2376 3707 154 0 10092698 56 579 1007\n" +
		" 254       0 vda 12 3 400 20 21 4 800 9 2 38 31\n"
	got, err := ParseDiskstats([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Counters{
		"loop0": {ReadIOs: 9646, ReadMerges: 1, ReadSectors: 338960, ReadTicks: 1354, WriteIOs: 1733, WriteMerges: 5467,
			WriteSectors: 691896, WriteTicks: 1288, InFlight: 0, IOTicks: 2376, TimeInQueue: 3707},
		"vda": {ReadIOs: 12, ReadMerges: 3, ReadSectors: 400, ReadTicks: 20, WriteIOs: 21, WriteMerges: 4,
			WriteSectors: 800, WriteTicks: 9, InFlight: 2, IOTicks: 38, TimeInQueue: 31},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	if _, err := ParseDiskstats([]byte("8 0 sda 1 2 3\n")); err == nil {
		t.Error("a short line parsed")
	}
}

// fakeSysfs lays out the parts of sysfs that device discovery reads: a
// disk sda with a partition sda1, a disk sdb, and dm-0 built on sda1 and
// sdb.
func fakeSysfs(t *testing.T) sysfs {
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("devices/pci/block/sda/sda1")
	mk("devices/pci/block/sda/queue")
	mk("devices/pci/block/sdb/queue")
	mk("devices/virtual/block/dm-0/slaves")
	mk("dev/block")
	if err := os.WriteFile(filepath.Join(root, "devices/pci/block/sda/sda1/partition"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link("../../devices/pci/block/sda/sda1", "dev/block/8:1")
	link("../../devices/pci/block/sdb", "dev/block/8:16")
	link("../../devices/virtual/block/dm-0", "dev/block/253:0")
	link("../../../../pci/block/sda/sda1", "devices/virtual/block/dm-0/slaves/sda1")
	link("../../../../pci/block/sdb", "devices/virtual/block/dm-0/slaves/sdb")
	return sysfs(root)
}

func TestDevicesAreFoundAsFioFindsThem(t *testing.T) {
	s := fakeSysfs(t)
	if got := s.add(nil, 8, 1); !reflect.DeepEqual(got, []Device{{Name: "sda"}}) {
		t.Errorf("a partition gives %+v, want its disk", got)
	}
	got := s.add(nil, 253, 0)
	got = s.add(got, 8, 16) // already listed as a slave
	got = s.add(got, 0, 42) // an anonymous device: no disk
	want := []Device{{Name: "dm-0", Slaves: []string{"sda", "sdb"}}, {Name: "sda"}, {Name: "sdb"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dm-0 gives %+v, want %+v", got, want)
	}
}

func TestBetweenAggregatesSlaves(t *testing.T) {
	devs := []Device{{Name: "dm-0", Slaves: []string{"sda", "sdb"}}, {Name: "sda"}, {Name: "sdb"}}
	before := map[string]Counters{"dm-0": {}, "sda": {}, "sdb": {ReadIOs: 10}}
	after := map[string]Counters{
		"dm-0": {ReadIOs: 100, WriteIOs: 50, IOTicks: 900, TimeInQueue: 1000},
		"sda":  {ReadIOs: 60, WriteIOs: 30, ReadMerges: 3, IOTicks: 500, TimeInQueue: 400},
		"sdb":  {ReadIOs: 51, WriteIOs: 21, IOTicks: 800, TimeInQueue: 700},
	}
	got := Between(devs, before, after, time.Second)
	if len(got) != 3 || got[0].Name != "dm-0" || got[0].ReadIOs != 100 || got[0].Util != 90 || got[0].InQueue != 1000 {
		t.Fatalf("got %+v", got)
	}
	agg := got[0].Slaves
	want := Figures{ReadIOs: (60 + 41) / 2, WriteIOs: (30 + 21) / 2, ReadMerges: 1, InQueue: 550, Util: 80}
	if agg == nil || *agg != want {
		t.Errorf("aggregate %+v, want %+v", agg, want)
	}
	if got[1].Slaves != nil || got[2].ReadIOs != 41 || got[2].Util != 80 {
		t.Errorf("slaves %+v %+v", got[1], got[2])
	}
	if u := Between(devs[1:2], before, map[string]Counters{"sda": {IOTicks: 5000}}, time.Second); u[0].Util != 100 {
		t.Errorf("util %g over a second of 5s busy: fio caps it at 100", u[0].Util)
	}
}

func TestDevicesOfThisMachine(t *testing.T) {
	stats, err := sample()
	if err != nil {
		t.Skip("no /proc/diskstats:", err)
	}
	devs, err := DevicesOf(t.TempDir(), filepath.Join(t.TempDir(), "not-yet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		if _, ok := stats[d.Name]; !ok {
			t.Errorf("device %q is not in /proc/diskstats", d.Name)
		}
	}
	if devs, err := DevicesOf("/dev/null"); err != nil || len(devs) != 0 {
		t.Errorf("a character device gives %+v, %v", devs, err)
	}
}

// TestLoopDeviceIO does known I/O on a loop device and reads it back from
// the kernel's counters.
func TestLoopDeviceIO(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for losetup")
	}
	backing := filepath.Join(t.TempDir(), "backing")
	if err := os.WriteFile(backing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(backing, 16<<20); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "-f", "--show", backing).Output()
	if err != nil {
		t.Skip("losetup:", err)
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if err := exec.Command("losetup", "-d", loop).Run(); err != nil {
			t.Errorf("detaching %s: %v", loop, err)
		}
	})
	devs, err := DevicesOf(loop)
	if err != nil || len(devs) != 1 || devs[0].Name != filepath.Base(loop) {
		t.Fatalf("%s gives %+v, %v", loop, devs, err)
	}
	w, err := Start(devs)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(loop, unix.O_RDWR|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE) // aligned for O_DIRECT
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	const writes, reads = 64, 32
	for i := range writes {
		if _, err := unix.Pwrite(fd, buf, int64(i)*4096*2); err != nil { // gaps: no merging
			t.Fatal(err)
		}
	}
	for i := range reads {
		if _, err := unix.Pread(fd, buf, int64(i)*4096*2); err != nil {
			t.Fatal(err)
		}
	}
	use, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	// Others (udev's probe of a new loop device) may read it too, so the
	// counts are at least ours.
	if len(use) != 1 || use[0].WriteIOs < writes || use[0].ReadIOs < reads || use[0].Util < 0 || use[0].Util > 100 {
		t.Errorf("%d writes and %d reads gave %+v", writes, reads, use)
	}
}
