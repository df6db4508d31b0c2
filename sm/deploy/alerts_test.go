package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/sm"
)

// TestAlertRules checks contrib/prometheus/nuesm-alerts.yml with
// promtool and that every metric it names is one the daemon and the
// deployer export.
func TestAlertRules(t *testing.T) {
	rules := filepath.Join("..", "..", "contrib", "prometheus", "nuesm-alerts.yml")
	m := sm.NewMetrics()
	dir := t.TempDir()
	if _, err := New(Config{Conf: "x", LogFile: "x"}.Defaults(dir), nil, m.Registry); err != nil {
		t.Fatal(err)
	}
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// Set at the first publication (labels name the engine).
	known := map[string]bool{"nuesm_routing_engine_info": true}
	for _, f := range fams {
		known[f.GetName()] = true
	}
	text, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range regexp.MustCompile(`\bnuesm_[a-z_]+`).FindAllString(string(text), -1) {
		if !known[n] {
			t.Errorf("%s names %s, which nuesm does not export", rules, n)
		}
	}
	ibtest.RequirePrograms(t, "prometheus", "promtool")
	if out, err := exec.Command("promtool", "check", "rules", rules).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}
