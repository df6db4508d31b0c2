package sm

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/internal/metrictest"
	"github.com/nuesm/nuesm/topo"
)

// TestReroutePhasesAgree: the "reroute done" log line and
// nuesm_reroute_phase_duration_seconds{phase} name the same phases, on a
// full routing and on a repair (route and verify within repair); every
// phase is exported from the start and documented in the README.
func TestReroutePhasesAgree(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	tp, err := topo.Torus([]int{4, 4}, 1, false)
	writeFabric(t, fab, tp, err)
	var log logBuffer
	m := NewMetrics()
	for _, ph := range reroutePhases {
		if c := metrictest.Value(t, m.Registry, "nuesm_reroute_phase_duration_seconds", "phase", ph); c != 0 {
			t.Fatalf("phase %s counted %v before any reroute", ph, c)
		}
	}
	s := start(t, Config{Fabric: fab, Output: filepath.Join(dir, "out"), Engines: "nue", MaxVLs: 8}, WithLogger(log.logger()), WithMetrics(m))
	waitFor(t, s, "publish", func(st Status) bool { return st.Published != nil && st.Published.Generation == 1 })
	failed, _, err := topo.InjectFailures(tp.Fabric, topo.FailureSpec{Links: 1, Seed: 7, SkipCritical: true})
	if err != nil {
		t.Fatal(err)
	}
	writeFabric(t, fab, &topo.Topology{Fabric: failed}, nil)
	st := waitFor(t, s, "repair", func(st Status) bool { return st.Published != nil && st.Published.Generation == 2 })
	if st.Published.Engine != "nue"+repairSuffix {
		t.Fatalf("engine after a cable failure: %q, expected a repair", st.Published.Engine)
	}

	line := regexp.MustCompile(`msg="reroute done" .*jobs_routed=(\d+) phases="([^"]*)"`)
	// The line follows the status.
	poll(t, "two reroute done lines", func() bool { return strings.Count(log.String(), `msg="reroute done"`) >= 2 })
	done := line.FindAllStringSubmatch(log.String(), -1)
	if len(done) != 2 {
		t.Fatalf("%d reroute done lines, want 2 (with jobs_routed and phases):\n%s", len(done), log.String())
	}
	logged := map[string]bool{}
	for i, d := range done {
		if d[1] != "0" {
			t.Errorf("reroute %d: jobs_routed=%s, routed for none", i+1, d[1])
		}
		var names []string
		for _, p := range strings.Fields(d[2]) {
			name, _, _ := strings.Cut(p, "=")
			names, logged[name] = append(names, name), true
		}
		for _, want := range []string{"parse", "repair", "route", "verify", "measure", "publish"} {
			if !slices.Contains(names, want) {
				t.Errorf("reroute %d: phases %q lack %s", i+1, d[2], want)
			}
		}
	}
	for _, ph := range reroutePhases {
		c := metrictest.Value(t, m.Registry, "nuesm_reroute_phase_duration_seconds", "phase", ph)
		if (c > 0) != logged[ph] {
			t.Errorf("phase %s: metric count %v, in a log line %v", ph, c, logged[ph])
		}
		delete(logged, ph)
	}
	for ph := range logged {
		t.Errorf("log line phase %s is not one of the metric's %v", ph, reroutePhases)
	}

	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, doc, ok := strings.Cut(string(readme), "`nuesm_reroute_phase_duration_seconds{phase}`")
	if doc, _, _ = strings.Cut(doc, "\n\n"); !ok {
		t.Fatal("README does not document nuesm_reroute_phase_duration_seconds{phase}")
	}
	for _, ph := range reroutePhases {
		if !strings.Contains(doc, "`"+ph+"`") {
			t.Errorf("README's paragraph on nuesm_reroute_phase_duration_seconds lacks phase `%s`", ph)
		}
	}
}
