package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRouteBestVariants: nuesm route with best comparing two parameter
// sets of nue names the winner by its spec, in the summary line and in
// summary.json, whatever the order of "of"; a malformed member is a usage
// error that says what was expected.
func TestRouteBestVariants(t *testing.T) {
	dir := t.TempDir()
	topo := filepath.Join(dir, "t.topo")
	if _, _, err := run(t, "gen", "torus", "--dims", "3x3x3", "--hosts", "4", "-o", topo); err != nil {
		t.Fatal(err)
	}
	// At 1 VL share=switch balances this torus better (routing package's
	// TestBestComparesParameterSets checks the loads).
	for _, of := range []string{"(nue:share=switch)+(nue:share=switchlid)", "(nue:share=switchlid)+(nue:share=switch)"} {
		out := filepath.Join(dir, "out")
		stdout, _, err := run(t, "route", topo, "--vls", "1", "--engine", "best:of="+of, "-o", out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout, "nue:share=switch ") {
			t.Errorf("of=%s: summary does not name nue:share=switch:\n%s", of, stdout)
		}
		var sum routeSummary
		if b, err := os.ReadFile(filepath.Join(out, "summary.json")); err != nil || json.Unmarshal(b, &sum) != nil {
			t.Fatalf("summary.json: %v", err)
		}
		if sum.Engine != "nue:share=switch" {
			t.Errorf("of=%s: summary.json engine %q, want nue:share=switch", of, sum.Engine)
		}
	}
	_, _, err := run(t, "route", topo, "--engine", "best:of=nue+nue(share=switchlid)", "-o", filepath.Join(dir, "bad"))
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "in parentheses, e.g. (nue:share=switchlid)") {
		t.Errorf("malformed member: exit %d, %v", exitCode(err), err)
	}
}
