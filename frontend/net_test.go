package frontend

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/netbench"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
	"github.com/cephbench/cephbench/step"
)

// A net client step run in a plan saves its result already placed in the
// plan, so the plan need not rewrite the file.
func TestNetClientSavesItsResultPlacedInThePlan(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- (&netbench.Server{}).Serve(ctx, ln) }()
	defer func() { stop(); <-served }()

	save := filepath.Join(t.TempDir(), "net.json")
	placed := &result.PlanStep{Step: "network", Params: map[string]string{"streams": "2"}, Repeat: 2, Of: 3}
	params := netbench.Params{Mode: netbench.Forward, Streams: 2, Duration: spec.Duration(300 * time.Millisecond)}
	st := step.Step{Name: "net-forward", Save: save, Plan: placed, Front: step.Front{Command: "net client",
		Net: &step.Net{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, Params: params}}}
	var stdout strings.Builder
	if err := Run(context.Background(), Job{Command: "net client", Steps: []step.Step{st}}, IO{Stdout: &stdout}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(save)
	if err != nil {
		t.Fatal(err)
	}
	var saved netbench.Result
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(saved.Plan, placed) || saved.Params.Streams != 2 || saved.Up == nil || saved.Up.Receiver.Bytes == 0 {
		t.Errorf("saved plan %+v, %d streams, up %+v; want plan %+v, 2 streams and bytes moved", saved.Plan, saved.Params.Streams, saved.Up, placed)
	}
	if !strings.Contains(stdout.String(), "receiver") || !strings.HasSuffix(stdout.String(), "result saved to "+save+"\n") {
		t.Errorf("the summary and where the result went are not printed:\n%s", stdout.String())
	}
}

// A plan's time for a net client step is its ping-pong phase and its
// throughput phase.
func TestNetClientTakesItsTwoPhases(t *testing.T) {
	params := netbench.Params{Mode: netbench.Bidir, Streams: 1, Duration: spec.Duration(30 * time.Second), RTT: spec.Duration(2 * time.Second)}
	j := Job{Command: "net client", Steps: []step.Step{{Front: step.Front{Command: "net client", Net: &step.Net{Host: "h", Port: 5201, Params: params}}}}}
	if d, exact := Estimate(j); d != 32*time.Second || !exact {
		t.Errorf("Estimate = %s, exact %v; want 32s exactly", d, exact)
	}
}
