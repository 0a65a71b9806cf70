package devsafe

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/io/devsafe/devsafetest"
	"golang.org/x/sys/unix"
)

// wantRefusal checks that err refuses dev for reason, as a user reads it.
func wantRefusal(t *testing.T, err error, dev, reason string) {
	t.Helper()
	if err == nil {
		t.Fatalf("CheckDevice(%s) = nil, want a refusal because %s", dev, reason)
	}
	msg := err.Error()
	for _, want := range []string{dev, reason, "pass --force to write anyway"} {
		if !strings.Contains(msg, want) {
			t.Errorf("CheckDevice(%s) = %q, want it to mention %q", dev, msg, want)
		}
	}
}

// mkfs puts an ext4 filesystem on dev, or only its superblock magic when
// mkfs.ext4 is missing, and reports whether the result can be mounted.
func mkfs(t *testing.T, dev string) bool {
	t.Helper()
	if _, err := exec.LookPath("mkfs.ext4"); err == nil {
		if out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput(); err != nil {
			t.Fatalf("mkfs.ext4 %s: %v %s", dev, err, out)
		}
		return true
	}
	writeAt(t, dev, 1080, []byte{0x53, 0xef})
	return false
}

func writeAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckDeviceLoop(t *testing.T) {
	dev, _ := devsafetest.Loop(t, 64<<20)
	link := filepath.Join(t.TempDir(), "by-id-link")
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}

	if err := CheckDevice(dev); err != nil {
		t.Fatalf("blank device: %v", err)
	}
	if err := CheckDevice(link); err != nil {
		t.Fatalf("blank device through a symlink: %v", err)
	}

	mountable := mkfs(t, dev)
	err := CheckDevice(dev)
	wantRefusal(t, err, dev, "signature")
	if want := "ext"; !strings.Contains(err.Error(), want) {
		t.Errorf("CheckDevice = %q, want it to name the %s filesystem", err, want)
	}
	err = CheckDevice(link)
	wantRefusal(t, err, link, "signature")
	if !strings.Contains(err.Error(), dev) {
		t.Errorf("CheckDevice(%s) = %q, want it to name the device %s too", link, err, dev)
	}

	if !mountable {
		t.Skip("mkfs.ext4 is not installed: cannot check a mounted device")
	}
	dir := devsafetest.Mount(t, dev)
	wantRefusal(t, CheckDevice(dev), dev, "mounted at "+dir)
}

func TestCheckDeviceHeldExclusively(t *testing.T) {
	dev, _ := devsafetest.Loop(t, 8<<20)
	f, err := os.OpenFile(dev, os.O_RDONLY|unix.O_EXCL, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wantRefusal(t, CheckDevice(dev), dev, "holds it exclusively")
}

func TestCheckDevicePartitions(t *testing.T) {
	dev, _ := devsafetest.Loop(t, 64<<20)
	// One Linux partition from sector 2048, 16 MiB long.
	mbr := make([]byte, 512)
	mbr[446+4] = 0x83
	copy(mbr[446+8:], []byte{0x00, 0x08, 0, 0, 0x00, 0x80, 0, 0})
	mbr[510], mbr[511] = 0x55, 0xaa
	writeAt(t, dev, 0, mbr)
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	err = unix.IoctlSetInt(int(f.Fd()), unix.BLKRRPART, 0)
	f.Close()
	if err != nil {
		t.Fatalf("rereading the partition table of %s: %v", dev, err)
	}
	part := dev + "p1"
	if _, err := os.Stat(filepath.Join("/sys/class/block", filepath.Base(dev), filepath.Base(part))); err != nil {
		// The table alone is still a signature.
		wantRefusal(t, CheckDevice(dev), dev, "dos signature")
		t.Skip("this kernel does not read dos partition tables")
	}
	waitFor(t, part)

	wantRefusal(t, CheckDevice(dev), dev, "has partitions ("+filepath.Base(part)+")")

	if !mkfs(t, part) {
		t.Skip("mkfs.ext4 is not installed: cannot check a mounted partition")
	}
	dir := devsafetest.Mount(t, part)
	wantRefusal(t, CheckDevice(dev), dev, "partition "+filepath.Base(part)+" is mounted at "+dir)
}

// waitFor waits for devtmpfs to create a device node.
func waitFor(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", path)
}

func TestCheckDeviceSwap(t *testing.T) {
	dev, _ := devsafetest.Loop(t, 16<<20)
	if _, err := exec.LookPath("swapon"); err != nil {
		t.Skip("swapon is not installed")
	}
	if out, err := exec.Command("mkswap", dev).CombinedOutput(); err != nil {
		t.Skipf("mkswap: %v %s", err, out)
	}
	if out, err := exec.Command("swapon", dev).CombinedOutput(); err != nil {
		t.Skipf("swapon is refused here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("swapoff", dev).CombinedOutput(); err != nil {
			t.Errorf("swapoff %s: %v %s", dev, err, out)
		}
	})
	wantRefusal(t, CheckDevice(dev), dev, "in use as swap")
}

// TestCheckDeviceRoot checks the device holding / on this machine, without
// writing anything.
func TestCheckDeviceRoot(t *testing.T) {
	var st unix.Stat_t
	if err := unix.Stat("/", &st); err != nil {
		t.Fatal(err)
	}
	uevent, err := os.ReadFile(fmt.Sprintf("/sys/dev/block/%d:%d/uevent", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		t.Skip("/ is not on a block device")
	}
	var dev string
	for _, l := range strings.Split(string(uevent), "\n") {
		if name, ok := strings.CutPrefix(l, "DEVNAME="); ok {
			dev = "/dev/" + name
		}
	}
	if _, err := os.Stat(dev); dev == "" || err != nil {
		t.Skipf("no device node for / (%q)", dev)
	}
	wantRefusal(t, CheckDevice(dev), dev, "mounted at /")
}

func TestCheckDeviceNotABlockDevice(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/null", file} {
		if err := CheckDevice(p); err == nil || !strings.Contains(err.Error(), p+" is not a block device") {
			t.Errorf("CheckDevice(%s) = %v, want it to say it is not a block device", p, err)
		}
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if err := CheckDevice(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("CheckDevice(%s) = %v, want an error naming it", missing, err)
	}
}

func TestParseMountinfo(t *testing.T) {
	in := `26 1 254:0 / / rw,relatime - ext4 /dev/vda rw
41 26 7:3 / /mnt/my\040disk rw,relatime shared:5 master:1 - xfs /dev/loop3 rw
42 26 0:51 / /srv rw - btrfs /dev/sdb rw
`
	got, err := parseMountinfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []mount{
		{dev: unix.Mkdev(254, 0), point: "/", source: "/dev/vda"},
		{dev: unix.Mkdev(7, 3), point: "/mnt/my disk", source: "/dev/loop3"},
		{dev: unix.Mkdev(0, 51), point: "/srv", source: "/dev/sdb"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseMountinfo = %+v\nwant %+v", got, want)
	}
	if _, err := parseMountinfo(strings.NewReader("garbage\n")); err == nil {
		t.Error("parseMountinfo accepted a malformed line")
	}
}

func TestParseSwaps(t *testing.T) {
	in := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n" +
		"/dev/zram0                              partition\t8388604\t\t0\t\t100\n" +
		"/swap\\040file                           file\t\t1048572\t\t0\t\t-2\n"
	got, err := parseSwaps(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/dev/zram0", "/swap file"}; !reflect.DeepEqual(got, want) {
		t.Errorf("parseSwaps = %q, want %q", got, want)
	}
}

// TestStackedDevices checks partitions and holders on a made-up /sys tree:
// an LVM volume (dm-1) on an md array (md0) built on sda1 and another disk.
func TestStackedDevices(t *testing.T) {
	sys := t.TempDir()
	for _, d := range []string{"sda/holders", "dm-1/holders"} {
		if err := os.MkdirAll(filepath.Join(sys, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{
		"sda/sda1/partition", "sda/sda2/partition",
		"sda1/holders/md0", "sdb/holders/md0", "md0/holders/dm-1",
	} {
		if err := os.MkdirAll(filepath.Join(sys, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sys, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	parts, err := partitions(sys, "sda")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sda1", "sda2"}; !reflect.DeepEqual(parts, want) {
		t.Errorf("partitions(sda) = %q, want %q", parts, want)
	}
	holders, err := holdersOf(sys, append([]string{"sda"}, parts...))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dm-1", "md0"}; !reflect.DeepEqual(holders, want) {
		t.Errorf("holders of sda = %q, want %q", holders, want)
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`/mnt/a\040b`: "/mnt/a b",
		`/a\134b`:     `/a\b`,
		`/tab\011x`:   "/tab\tx",
		`/short\04`:   `/short\04`,
		`/plain`:      "/plain",
		`/not\999oct`: `/not\999oct`,
		`/end\040`:    "/end ",
		`\040leading`: " leading",
	} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}
