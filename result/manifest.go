package result

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cephbench/cephbench/internal/io/atomicfile"
)

// ManifestSchema identifies the format of a Manifest.
const ManifestSchema = "cephbench.manifest/v1"

// ManifestFile is the manifest's name in a results folder.
const ManifestFile = "manifest.json"

// Step states in a manifest.
const (
	StepPending     = "pending"
	StepDone        = "done"
	StepFailed      = "failed"
	StepInterrupted = "interrupted"
)

// Manifest describes a results folder: the plan that filled it, every step
// the plan has (finished or not) and the results each produced. It is
// rewritten after every step, so a run killed at any point leaves one that
// says what finished.
type Manifest struct {
	Schema  string    `json:"schema"`
	Version string    `json:"cephbench_version"`
	Plan    string    `json:"plan"`
	Started time.Time `json:"started"`
	// Finished is zero while the plan runs, and after a run that was killed.
	Finished time.Time `json:"finished,omitzero"`
	// Status is running, done, failed or interrupted.
	Status string `json:"status"`
	// Vars are the plan's variables as the run set them (--set), so a
	// resumed run expands the same steps.
	Vars  map[string]string `json:"vars,omitempty"`
	Host  Host              `json:"host"`
	Steps []ManifestStep    `json:"steps"`
}

// ManifestStep is one step of the plan: one workload, on one target, with
// one set of sweep values, one repeat.
type ManifestStep struct {
	// ID is unique in the plan and stable across runs of the same plan:
	// resume matches steps by it.
	ID string `json:"id"`
	PlanStep
	Command string   `json:"command,omitempty"`
	Status  string   `json:"status"`
	Error   string   `json:"error,omitempty"`
	Results []string `json:"results,omitempty"` // file names in the folder
	Log     string   `json:"log,omitempty"`     // the step's text output, a file name in the folder
}

// PlanStep places a result in a plan: which step, on which target, with
// which sweep values, which repeat.
type PlanStep struct {
	// Step is the step's name followed by its sweep values ("randread
	// bs=4k iodepth=32"); results of one Step and Target are repeats of
	// one measurement.
	Step   string            `json:"step"`
	Target string            `json:"target,omitempty"`
	Params map[string]string `json:"params,omitempty"`
	Repeat int               `json:"repeat"` // 1-based
	Of     int               `json:"repeats"`
}

// Save writes m into dir atomically.
func (m *Manifest) Save(dir string) error {
	return atomicfile.WriteJSON(filepath.Join(dir, ManifestFile), m)
}

// LoadManifest reads dir's manifest; os.ErrNotExist when it has none.
func LoadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: not a cephbench manifest: %w", dir, err)
	}
	if m.Schema != ManifestSchema {
		return nil, fmt.Errorf("%s: manifest schema %q, want %q", dir, m.Schema, ManifestSchema)
	}
	return &m, nil
}
