package diskstats

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/fuzztest"
)

// FuzzParseDiskstats: /proc/diskstats as a kernel, or a mangled copy,
// could give it, before and after a run: counters by device or a one-line
// error; every device parsed in both gets figures whose utilization is a
// percentage. Seeds: this format's lines of whole disks, partitions, loop
// and dm devices, older kernels' 14 fields and newer ones' 20.
func FuzzParseDiskstats(f *testing.F) {
	before := "   7       0 loop0 19398300 3769 624615252 14557789 13802237 9203 510006788 16676460 0 385084 31237982 204 0 13369548 676 512 3055\n" +
		" 253       0 vda 1000 10 80000 500 2000 20 160000 900 0 1200 1400\n 253       1 vda1 900 10 70000 450 1900 20 150000 850 0 1100 1300 0 0 0 0\n" +
		" 252       0 dm-0 10 0 80 5 20 0 160 9 1 12 14 0 0 0 0 0 0\n"
	after := "   7       0 loop0 19398400 3769 624616052 14557800 13802237 9203 510006788 16676460 0 385184 31238082 204 0 13369548 676 512 3055\n" +
		" 253       0 vda 1500 10 90000 700 2000 20 160000 900 0 1700 1900\n 253       1 vda1 1400 10 80000 650 1900 20 150000 850 0 1600 1800 0 0 0 0\n" +
		" 252       0 dm-0 10 0 80 5 20 0 160 9 1 12 14 0 0 0 0 0 0\n"
	f.Add([]byte(before), []byte(after))
	f.Add([]byte("8 0 sda 1 2 3\n"), []byte("\n\n"))
	f.Fuzz(func(t *testing.T, b, a []byte) {
		pre, err := ParseDiskstats(b)
		fuzztest.OneLine(t, b, err)
		post, errAfter := ParseDiskstats(a)
		fuzztest.OneLine(t, a, errAfter)
		if err != nil || errAfter != nil {
			return
		}
		var devices []Device
		for _, name := range slices.Sorted(maps.Keys(pre)) {
			devices = append(devices, Device{Name: name, Slaves: slices.Collect(maps.Keys(post))})
		}
		for _, u := range Between(devices, pre, post, time.Second) {
			if !(u.Util >= 0 && u.Util <= 100) || u.Slaves != nil && !(u.Slaves.Util >= 0 && u.Slaves.Util <= 100) {
				t.Fatalf("%s: utilization %v%% (slaves %+v)", u.Name, u.Util, u.Slaves)
			}
		}
	})
}
