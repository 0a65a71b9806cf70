package planrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/plan"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// FromFile prepares a run of a plan file, or of a built-in plan by name,
// with vars set. Its errors are *engine.UsageError.
func FromFile(arg string, vars map[string]string) (*Run, error) {
	p, src, err := loadPlan(arg)
	if err != nil {
		return nil, &engine.UsageError{Err: err}
	}
	if _, ok := vars[plan.PlanDir]; !ok {
		// A resumed run keeps the first run's: its copy of the plan is
		// elsewhere, the files beside the plan are not.
		dir, err := filepath.Abs(filepath.Dir(arg))
		if err != nil {
			return nil, err
		}
		vars[plan.PlanDir] = dir
	}
	expanded, err := p.Expand(vars)
	if err != nil {
		return nil, &engine.UsageError{Err: err}
	}
	return &Run{Name: p.Name, source: src, vars: vars, items: expanded.Items, cleanup: expanded.Cleanup}, nil
}

// Resume prepares the run that finishes the plan of the results folder
// dir; quiet as for Quick.
func Resume(dir string, quiet bool) (*Run, error) {
	m, err := result.LoadManifest(dir)
	if err != nil {
		return nil, engine.Usagef("--resume %s: %v", dir, err)
	}
	var r *Run
	if m.Plan == "quick" {
		d, derr := spec.ParseDuration(m.Vars["duration"])
		if derr != nil {
			return nil, engine.Usagef("--resume %s: the manifest's duration: %v", dir, derr)
		}
		r, err = Quick(m.Vars["target"], d, quiet)
	} else {
		r, err = FromFile(filepath.Join(dir, planFile), m.Vars)
	}
	if err != nil {
		return nil, err
	}
	r.Dir, r.resume = dir, true
	return r, nil
}

// loadPlan reads a plan: a built-in one by name, or a YAML file.
func loadPlan(arg string) (*plan.Plan, []byte, error) {
	if b, ok := plan.Builtin(arg); ok {
		p, err := plan.Parse(arg, b)
		return p, b, err
	}
	b, err := os.ReadFile(arg)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(arg, "/.") {
			return nil, nil, fmt.Errorf("no plan file or built-in plan %q (built-in: %s)", arg, strings.Join(plan.BuiltinNames(), ", "))
		}
		return nil, nil, err
	}
	p, err := plan.Parse(arg, b)
	return p, b, err
}
