// Package devsafetest attaches throwaway loop devices for tests that need a
// real block device.
package devsafetest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Loop attaches a loop device, with partition scanning, to a new sparse
// file of size bytes in t.TempDir and returns the device path and the
// file's. The device is detached when the test and its subtests end;
// cleanups registered later (an unmount) run before that. Loop skips the
// test unless it runs as root with losetup installed, and fails it if
// losetup cannot attach a device.
func Loop(t testing.TB, size int64) (dev, image string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("attaching a loop device needs root")
	}
	losetup, err := exec.LookPath("losetup")
	if err != nil {
		t.Skip("losetup is not installed")
	}
	image = t.TempDir() + "/loop.img"
	f, err := os.Create(image)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(losetup, "--find", "--show", "--partscan", image).Output()
	if err != nil {
		t.Fatalf("losetup: %v %s", err, stderr(err))
	}
	dev = strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command(losetup, "--detach", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v %s", dev, err, out)
		}
	})
	return dev, image
}

// Mount mounts dev on a new directory and unmounts it when the test ends.
func Mount(t testing.TB, dev string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", dev, dir).CombinedOutput(); err != nil {
		t.Fatalf("mount %s: %v %s", dev, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// Filesystem makes an ext4 filesystem of size bytes, with no blocks kept
// for root, on a loop device (Loop), and mounts it (Mount): a small disk
// a test can fill.
func Filesystem(t testing.TB, size int64) string {
	t.Helper()
	dev, _ := Loop(t, size)
	if out, err := exec.Command("mkfs.ext4", "-q", "-m", "0", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4 %s: %v %s", dev, err, out)
	}
	return Mount(t, dev)
}

func stderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
