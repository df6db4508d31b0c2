package deploy

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// TestAlertRules checks contrib/prometheus/nuesm-alerts.yml with
// promtool (TestContribQueries checks that its expressions select what
// nuesm exports).
func TestAlertRules(t *testing.T) {
	rules := filepath.Join(contribDir, "prometheus", "nuesm-alerts.yml")
	ibtest.RequirePrograms(t, "prometheus", "promtool")
	if out, err := exec.Command("promtool", "check", "rules", rules).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}
