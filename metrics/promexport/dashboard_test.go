package promexport

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const dashboardFile = "../../deploy/grafana/cephbench.json"

// queries are the PromQL of every panel's targets (key "expr") and of
// every query variable, wherever they are in the dashboard.
func queries(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "expr" || (k == "query" && strings.HasPrefix(s, "label_values("))) {
				out = append(out, s)
			}
			out = append(out, queries(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, queries(x)...)
		}
	}
	return out
}

var (
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	// identifier is a PromQL name: a metric, label, function or keyword.
	identifier = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
)

// metricNames are the cephbench metric names query uses, its strings
// (label values such as "$step") left out.
func metricNames(query string) []string {
	var names []string
	for _, tok := range identifier.FindAllString(quoted.ReplaceAllString(query, `""`), -1) {
		if strings.HasPrefix(tok, "cephbench_") {
			names = append(names, tok)
		}
	}
	return names
}

func TestDashboardQueriesUseExportedMetrics(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	panels, _ := d["panels"].([]any)
	if d["title"] == nil || len(panels) == 0 {
		t.Fatalf("%s: no title or no panels", dashboardFile)
	}
	qs := queries(d)
	if len(qs) < len(panels) {
		t.Fatalf("%d queries for %d panels", len(qs), len(panels))
	}
	used := map[string]bool{}
	for _, q := range qs {
		names := metricNames(q)
		if len(names) == 0 {
			t.Errorf("query %q uses no cephbench metric", q)
		}
		for _, n := range names {
			used[n] = true
			if !slices.Contains(Names(), n) {
				t.Errorf("query %q uses %s, which the exporter does not export", q, n)
			}
		}
	}
	for _, n := range []string{OpsTotal, BytesTotal, ErrorsTotal, OpLatency + "_bucket", OpsInFlight} {
		if !used[n] {
			t.Errorf("no panel shows %s", n)
		}
	}
}

func TestDashboardIsTemplatedByStepTargetAndHost(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []struct{ Name string } `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID      int `json:"id"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("two panels have id %d", p.ID)
		}
		ids[p.ID] = true
		for _, tg := range p.Targets {
			for _, label := range []string{"step", "target", "host"} {
				if !slices.Contains(vars, label) || !strings.Contains(tg.Expr, label+`=~"$`+label+`"`) {
					t.Errorf("panel %d: query %q is not filtered by the variable %s (variables %v)", p.ID, tg.Expr, label, vars)
				}
			}
		}
	}
}

func TestMetricNamesSkipsStrings(t *testing.T) {
	got := metricNames(`sum by (kind) (rate(cephbench_ops_total{step=~"cephbench_x"}[1m])) / cephbench_nope`)
	if !slices.Equal(got, []string{"cephbench_ops_total", "cephbench_nope"}) {
		t.Errorf("names %v", got)
	}
}
