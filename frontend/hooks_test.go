package frontend

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/step"
)

// follower records what IO.Hooks sees of a job.
type follower struct {
	mu      sync.Mutex
	gates   []int
	results map[int]string // each step's result's name
	gate    func(ctx context.Context, i int) error
}

func (f *follower) hooks(i int) step.Hooks {
	return step.Hooks{
		Gate: func(ctx context.Context) error {
			f.mu.Lock()
			f.gates = append(f.gates, i)
			f.mu.Unlock()
			if f.gate != nil {
				return f.gate(ctx, i)
			}
			return nil
		},
		Result: func(r *result.Result) {
			f.mu.Lock()
			f.results[i] = r.Name
			f.mu.Unlock()
		},
	}
}

// fio's jobs between stonewalls take their gates at once, each its own;
// each step's result reaches the hook of its index.
func TestFioJobsRunningTogetherEachTakeTheGate(t *testing.T) {
	dir := t.TempDir()
	j := Job{Command: "fio", Fio: &FioOptions{OutputFormats: []string{"json"}, Results: dir}, Steps: []step.Step{
		fioStep(dir, "first", 1000, step.Fio{}),
		fioStep(dir, "second", 1000, step.Fio{}),
		fioStep(dir, "after", 1000, step.Fio{Stonewall: true}),
	}}
	var both sync.WaitGroup
	both.Add(2)
	allIn := make(chan struct{})
	go func() { both.Wait(); close(allIn) }()
	f := &follower{results: map[int]string{}, gate: func(ctx context.Context, i int) error {
		if i == 2 {
			return nil
		}
		both.Done()
		select { // both jobs are held at their gates at once
		case <-allIn:
			return nil
		case <-time.After(5 * time.Second):
			return errors.New("the other job never reached its gate")
		}
	}}
	if err := Run(context.Background(), j, IO{Hooks: f.hooks}); err != nil {
		t.Fatal(err)
	}
	if len(f.gates) == 3 {
		slices.Sort(f.gates[:2]) // in either order
	}
	if !slices.Equal(f.gates, []int{0, 1, 2}) {
		t.Errorf("gates taken by steps %v, want 0 and 1 together, then 2", f.gates)
	}
	want := map[int]string{0: "first", 1: "second", 2: "after"}
	for i, name := range want {
		if f.results[i] != name {
			t.Errorf("step %d's result hook got %q, want %q", i, f.results[i], name)
		}
	}
}

// A gate that refuses ends the step before its run, and the job with it;
// a gate still waiting when the job is stopped makes it interrupted.
func TestAGateHoldsTheRun(t *testing.T) {
	dir := t.TempDir()
	j := Job{Command: "bench", Steps: []step.Step{fioStep(dir, "a", 1000, step.Fio{}), fioStep(dir, "b", 1000, step.Fio{})}}
	for i := range j.Steps {
		j.Steps[i].Front = step.Front{Command: "bench"}
	}
	refused := errors.New("refused")
	f := &follower{results: map[int]string{}, gate: func(_ context.Context, i int) error {
		if i == 1 {
			return refused
		}
		return nil
	}}
	if err := Run(context.Background(), j, IO{Hooks: f.hooks}); !errors.Is(err, refused) {
		t.Errorf("Run: %v, want the gate's error", err)
	}
	if !slices.Equal(f.gates, []int{0, 1}) || len(f.results) != 1 || f.results[0] != "a" {
		t.Errorf("gates %v, results %v; want both gates and a's result alone", f.gates, f.results)
	}

	ctx, cancel := context.WithCancel(context.Background())
	f = &follower{results: map[int]string{}, gate: func(ctx context.Context, _ int) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}}
	if err := Run(ctx, j, IO{Hooks: f.hooks}); !errors.Is(err, step.ErrInterrupted) {
		t.Errorf("Run stopped at the gate: %v, want interrupted", err)
	}
	if len(f.results) != 0 {
		t.Errorf("a step stopped at its gate gave results %v", f.results)
	}
}
