package cluster

import (
	"fmt"
	"sort"
	"strings"
)

// Changes says what changed between two snapshots of one cluster that a
// reader of the figures measured between them must know, one phrase
// each: a monitor election, OSDs going down or out (or coming back), and
// the health with the checks raised since. It returns nothing when either
// snapshot is missing or nothing of that changed.
func Changes(before, after *Snapshot) []string {
	if before == nil || after == nil {
		return nil
	}
	var out []string
	if before.ElectionEpoch != 0 && after.ElectionEpoch != before.ElectionEpoch {
		out = append(out, fmt.Sprintf("the monitors held an election (epoch %d before, %d after): a monitor stopped, started or lost touch",
			before.ElectionEpoch, after.ElectionEpoch))
	}
	if b, a := before.OSDs, after.OSDs; b.Up != a.Up || b.In != a.In {
		out = append(out, fmt.Sprintf("OSDs up %d, in %d before; up %d, in %d after", b.Up, b.In, a.Up, a.In))
	}
	var raised []string
	for name, msg := range after.Health.Checks {
		if _, had := before.Health.Checks[name]; !had {
			raised = append(raised, name+" ("+msg+")")
		}
	}
	sort.Strings(raised)
	if before.Health.Status != after.Health.Status || len(raised) > 0 {
		h := fmt.Sprintf("health %s before, %s after", before.Health.Status, after.Health.Status)
		if len(raised) > 0 {
			h += ", raised: " + strings.Join(raised, ", ")
		}
		out = append(out, h)
	}
	return out
}
