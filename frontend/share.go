package frontend

import (
	"fmt"
	"regexp"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/step"
)

// hostLabel is what a host label may be: it names the host's directory,
// files, objects or image.
var hostLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ForHost is j as one of hosts hosts runs it while the others run it too:
// each step's target is the host's own part (its directory, object names
// or image, as the step's engine shares it) and its rate limit the host's
// share. host labels the host, unique among them. Errors, found without
// I/O, are *engine.UsageError.
func ForHost(j Job, host string, hosts int) (Job, error) {
	if !hostLabel.MatchString(host) {
		return Job{}, engine.Usagef("host label %q: want letters, digits, '.', '_' or '-'", host)
	}
	if hosts < 1 {
		return Job{}, engine.Usagef("%d hosts: want at least one", hosts)
	}
	steps := make([]step.Step, len(j.Steps))
	for i, st := range j.Steps {
		w := &st.Workload
		if w.Target.Scheme != "" {
			d, err := engine.Describe(w.Target.Scheme)
			if err != nil {
				return Job{}, &engine.UsageError{Err: err}
			}
			if d.Share != nil {
				if err := d.Share(w, host); err != nil {
					return Job{}, fmt.Errorf("%s: %w", st.Name, err)
				}
			}
		}
		w.RateIOPS /= float64(hosts)
		w.RateBytes /= float64(hosts)
		if lg := st.Front.LoadGen; lg != nil {
			own := *lg
			own.Throughput /= int64(hosts)
			st.Front.LoadGen = &own
		}
		steps[i] = st
	}
	j.Steps = steps
	return j, nil
}
