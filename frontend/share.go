package frontend

import (
	"fmt"
	"regexp"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/spec"
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
	return share(j, hosts, func(d engine.Description, w *spec.Workload) error {
		if d.Share == nil {
			return nil
		}
		return d.Share(w, host)
	})
}

// InRegion is j as host k of hosts hosts that share each step's target
// runs it: its I/O is in the k-th of hosts regions of the target (as the
// step's engine divides one, engine.Description.ShareRegion; rbd's
// image), and its rate limit is its share. A step whose target hosts
// cannot share is refused. Errors, found without I/O, are
// *engine.UsageError.
func InRegion(j Job, k, hosts int) (Job, error) {
	if k < 0 || k >= hosts {
		return Job{}, engine.Usagef("host %d of %d", k, hosts)
	}
	return share(j, hosts, func(d engine.Description, w *spec.Workload) error {
		if d.ShareRegion == nil {
			return engine.Usagef("%s: hosts cannot share one %s target, each in its own region", w.Target.Short(), w.Target.Scheme)
		}
		return d.ShareRegion(w, k, hosts)
	})
}

// share is j with each step's rate limit divided among hosts and its
// workload given to target, with the engine's description.
func share(j Job, hosts int, target func(engine.Description, *spec.Workload) error) (Job, error) {
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
			if err := target(d, w); err != nil {
				return Job{}, fmt.Errorf("%s: %w", st.Name, err)
			}
		}
		w.ScaleRates(1 / float64(hosts))
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
