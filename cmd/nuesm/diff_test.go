package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDiffCLI(t *testing.T) {
	fab, a, b := ringTables(t)
	out, _, err := run(t, "diff", "--fabric", fab, a, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LFT entries", "LFT blocks", "ring r", "LID "} {
		if !strings.Contains(out, want) {
			t.Fatalf("diff lacks %q:\n%s", want, out)
		}
	}
	out, _, err = run(t, "diff", "--fabric", fab, a, b, "--json", "--entries", "-1")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Summary struct {
			Entries  int `json:"lft_entries_changed"`
			Blocks   int `json:"lft_blocks_changed"`
			Switches int `json:"switches_changed"`
		}
		Switches []struct {
			Entries [][3]int
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	listed := 0
	for _, s := range rep.Switches {
		listed += len(s.Entries)
	}
	if rep.Summary.Entries == 0 || listed != rep.Summary.Entries || rep.Summary.Blocks != rep.Summary.Switches {
		t.Fatalf("diff JSON: %+v, %d entries listed", rep.Summary, listed)
	}
	out, _, err = run(t, "diff", "--fabric", fab, a, a)
	if err != nil || !strings.Contains(out, "no changes") {
		t.Fatalf("diff of equal tables: %v\n%s", err, out)
	}
	if _, _, err := run(t, "diff", "--fabric", fab, a); err == nil {
		t.Fatal("one argument accepted")
	}
}
