package sandbox

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// programs maps each program a sandbox runs to the Debian package that
// has it.
var programs = []struct{ program, pkg string }{
	{"ceph", "ceph-common"},
	{"ceph-authtool", "ceph-common"},
	{"monmaptool", "ceph-base"},
	{"ceph-mon", "ceph-mon"},
	{"ceph-mgr", "ceph-mgr"},
	{"ceph-osd", "ceph-osd"},
	{"ceph-mds", "ceph-mds"},
	{"radosgw", "radosgw"},
	{"radosgw-admin", "ceph-common"},
}

// MissingError lists the programs a sandbox needs that are not on PATH,
// and the packages that have them.
type MissingError struct {
	Programs []string
	Packages []string // Debian packages, each once
}

// Error names the missing programs and the apt-get line that installs them.
func (e *MissingError) Error() string {
	return fmt.Sprintf("missing %s; install them with: apt-get install %s",
		strings.Join(e.Programs, ", "), strings.Join(e.Packages, " "))
}

// CheckPackages returns a *MissingError if a program that a sandbox with
// an MDS (mds) or radosgw (rgw) runs is not on PATH, and nil otherwise.
func CheckPackages(mds, rgw bool) error {
	var e MissingError
	for _, p := range programs {
		if (p.program == "ceph-mds" && !mds) || (strings.HasPrefix(p.program, "radosgw") && !rgw) {
			continue
		}
		if _, err := exec.LookPath(p.program); err == nil {
			continue
		}
		e.Programs = append(e.Programs, p.program)
		if !slices.Contains(e.Packages, p.pkg) {
			e.Packages = append(e.Packages, p.pkg)
		}
	}
	if len(e.Programs) == 0 {
		return nil
	}
	return &e
}
