package spec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestOpMixShares(t *testing.T) {
	shares, err := OpMix("get=45,put=15,delete=10,list=5,stat=25").Shares()
	if err != nil {
		t.Fatal(err)
	}
	want := []OpShare{{"get", 45}, {"put", 15}, {"delete", 10}, {"list", 5}, {"stat", 25}}
	if !reflect.DeepEqual(shares, want) {
		t.Errorf("parsed %v; want %v", shares, want)
	}
	if s := OpMix("put=0,get=100").Drawn(); s != "get=100" {
		t.Errorf("Drawn() = %q; want the drawn kinds only, get=100", s)
	}
	for in, want := range map[string]string{
		"get=50,get=50":     "get given twice",
		"get=fifty,put=50":  "get=fifty is not a percentage",
		"get=150":           "get=150 is not a percentage",
		"get=-1,put=101":    "get=-1 is not a percentage",
		"get=45,put=45":     "the percentages sum to 90, not 100",
		"get":               `"get" is not KIND=PERCENT`,
		"=100":              `"=100" is not KIND=PERCENT`,
		"get=100,":          `"" is not KIND=PERCENT`,
		"put=0,get=50,x=49": "the percentages sum to 99, not 100",
	} {
		_, err := OpMix(in).Shares()
		if err == nil || err.Error() != want || strings.Contains(err.Error(), "\n") {
			t.Errorf("Shares of %q: %v; want the one-line error %q", in, err, want)
		}
	}
}

// A workload with a mix survives JSON unchanged, and Validate checks its
// mix.
func TestWorkloadMixRoundTripsAndValidates(t *testing.T) {
	w := valid()
	w.Mix = "put=0,get=60,stat=40"
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var back Workload
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != w || !strings.Contains(string(b), `"op_mix":"put=0,get=60,stat=40"`) {
		t.Errorf("round trip: %+v from %s; want %+v", back, b, w)
	}
	if err := w.Validate(); err != nil {
		t.Errorf("valid mix rejected: %v", err)
	}
	w.Mix = "get=50,stat=40"
	if err := w.Validate(); err == nil || err.Error() != `invalid op mix "get=50,stat=40": the percentages sum to 90, not 100` {
		t.Errorf("Validate of a mix summing to 90: %v", err)
	}
}
