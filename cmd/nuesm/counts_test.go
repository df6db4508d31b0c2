package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountsAgree: verify and summary.json count the same pairs; diff's
// entry total and plan's pairs say what they count.
func TestCountsAgree(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if _, _, err := run(t, "route", "--default", "-q", "-o", a); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "route", "--default", "--engine", "dfsssp", "-q", "-o", b); err != nil {
		t.Fatal(err)
	}
	var sum routeSummary
	raw, err := os.ReadFile(filepath.Join(b, "summary.json"))
	if err != nil || json.Unmarshal(raw, &sum) != nil {
		t.Fatal(err)
	}
	if sum.Counts["pairs"] == "" || sum.Counts["lft_entries"] == "" {
		t.Fatalf("summary.json does not say what it counts: %v", sum.Counts)
	}
	out, _, err := run(t, "verify", b)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d delivered of %d connected", sum.Pairs, sum.Pairs)
	if !strings.Contains(out, want) || !strings.Contains(out, "counted:        pairs are ordered") {
		t.Fatalf("verify does not count summary.json's %d pairs:\n%s", sum.Pairs, out)
	}
	out, _, err = run(t, "diff", a, b)
	if err != nil || !strings.Contains(out, "every switch's entries for LIDs 0..max") {
		t.Fatalf("diff: %v\n%s", err, out)
	}
	out, _, _ = run(t, "plan", a, b)
	if !strings.Contains(out, "connected (CA and router sources to every other port's LID)") {
		t.Fatalf("plan:\n%s", out)
	}
}
