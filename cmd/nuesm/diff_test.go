package main

import (
	"encoding/json"
	"path/filepath"
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

// TestDiffOtherGeneratedFabric: sets of a generated fabric diffed against
// the default fabric (--default) read as the default's tables with
// conflicting LIDs, since generated fabrics share GUID ranges; the error
// says the set does not fit that fabric and names the options that give
// the right one. With the sets' own fabric the diff works.
func TestDiffOtherGeneratedFabric(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "clos.topo")
	if _, _, err := run(t, "gen", "clos3", "--radix", "8", "-o", fab); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, c := range [][]string{{"--engine", "updn", "-o", a}, {"--engine", "nue", "-o", b}} {
		if _, _, err := run(t, append([]string{"route", fab, "-q"}, c...)...); err != nil {
			t.Fatal(err)
		}
	}
	checkAdminCases(t, []adminCase{
		{[]string{"diff", "--default", a, b}, exitInput, []string{"OLD: " + a + " does not fit the embedded default fabric (--default)",
			"routed twice", "a set of another fabric? give --fabric " + filepath.Join(a, "fabric.topo") + ", or leave out --default"}},
		{[]string{"diff", "--default", b, b}, exitInput, []string{"OLD: " + b + " does not fit", "--fabric " + filepath.Join(b, "fabric.topo")}},
	})
	if _, _, err := run(t, "diff", a, b); err != nil {
		t.Errorf("diff with the sets' fabric.topo: %v", err)
	}
}
