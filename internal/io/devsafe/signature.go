package devsafe

import (
	"encoding/binary"
	"errors"
	"io"
)

// probeLen covers the furthest magic probed: btrfs's at 64 KiB + 64 and
// swap's at the end of a 64 KiB page.
const probeLen = 68 << 10

// probes are tried in order; the first to name a signature wins. Formats
// whose boot sector also ends in 0x55AA (ntfs, vfat) and GPT, whose
// protective MBR looks like a dos table, come before dos.
var probes = []func(b []byte) string{
	at("ceph_bluestore", 0, "bluestore block device"),
	at("crypto_LUKS", 0, "LUKS\xba\xbe"),
	at("xfs", 0, "XFSB"),
	at("squashfs", 0, "hsqs"),
	at("squashfs", 0, "sqsh"),
	// md superblock 1.1 sits at the start, 1.2 at 4 KiB.
	at("linux_raid_member", 0, mdMagic),
	at("linux_raid_member", 4096, mdMagic),
	when("LVM2_member", isLVM2),
	when("swap", isSwap),
	at("btrfs", 65600, "_BHRfS_M"),
	at("f2fs", 1024, "\x10\x20\xf5\xf2"),
	ext,
	at("iso9660", 32769, "CD001"),
	at("ntfs", 3, "NTFS    "),
	when("vfat", isFAT),
	// "EFI PART" is in LBA 1, whose offset depends on the sector size.
	at("gpt", 512, "EFI PART"),
	at("gpt", 4096, "EFI PART"),
	when("dos", isDOS),
}

func at(name string, off int, magic string) func([]byte) string {
	return when(name, func(b []byte) bool { return has(b, off, magic) })
}

func when(name string, match func([]byte) bool) func([]byte) string {
	return func(b []byte) string {
		if match(b) {
			return name
		}
		return ""
	}
}

const mdMagic = "\xfc\x4e\x2b\xa9" // 0xa92b4efc little endian

// Signature reads the first 68 KiB of r and returns the name blkid gives
// the filesystem, volume manager, RAID, encryption, swap or partition-table
// signature found there: "ext2", "ext3", "ext4", "jbd" (an external ext
// journal), "xfs", "btrfs", "f2fs", "vfat", "ntfs", "iso9660", "squashfs",
// "swap", "crypto_LUKS", "LVM2_member", "linux_raid_member",
// "ceph_bluestore", "gpt" or "dos"; or "" if there is none. Signatures kept
// at the end of a device (md 0.90 and 1.0, zfs) are not looked for. Input
// shorter than 68 KiB is probed as far as it goes; the error is r's, other
// than io.EOF. Signature only reads r.
func Signature(r io.ReaderAt) (string, error) {
	buf := make([]byte, probeLen)
	n, err := r.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	b := buf[:n]
	for _, probe := range probes {
		if name := probe(b); name != "" {
			return name, nil
		}
	}
	return "", nil
}

func has(b []byte, off int, magic string) bool {
	return off+len(magic) <= len(b) && string(b[off:off+len(magic)]) == magic
}

// isLVM2 looks for the physical volume label, which may be in any of the
// first four sectors.
func isLVM2(b []byte) bool {
	for s := 0; s < 4; s++ {
		if has(b, s*512, "LABELONE") && has(b, s*512+24, "LVM2 001") {
			return true
		}
	}
	return false
}

// isSwap looks for the magic at the end of the first page, for every page
// size Linux has (4 KiB on x86, up to 64 KiB on arm64 and ppc64).
func isSwap(b []byte) bool {
	for page := 4096; page <= 65536; page *= 2 {
		if has(b, page-10, "SWAPSPACE2") || has(b, page-10, "SWAP-SPACE") {
			return true
		}
	}
	return false
}

func isFAT(b []byte) bool {
	return has(b, 510, "\x55\xaa") &&
		(has(b, 54, "FAT12") || has(b, 54, "FAT16") || has(b, 82, "FAT32"))
}

// isDOS requires a well-formed entry table, not only the 0x55AA trailer:
// every boot flag 0x00 or 0x80, as blkid checks, and at least one entry in
// use.
func isDOS(b []byte) bool {
	if !has(b, 510, "\x55\xaa") {
		return false
	}
	used := false
	for i := 0; i < 4; i++ {
		e := b[446+16*i : 446+16*(i+1)]
		if e[0] != 0 && e[0] != 0x80 {
			return false
		}
		if e[4] != 0 {
			used = true
		}
	}
	return used
}

// ext finds the ext2/3/4 superblock magic and tells the versions apart by
// their feature flags, as blkid does: ext4 has a feature ext3 lacks, ext3 a
// journal.
func ext(b []byte) string {
	const (
		sb              = 1024
		compatJournal   = 0x4
		ext3Incompat    = 0x2 | 0x4 | 0x10 // filetype, recover, meta_bg
		ext3RoCompat    = 0x1 | 0x2 | 0x4  // sparse_super, large_file, btree_dir
		incompatJournal = 0x8              // an external journal device
	)
	switch {
	case !has(b, sb+0x38, "\x53\xef"):
		return ""
	case len(b) < sb+0x68: // a truncated superblock: no feature flags to read
		return "ext2"
	}
	compat := binary.LittleEndian.Uint32(b[sb+0x5c:])
	incompat := binary.LittleEndian.Uint32(b[sb+0x60:])
	roCompat := binary.LittleEndian.Uint32(b[sb+0x64:])
	switch {
	case incompat&incompatJournal != 0:
		return "jbd"
	case incompat&^ext3Incompat != 0 || roCompat&^ext3RoCompat != 0:
		return "ext4"
	case compat&compatJournal != 0:
		return "ext3"
	}
	return "ext2"
}
