package fioreport

import (
	"strings"
	"testing"

	"github.com/cephbench/cephbench/result"
)

// A job with its clones' results is a section per clone without group
// reporting, each with jobs=1 and its own figures, and one section of the
// whole job with it.
func TestClonesAreSectionsOfTheirOwn(t *testing.T) {
	async, sync := results(t)
	job := Job{Name: "c", Result: async, NumJobs: 2, IODepth: 32, Clones: []*result.Result{async, sync}}
	apart := &Report{Groups: []Group{{Jobs: []Job{job}}}}
	secs, _, err := apart.sections()
	if err != nil || len(secs) != 2 {
		t.Fatalf("%d sections, %v; want one per clone", len(secs), err)
	}
	for i, clone := range job.Clones {
		if s := secs[i]; s.members != 1 || s.dirs[0].ios != clone.Ops["read"].Ops || s.job.Name != "c" {
			t.Errorf("clone %d: section of %d members, %d reads; want 1 member and the clone's %d", i, s.members, s.dirs[0].ios, clone.Ops["read"].Ops)
		}
	}
	if out := render(t, apart.WriteJSON); strings.Count(out, `"jobname" : "c"`) != 2 {
		t.Errorf("JSON without two jobs named c:\n%.2000s", out)
	}
	together := &Report{Groups: []Group{{Jobs: []Job{job}, GroupReporting: true}}}
	if one, _, err := together.sections(); err != nil || len(one) != 1 || one[0].members != 2 || one[0].dirs[0].ios != async.Ops["read"].Ops {
		t.Errorf("with group reporting: %d sections, %v; want the job's own result as one", len(one), err)
	}
}
