package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The pools of each RGW zone's buckets are named from the zone's pools,
// before RGW made them; pools of other applications, and a pool called
// like RGW's but not RGW's, are left out.
func TestRGWPoolsAreEachZonesBucketPools(t *testing.T) {
	detail := `[{"pool_name":"cephbench","application_metadata":{"rados":{}}},
	{"pool_name":".rgw.root","application_metadata":{"rgw":{}}},
	{"pool_name":"default.rgw.log","application_metadata":{"rgw":{}}},
	{"pool_name":"default.rgw.meta","application_metadata":{"rgw":{}}},
	{"pool_name":"eu.rgw.buckets.data","application_metadata":{"rgw":{}}},
	{"pool_name":"fake.rgw.control","application_metadata":{"rbd":{}}}]`
	got, err := RGWPools([]byte(detail))
	want := "default.rgw.buckets.data default.rgw.buckets.index eu.rgw.buckets.data eu.rgw.buckets.index"
	if err != nil || strings.Join(got, " ") != want {
		t.Errorf("RGWPools = %q, %v; want %s", got, err, want)
	}
	if got, err := RGWPools([]byte(`[{"pool_name":"cephbench","application_metadata":{"rados":{}}}]`)); err != nil || len(got) != 0 {
		t.Errorf("a cluster without RGW: %q, %v", got, err)
	}
	if _, err := RGWPools([]byte(`{`)); err == nil {
		t.Error("a mangled answer is no error")
	}
}

// A configuration is found where librados looks for one, in its order,
// and named as found; none is none.
func TestFindConfigLooksWhereLibradosLooks(t *testing.T) {
	for _, c := range []struct {
		env   map[string]string
		files []string
		want  string
		found bool
	}{
		{map[string]string{"CEPH_CONF": "/c/ceph.conf", "CEPH_ARGS": "--id x"}, []string{"/etc/ceph/ceph.conf"}, "CEPH_CONF=/c/ceph.conf", true},
		{map[string]string{"CEPH_ARGS": " -m 10.0.0.1 "}, []string{"/etc/ceph/ceph.conf"}, "CEPH_ARGS=-m 10.0.0.1", true},
		{map[string]string{"HOME": "/home/u"}, []string{"/etc/ceph/ceph.conf", "/home/u/.ceph/ceph.conf"}, "/etc/ceph/ceph.conf", true},
		{map[string]string{"HOME": "/home/u"}, []string{"/home/u/.ceph/ceph.conf"}, "/home/u/.ceph/ceph.conf", true},
		{map[string]string{"CEPH_ARGS": "  "}, []string{"ceph.conf"}, "ceph.conf", true},
		{map[string]string{"HOME": "/home/u"}, nil, "", false},
	} {
		exists := func(p string) bool {
			for _, f := range c.files {
				if f == p {
					return true
				}
			}
			return false
		}
		got, found := FindConfig(func(k string) string { return c.env[k] }, exists)
		if got != c.want || found != c.found {
			t.Errorf("env %v, files %v: %q, %v; want %q, %v", c.env, c.files, got, found, c.want, c.found)
		}
	}
}

// A watched pool that does not exist yet (a zone's data pool before its
// first object) leaves the OSDs of the others asked, without a problem,
// and its own are asked once it exists.
func TestAPoolMadeDuringTheWatchHasItsOSDsAsked(t *testing.T) {
	s := healthy(t)
	s.answers["pg ls-by-pool"] = []string{"enoent", `raw: {"pg_stats":[{"acting":[0,1]},{"acting":[2]}]}`}
	for id := range 3 {
		s.answers[fmt.Sprintf("osd.%d perf dump", id)] = []string{perfDump(100, 1), perfDump(200, 1.1), perfDump(300, 1.2)}
	}
	sm := newSampler(s, []string{"z.rgw.buckets.data"}, time.Second)
	var asked []int
	var problems []string
	for i := range 3 {
		s.sample = i
		smp := sm.take(float64(i))
		asked = append(asked, smp.Sent["osd"])
		problems = append(problems, smp.Problems...)
	}
	if fmt.Sprint(asked) != "[0 3 3]" || len(problems) != 0 || s.sent["pg ls-by-pool"] != 2 {
		t.Errorf("OSDs asked a sample %v, PG map read %d times, problems %q; want none, then 3, read twice, no problem",
			asked, s.sent["pg ls-by-pool"], problems)
	}
}
