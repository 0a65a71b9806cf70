package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testdata holds the answers of a real Ceph 16.2.15 cluster (one memstore
// OSD, pools device_health_metrics and testpool).
func outputs(t *testing.T) Outputs {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return Outputs{Status: read("status.json"), DF: read("df.json"), PoolsDetail: read("pools.json"),
		OSDTree: read("tree.json"), Versions: read("versions.json")}
}

func TestParseRealOutputs(t *testing.T) {
	s, err := Parse(outputs(t), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if s.FSID == "" || s.Health.Status == "" || s.Mons != 1 || s.Mgrs != 1 || s.OSDs != (OSDCounts{1, 1, 1}) {
		t.Errorf("status: %+v", s)
	}
	if s.ElectionEpoch != 3 {
		t.Errorf("election epoch %d, want 3", s.ElectionEpoch)
	}
	if s.Usage.TotalBytes != 4<<30 || s.Usage.AvailBytes == 0 {
		t.Errorf("usage %+v", s.Usage)
	}
	var names []string
	for _, p := range s.Pools {
		names = append(names, p.Name)
		if p.Size != 1 || p.PGNum == 0 || p.Type != "replicated" || p.ID == 0 {
			t.Errorf("pool %+v", p)
		}
	}
	if strings.Join(names, ",") != "device_health_metrics,testpool" {
		t.Errorf("pools %v", names)
	}
	if len(s.OSDTree) != 3 || s.OSDTree[0].Type != "root" || s.OSDTree[2].Name != "osd.0" || s.OSDTree[2].Status != "up" || s.OSDTree[2].Depth != 2 {
		t.Errorf("osd tree %+v", s.OSDTree)
	}
	if s.Versions["osd"] != "16.2.15 pacific (1)" {
		t.Errorf("versions %v", s.Versions)
	}
	var b strings.Builder
	s.Print(&b)
	for _, want := range []string{"health: ", "daemons: 1 mon, 1 mgr, 1 osd (1 up, 1 in)", "testpool", "osd osd.0", "version osd: 16.2.15 pacific"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("printed snapshot lacks %q:\n%s", want, b.String())
		}
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	o := outputs(t)
	o.DF = []byte("{")
	if _, err := Parse(o, time.Now()); err == nil || !strings.Contains(err.Error(), "ceph df") {
		t.Errorf("garbage df: %v", err)
	}
}

func TestChangesSayWhatHappenedBetweenSnapshots(t *testing.T) {
	before, err := Parse(outputs(t), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	same := *before
	if c := Changes(before, &same); len(c) != 0 {
		t.Errorf("an unchanged cluster: %q", c)
	}
	if c := Changes(before, nil); c != nil {
		t.Errorf("no snapshot after: %q", c)
	}
	after := *before
	after.ElectionEpoch += 2
	after.OSDs = OSDCounts{Total: 1, Up: 0, In: 1}
	after.Health = Health{Status: "HEALTH_WARN", Checks: map[string]string{"OSD_DOWN": "1 osds down"}}
	got := strings.Join(Changes(before, &after), "; ")
	for _, want := range []string{
		"the monitors held an election (epoch 3 before, 5 after)",
		"OSDs up 1, in 1 before; up 0, in 1 after",
		"health " + before.Health.Status + " before, HEALTH_WARN after, raised: OSD_DOWN (1 osds down)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("changes %q lack %q", got, want)
		}
	}
	// A snapshot from before the epoch was recorded says nothing of it.
	old := *before
	old.ElectionEpoch = 0
	if c := strings.Join(Changes(&old, &after), "; "); strings.Contains(c, "election") {
		t.Errorf("changes from a snapshot without an epoch: %q", c)
	}
}
