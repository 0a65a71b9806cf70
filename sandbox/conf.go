package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// confParams is everything ceph.conf depends on.
type confParams struct {
	dir     string // absolute
	fsid    string
	addr    string // every daemon's address
	monPort int    // msgr2; msgr1 listens on monPort+1
	osds    int
	store   string
	osdSize int64
	cephx   bool
	rgwPort int // 0: no radosgw
}

// monHost is the mon's address list as clients and monmaptool take it.
func monHost(addr string, port int) string {
	return fmt.Sprintf("[v2:%s:%d,v1:%s:%d]", addr, port, addr, port+1)
}

// renderConf returns the sandbox's ceph.conf. Everything a daemon writes
// (data, logs, pid files, admin sockets, crash dumps) is placed under
// p.dir so that the sandbox touches nothing of the host's own Ceph setup
// and two sandboxes never share a file.
func renderConf(p confParams) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	in := func(name string) string { return filepath.Join(p.dir, name) }
	auth := "none"
	if p.cephx {
		auth = "cephx"
	}
	size := min(2, p.osds)

	line("# A throwaway cluster made by \"cephbench sandbox up\", for trying cephbench")
	line("# and for tests. It is not for data.")
	line("[global]")
	line("fsid = %s", p.fsid)
	line("mon host = %s", monHost(p.addr, p.monPort))
	line("public addr = %s", p.addr)
	line("cluster addr = %s", p.addr)
	line("ms bind ipv6 = false")
	line("auth cluster required = %s", auth)
	line("auth service required = %s", auth)
	line("auth client required = %s", auth)
	line("crash dir = %s", in("crash"))
	// One host: replicas go to different OSDs, not hosts, and a pool of
	// size 2 stays writable with one OSD down.
	line("osd crush chooseleaf type = 0")
	line("osd pool default size = %d", size)
	line("osd pool default min size = 1")
	line("osd pool default pg num = 8")
	line("osd pool default pgp num = 8")
	// The autoscaler would split PGs after the cluster reports healthy,
	// which makes "healthy" a moving target for tests.
	line("osd pool default pg autoscale mode = off")
	line("mon allow pool delete = true")
	// PG states reach "ceph status" through the mgr, every 5 seconds by
	// default; a sandbox is waited on, so report every second.
	line("mgr stats period = 1")
	line("mon mgr digest period = 1")
	// Warnings every one-host sandbox raises; none says anything about the
	// state of this cluster, and they would keep health from HEALTH_OK.
	line("mon warn on pool no redundancy = false")
	line("mon warn on insecure global id reclaim = false")
	line("mon warn on insecure global id reclaim allowed = false")
	// A pool made for a benchmark by hand (ceph osd pool create, as rados
	// bench's users do) has no application until someone enables one:
	// the warning would keep health from HEALTH_OK for a minute, and a
	// run's cluster watch would count it as an event of that run.
	line("mon warn on pool no app = false")
	// A test's pool of many small objects beside nearly empty ones would
	// raise MANY_OBJECTS_PER_PG, a health change a run's watch reports.
	line("mon pg warn max object skew = 0")
	// The defaults (warn under 30% free, stop the mon under 5%) are about
	// production disks; a sandbox on a build machine's disk is fine with less.
	line("mon data avail warn = 5")
	line("mon data avail crit = 2")
	// A benchmark fills a few-GiB OSD in seconds, faster than the
	// default ratios (writes stop at 95%, the OSD itself refuses at 97%)
	// take effect, and BlueStore aborts on ENOSPC. Stopping writes with a
	// few hundred MiB to spare keeps a full sandbox a full cluster, which
	// is what a test of one wants, not a dead OSD.
	line("mon osd nearfull ratio = .75")
	line("mon osd backfillfull ratio = .80")
	line("mon osd full ratio = .85")
	line("osd failsafe full ratio = .90")
	line("")
	line("[client]")
	line("keyring = %s", in(adminKeyring))
	for _, s := range sections(p) {
		line("")
		line("[%s]", s.name)
		for _, kv := range s.settings {
			line("%s = %s", kv[0], kv[1])
		}
	}
	return b.String()
}

type section struct {
	name     string
	settings [][2]string
}

// sections are the per-daemon parts of ceph.conf.
func sections(p confParams) []section {
	in := func(name string) string { return filepath.Join(p.dir, name) }
	files := func(kind string) [][2]string {
		return [][2]string{
			{"log file", in("log/$name.log")},
			{"pid file", in("run/$name.pid")},
			{"admin socket", in("run/$name.asok")},
			{"keyring", in(kind + ".$id/keyring")},
		}
	}
	mon := append(files("mon"),
		[2]string{"mon data", in("mon.$id")},
		[2]string{"mon cluster log file", in("log/cluster.log")},
	)
	mgr := append(files("mgr"), [2]string{"mgr data", in("mgr.$id")})
	osd := append(files("osd"),
		[2]string{"osd data", in("osd.$id")},
		[2]string{"osd objectstore", p.store},
		// Setting its CRUSH device class as it starts can make a new
		// OSD's first start fail; a sandbox has no use for device classes.
		[2]string{"osd class update on start", "false"},
		[2]string{"osd memory target", fmt.Sprint(osdMemoryTarget)},
		// A file on a rotational disk makes bluestore an "hdd" OSD, whose
		// recovery pauses 0.1s per object: minutes for the objects a
		// test writes while an OSD is down.
		[2]string{"osd recovery sleep hdd", "0"},
		[2]string{"osd recovery sleep hybrid", "0"},
	)
	if p.store == "memstore" {
		osd = append(osd, [2]string{"memstore device bytes", fmt.Sprint(p.osdSize)})
	} else {
		// A file named "block" in the data folder is where bluestore puts
		// its symlink to the device, so the file must have another name.
		osd = append(osd,
			[2]string{"bluestore block path", in("osd.$id/" + blockFile)},
			[2]string{"bluestore block create", "true"},
			[2]string{"bluestore block size", fmt.Sprint(p.osdSize)},
		)
	}
	mds := append(files("mds"), [2]string{"mds data", in("mds.$id")})
	out := []section{{"mon", mon}, {"mgr", mgr}, {"osd", osd}, {"mds", mds}}
	if p.rgwPort != 0 {
		rgw := [][2]string{
			{"log file", in("log/$name.log")},
			{"pid file", in("run/$name.pid")},
			{"admin socket", in("run/$name.asok")},
			{"keyring", in(rgwID + "/keyring")},
			{"rgw data", in(rgwID)},
			// beast binds once per endpoint; adding port= too would make it
			// bind a second listener on all addresses.
			{"rgw frontends", fmt.Sprintf("beast endpoint=%s:%d", p.addr, p.rgwPort)},
		}
		out = append(out, section{rgwName, rgw})
	}
	return out
}
