package file

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Raw system calls (see internal/io/sysio) block a Go processor while the
// kernel holds the I/O: short on a local disk, but minutes on a network
// filesystem or an RBD device whose OSD died, so those keep ordinary calls.

// Filesystems whose I/O can block for as long as a remote server takes.
var networkFilesystems = map[int64]bool{
	0x00c36400: true, // ceph
	0x65735546: true, // fuse (ceph-fuse, sshfs, ...)
	0x6969:     true, // nfs
	0xff534d42: true, // cifs
	0xfe534d42: true, // smb2
	0x01021997: true, // 9p
	0x5346414f: true, // afs
	0x47504653: true, // gpfs
	0x0bd00bd0: true, // lustre
}

// Block devices whose I/O goes over the network.
var networkDevicePrefixes = []string{"rbd", "nbd", "drbd"}

// localIO reports whether f's I/O completes locally, so that raw system
// calls are safe on it.
func localIO(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	if fi.Mode()&os.ModeDevice != 0 {
		var st unix.Stat_t
		if unix.Fstat(int(f.Fd()), &st) != nil {
			return false
		}
		dev, err := filepath.EvalSymlinks(blockDevPath(st.Rdev))
		if err != nil {
			return false
		}
		name := filepath.Base(dev)
		for _, p := range networkDevicePrefixes {
			if strings.HasPrefix(name, p) {
				return false
			}
		}
		return true
	}
	var fs unix.Statfs_t
	if unix.Fstatfs(int(f.Fd()), &fs) != nil {
		return false
	}
	return !networkFilesystems[int64(fs.Type)]
}

func blockDevPath(rdev uint64) string {
	return "/sys/dev/block/" + itoa(unix.Major(rdev)) + ":" + itoa(unix.Minor(rdev))
}

func itoa(n uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}
