package frontend

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cephbench/cephbench/engine"
	cbs3 "github.com/cephbench/cephbench/engine/s3"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// S3BenchRequest is what an s3 bench command line asks for.
type S3BenchRequest struct {
	// Put, Get, List and Delete ask for a phase of each, in that order;
	// Mixed for one phase of ops at its percentages instead.
	Put, Get, List, Delete bool
	Mixed                  string
	ObjectSize             spec.Size
	// Objects are the objects put first, unmeasured, for the phases that
	// read or delete without a put phase; 0 reads what a kept put left.
	// With ObjectsGiven, a put phase puts at most Objects.
	Objects      int64
	ObjectsGiven bool
	// SizeGiven refuses kept objects of another size than ObjectSize.
	SizeGiven  bool
	Concurrent int
	Duration   spec.Duration
	// OpTimeout fails (and counts) a request that takes longer; zero is
	// the engine's default, 60 s.
	OpTimeout   spec.Duration
	Keep, Quiet bool
	Target      spec.Target
	// Credentials are the keys of the command line, if any.
	Credentials cbs3.Credentials
	// RunDir is the folder of the run's results.
	RunDir string
}

// Check reports what is wrong with r's phases and bounds, without I/O.
func (r S3BenchRequest) Check() error {
	_, err := r.phases()
	return err
}

// s3MixKinds are the kinds --mixed takes, in the order its phase lists
// them.
var s3MixKinds = []string{"put", "get", "delete", "list", "stat"}

// parseS3Mix parses --mixed: "get=45,put=15,delete=10,list=5,stat=25",
// percentages of put, get, delete, list and stat that sum to 100. The
// shares come back by kind, put always among them: a mixed phase puts
// when there is nothing to get, stat or delete.
func parseS3Mix(s string) (map[string]int, error) {
	for part := range strings.SplitSeq(s, ",") {
		name, _, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || !slices.Contains(s3MixKinds, name) {
			return nil, engine.Usagef("invalid --mixed %q: want KIND=PERCENT,... with kinds get, put, delete, list, stat", s)
		}
	}
	shares, err := spec.OpMix(s).Shares()
	if err != nil {
		return nil, engine.Usagef("invalid --mixed %q: %v", s, err)
	}
	m := map[string]int{"put": 0}
	for _, sh := range shares {
		m[sh.Kind] = sh.Percent
	}
	return m, nil
}

// s3Phase is one measured step of s3 bench.
type s3Phase struct {
	name string // put, get, list, delete or mixed
	// share is the percentage of the ops of each kind the phase does; a
	// single-kind phase stops when it runs out of objects.
	share map[string]int
}

// mix is the phase's op mix, in the order of s3MixKinds.
func (p s3Phase) mix() spec.OpMix {
	var parts []string
	for _, k := range s3MixKinds {
		if n, ok := p.share[k]; ok {
			parts = append(parts, k+"="+strconv.Itoa(n))
		}
	}
	return spec.OpMix(strings.Join(parts, ","))
}

// phases returns the phases r asks for, in order, checked.
func (f *S3BenchRequest) phases() ([]s3Phase, error) {
	var phases []s3Phase
	single := func(on bool, name string) {
		if on {
			phases = append(phases, s3Phase{name: name, share: map[string]int{name: 100}})
		}
	}
	single(f.Put, "put")
	single(f.Get, "get")
	single(f.List, "list")
	single(f.Delete, "delete")
	if f.Mixed != "" {
		if len(phases) > 0 {
			return nil, engine.Usagef("--mixed is a phase of its own: give it without --put, --get, --list or --delete")
		}
		mix, err := parseS3Mix(f.Mixed)
		if err != nil {
			return nil, err
		}
		phases = append(phases, s3Phase{name: "mixed", share: mix})
	}
	switch {
	case len(phases) == 0:
		return nil, engine.Usagef("nothing to do: give --put, --get, --list, --delete or --mixed")
	case f.Concurrent < 1 || f.Concurrent > 4096:
		return nil, engine.Usagef("invalid --concurrent %d (want 1 to 4096)", f.Concurrent)
	case f.Duration <= 0:
		return nil, engine.Usagef("--duration must be positive")
	case f.ObjectSize <= 0 || f.ObjectSize > 1<<30:
		return nil, engine.Usagef("invalid --obj-size %s (want more than 0, at most 1G)", f.ObjectSize)
	case f.Objects < 0:
		return nil, engine.Usagef("invalid --objects %d", f.Objects)
	case f.Objects == 0 && (f.Put || f.Delete || f.Mixed != ""):
		return nil, engine.Usagef("--objects 0 reads the objects of an earlier --put --keep: only with --get and --list")
	case f.Keep && (f.Delete || f.Mixed != ""):
		return nil, engine.Usagef("--keep keeps what a run put: not with --delete or --mixed, which remove objects")
	case f.Objects == 0 && f.Keep:
		return nil, engine.Usagef("--objects 0 writes nothing to keep")
	}
	return phases, nil
}

// S3BenchJob is the s3 bench job r asks for: a step per phase, saving in
// r.RunDir. Its errors, found without I/O, are *engine.UsageError.
func S3BenchJob(r S3BenchRequest) (Job, error) {
	phases, err := r.phases()
	if err != nil {
		return Job{}, err
	}
	limit := int64(0)
	if r.ObjectsGiven {
		limit = r.Objects // the most a put phase puts
	}
	opts := &S3Bench{Kept: r.Objects == 0, Results: r.RunDir}
	opts.SizeGiven = opts.Kept && r.SizeGiven
	if r.Credentials != (cbs3.Credentials{}) {
		creds := r.Credentials
		opts.Credentials = &creds
	}
	// --objects 0 reads kept objects; a put phase first makes its own.
	if phases[0].name != "put" {
		opts.Prepare = r.Objects
	}
	j := Job{Command: "s3 bench", Quiet: r.Quiet, S3: opts}
	for i, p := range phases {
		w := spec.Workload{
			Name: "s3-" + p.name, Target: r.Target, Pattern: spec.Random, Mix: p.mix(),
			ReadPercent: p.share["get"] + p.share["list"] + p.share["stat"],
			BlockSize:   r.ObjectSize, Workers: r.Concurrent, QueueDepth: 1,
			Duration: r.Duration, Verify: p.share["get"] > 0, Keep: r.Keep, OpTimeout: r.OpTimeout,
		}
		if p.name == "put" {
			w.Pattern, w.Objects = spec.Sequential, limit
		}
		j.Steps = append(j.Steps, step.Step{
			Name: w.Name, Workload: w, Save: filepath.Join(opts.Results, fmt.Sprintf("%02d-s3-%s.json", i+1, p.name)),
			Front: step.Front{Command: j.Command, S3: &step.S3{Phase: p.name}},
		})
	}
	return j, nil
}
