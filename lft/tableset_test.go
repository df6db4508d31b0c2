package lft

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestReadTableSet: a set written as nuesm route writes it reads back
// whole, from its directory or its dump; a dump alone keeps SL 0 and the
// identity SL2VL.
func TestReadTableSet(t *testing.T) {
	g := ringGraph(t, 6, 2, []int{0, 3}, 0)
	r := randomRouting(g, 5, randomOpts{sl2vl: true})
	for s := range r.Switches {
		row := r.Row(int32(s))
		for lid := range row {
			if row[lid] == NoPort {
				row[lid] = 1 // the LFT dump lists routed entries only
			}
		}
	}
	dir := t.TempDir()
	if err := WriteOpenSMLFTsFile(filepath.Join(dir, LFTsFile), g, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteSLFile(filepath.Join(dir, SLFile), g, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteOpenSMSL2VLFile(filepath.Join(dir, SL2VLFile), g, r); err != nil {
		t.Fatal(err)
	}
	want := canonicalSL2VL(g, r.SL2VL)
	for _, p := range []string{dir, filepath.Join(dir, LFTsFile)} {
		got, err := ReadTableSet(p, g, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for s := range r.Switches {
			if a, b := got.Row(int32(s))[1:], r.Row(int32(s))[1:]; !slices.Equal(a, b) {
				t.Fatalf("%s: switch %d: LFT %v, want %v", p, s, a, b)
			}
		}
		if got.NumVLs != r.NumVLs || !got.SL.equal(&r.SL) || !got.SL2VL.equal(&want) {
			t.Fatalf("%s: VLs %d (want %d), or SL / SL2VL differ", p, got.NumVLs, r.NumVLs)
		}
	}
	os.Remove(filepath.Join(dir, SLFile))
	os.Remove(filepath.Join(dir, SL2VLFile))
	got, err := ReadTableSet(dir, g, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for d, sl := range got.SL.ByDest {
		if sl != 0 {
			t.Fatalf("dump alone: SL %d for LID %d, want 0", sl, d)
		}
	}
	if _, err := ReadTableSet(filepath.Join(dir, "none"), g, ReadOptions{}); err == nil {
		t.Fatal("missing set read without error")
	}
}
