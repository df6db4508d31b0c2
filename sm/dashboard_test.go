package sm

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDashboardUsesRealMetrics: every metric the Grafana dashboard queries
// is one the daemon exports (a renamed metric must not leave empty panels).
func TestDashboardUsesRealMetrics(t *testing.T) {
	b, err := os.ReadFile("../contrib/grafana/nuesm-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	m := NewMetrics()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, f := range fams {
		known[f.GetName()] = true
		if f.GetType().String() == "HISTOGRAM" {
			known[f.GetName()+"_bucket"] = true
		}
	}
	re := regexp.MustCompile(`nuesm_[a-z_]+`)
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, name := range re.FindAllString(tg.Expr, -1) {
				if !known[name] && !known[strings.TrimSuffix(name, "_bucket")] {
					t.Errorf("panel %q queries unknown metric %s", p.Title, name)
				}
			}
		}
	}
}
