package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunPolicy: --policy and --vc-policy reach the simulator, errors are
// errors, and a sweep over several policies labels its rows ENGINE@POLICY.
func TestRunPolicy(t *testing.T) {
	rsi := []string{"--gen", "rsi", "--gen-param", "layer1=BR", "--gen-param", "supernodes=3", "--engine", "dfsssp",
		"--traffic", "grouphotspot", "--load", "1", "--warmup", "500", "--cycles", "2000", "--drain", "1", "--busiest", "0"}
	out, _, err := run(t, append([]string{"run", "--policy", "lar", "--vc-policy", "hops:7", "--lar-threshold", "0.5"}, rsi...)...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "policy           lar(lar-own,th=0.5)+hops:7: ") || strings.Contains(out, "bound ") {
		t.Errorf("output:\n%s", out)
	}
	for _, bad := range [][]string{
		{"--policy", "nope"}, {"--policy", "lar,min"}, {"--policy", "lar", "--vc-policy", "nope"},
		{"--policy", "pora-literal"}, {"--policy", "lar", "--minimal", "nope"},
	} {
		if _, _, err := run(t, append(append([]string{"run"}, bad...), rsi...)...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	dir := t.TempDir()
	args := append([]string{"sweep", "--policy", "lft,min+hops:3,lar-toward+hops:7", "--loads", "0.5", "-o", dir, "--plots", "none"}, rsi...)
	if _, _, err := run(t, args...); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dfsssp@lft,", "dfsssp@min+hops:3,", "dfsssp@lar-toward+hops:7,"} {
		if !strings.Contains(string(csv), want) {
			t.Errorf("sweep.csv lacks %q:\n%s", want, csv)
		}
	}
}
