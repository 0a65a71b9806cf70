package devsafe

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// image writes b to a new file and returns it opened for reading.
func image(t *testing.T, b []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func put(b []byte, off int, s string) { copy(b[off:], s) }

func put32(b []byte, off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }

func TestSignature(t *testing.T) {
	cases := []struct {
		name string
		want string
		make func(b []byte)
	}{
		{"ext2", "ext2", func(b []byte) { put(b, 1080, "\x53\xef") }},
		{"ext3", "ext3", func(b []byte) {
			put(b, 1080, "\x53\xef")
			put32(b, 1024+0x5c, 0x4) // has_journal
			put32(b, 1024+0x60, 0x2) // filetype
			put32(b, 1024+0x64, 0x3) // sparse_super, large_file
		}},
		{"ext4", "ext4", func(b []byte) {
			put(b, 1080, "\x53\xef")
			put32(b, 1024+0x5c, 0x4)
			put32(b, 1024+0x60, 0x2|0x40) // extents
		}},
		{"ext journal", "jbd", func(b []byte) {
			put(b, 1080, "\x53\xef")
			put32(b, 1024+0x60, 0x8) // journal_dev
		}},
		{"xfs", "xfs", func(b []byte) { put(b, 0, "XFSB") }},
		{"btrfs", "btrfs", func(b []byte) { put(b, 65600, "_BHRfS_M") }},
		{"swap", "swap", func(b []byte) { put(b, 4086, "SWAPSPACE2") }},
		{"old swap", "swap", func(b []byte) { put(b, 4086, "SWAP-SPACE") }},
		{"swap with 64k pages", "swap", func(b []byte) { put(b, 65536-10, "SWAPSPACE2") }},
		{"LUKS", "crypto_LUKS", func(b []byte) { put(b, 0, "LUKS\xba\xbe\x00\x02") }},
		{"LVM2 in sector 0", "LVM2_member", func(b []byte) { put(b, 0, "LABELONE"); put(b, 24, "LVM2 001") }},
		{"LVM2 in sector 1", "LVM2_member", func(b []byte) { put(b, 512, "LABELONE"); put(b, 536, "LVM2 001") }},
		{"dos", "dos", func(b []byte) {
			b[446+4] = 0x83 // first entry: Linux
			put(b, 510, "\x55\xaa")
		}},
		{"gpt", "gpt", func(b []byte) {
			b[446+4] = 0xee // protective MBR
			put(b, 510, "\x55\xaa")
			put(b, 512, "EFI PART")
		}},
		{"FAT16", "vfat", func(b []byte) {
			put(b, 54, "FAT16   ")
			put(b, 446, "\xfa\x33\xc0\x8e\xd0\xbc\x00\x7c") // boot code where the entries would be
			put(b, 510, "\x55\xaa")
		}},
		{"FAT32", "vfat", func(b []byte) { put(b, 82, "FAT32   "); put(b, 510, "\x55\xaa") }},
		{"ntfs", "ntfs", func(b []byte) { put(b, 3, "NTFS    "); put(b, 510, "\x55\xaa") }},
		{"iso9660", "iso9660", func(b []byte) { put(b, 32769, "CD001") }},
		{"squashfs", "squashfs", func(b []byte) { put(b, 0, "hsqs") }},
		{"f2fs", "f2fs", func(b []byte) { put32(b, 1024, 0xf2f52010) }},
		{"bluestore", "ceph_bluestore", func(b []byte) { put(b, 0, "bluestore block device\n") }},
		{"md 1.2", "linux_raid_member", func(b []byte) { put32(b, 4096, 0xa92b4efc) }},
		{"md 1.1", "linux_raid_member", func(b []byte) { put32(b, 0, 0xa92b4efc) }},

		{"zeros", "", func([]byte) {}},
		{"random", "", func(b []byte) {
			r := rand.New(rand.NewPCG(1, 2))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
		}},
		{"0x55AA without partitions", "", func(b []byte) { put(b, 510, "\x55\xaa") }},
		{"0x55AA with a bad boot flag", "", func(b []byte) {
			b[446] = 0x12
			b[446+4] = 0x83
			put(b, 510, "\x55\xaa")
		}},
		{"LABELONE without LVM2 type", "", func(b []byte) { put(b, 512, "LABELONE") }},
		{"FAT string without 0x55AA", "", func(b []byte) { put(b, 54, "FAT16   ") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := make([]byte, 1<<20)
			c.make(b)
			got, err := Signature(image(t, b))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Signature = %q, want %q", got, c.want)
			}
		})
	}
}

func TestSignatureShortInput(t *testing.T) {
	b := make([]byte, 2048)
	put(b, 1080, "\x53\xef")
	if got, err := Signature(image(t, b)); err != nil || got != "ext2" {
		t.Errorf("2 KiB image with an ext magic: Signature = %q, %v; want ext2", got, err)
	}
	if got, err := Signature(image(t, nil)); err != nil || got != "" {
		t.Errorf("empty image: Signature = %q, %v; want no signature", got, err)
	}
}

type failingReader struct{}

var errDisk = errors.New("disk on fire")

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errDisk }

func TestSignatureReadError(t *testing.T) {
	if _, err := Signature(failingReader{}); !errors.Is(err, errDisk) {
		t.Errorf("Signature on a failing reader: error %v, want %v", err, errDisk)
	}
}

// TestSignatureMatchesBlkid formats images with the real tools and checks
// that Signature names them as blkid does.
func TestSignatureMatchesBlkid(t *testing.T) {
	blkid, err := exec.LookPath("blkid")
	if err != nil {
		t.Skip("blkid is not installed")
	}
	tools := [][]string{
		{"mkfs.ext2", "-q", "-F"},
		{"mkfs.ext3", "-q", "-F"},
		{"mkfs.ext4", "-q", "-F"},
		{"mkswap"},
	}
	ran := 0
	for _, tool := range tools {
		if _, err := exec.LookPath(tool[0]); err != nil {
			continue
		}
		ran++
		t.Run(tool[0], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "img")
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, 16<<20); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(tool[0], append(tool[1:], path)...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v %s", tool[0], err, out)
			}
			out, err := exec.Command(blkid, "-p", "-o", "value", "-s", "TYPE", path).Output()
			if err != nil {
				t.Fatalf("blkid: %v", err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := Signature(f)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimSpace(string(out)); got != want {
				t.Errorf("Signature = %q, blkid says %q", got, want)
			}
		})
	}
	if ran == 0 {
		t.Skip("no mkfs tool is installed")
	}
}
