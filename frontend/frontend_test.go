package frontend

import (
	"testing"

	"github.com/cephbench/cephbench/internal/jsontest"
)

// A job is what a plan or a coordinator hands over to be run: every field
// of it, of its steps and of their commands' options comes back from JSON
// as it went in.
func TestJobRoundTripsThroughJSON(t *testing.T) {
	jsontest.RoundTrips[Job](t)
}
