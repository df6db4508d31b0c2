package main

import (
	"strings"
	"testing"
)

func TestNovaCubeReportCLI(t *testing.T) {
	out, _, err := run(t, "study", "novacube-report", "--props", "8x8", "--apl", "6x6", "--audit", "6x6")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"8x8  novacube     64    160", "## VC classes", "6x6   minimal", "6x6 minimal: VC0: first", "PASS"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"8x4", "2x2", "x"} {
		if _, _, err := run(t, "study", "novacube-report", "--props", bad); err == nil {
			t.Errorf("--props %s: no error", bad)
		}
	}
}
