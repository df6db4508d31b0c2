package sm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// has reports whether dir holds the file name.
func has(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// genGraph loads the fabric a generation directory holds.
func genGraph(t *testing.T, dir string) *fabric.Graph {
	t.Helper()
	l, err := ibnetdiscover.LoadFile(filepath.Join(dir, lft.FabricFile))
	if err != nil {
		t.Fatal(err)
	}
	return l.Graph
}

// TestGenerationLayout: generations keep the LFTs as nuesm.lft; OpenSM's
// dump is in the current generation only (opensm_dump "on"), or nowhere
// ("off"); a fabric that did not change is linked, not written again;
// a generation published in another form is published afresh; every
// generation reads back, and the checksums hold.
func TestGenerationLayout(t *testing.T) {
	out := t.TempDir()
	tp, err := topo.Torus([]int{3, 3}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	s1, fab := daemonOn(t, out, tp, Config{OpenSMDump: "off"})
	mustReroute(t, s1)
	g1 := filepath.Join(out, genName(1))
	for name, want := range map[string]bool{lft.CompactLFTsFile: true, lft.SL2VLFile: true, lft.SLFile: true, lft.FabricFile: true,
		lft.LFTsFile: false, lft.OpenSMSL2VLFile: false} {
		if has(g1, name) != want {
			t.Errorf("opensm_dump off: %s present %v, want %v", name, !want, want)
		}
	}

	// The same tables with the dump asked for: a new generation, whose
	// fabric is the first one's file.
	s2, err := New(Config{Fabric: fab, Output: out, Listen: "127.0.0.1:0", OpenSMDump: "on"})
	if err != nil {
		t.Fatal(err)
	}
	if st := mustReroute(t, s2); st.LastResult != resultPublished || st.Published.Generation != 2 {
		t.Fatalf("form changed: %s, generation %d", st.LastResult, st.Published.Generation)
	}
	checkPublished(t, out)
	g2 := filepath.Join(out, genName(2))
	a, errA := os.Stat(filepath.Join(g1, lft.FabricFile))
	b, errB := os.Stat(filepath.Join(g2, lft.FabricFile))
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		t.Errorf("unchanged fabric written again (%v, %v)", errA, errB)
	}
	if err := s2.pub.check(2); err != nil {
		t.Fatal(err)
	}
	if st := mustReroute(t, s2); st.LastResult != resultUnchanged {
		t.Fatalf("same tables, same form: %s", st.LastResult)
	}

	// A changed fabric: generation 3 holds the dump, 2 loses it.
	tp2, err := topo.Torus([]int{3, 4}, 1, false)
	writeFabric(t, fab, tp2, err)
	if st := mustReroute(t, s2); st.Published.Generation != 3 {
		t.Fatalf("changed fabric: generation %d", st.Published.Generation)
	}
	checkPublished(t, out)
	g3 := filepath.Join(out, genName(3))
	if has(g2, lft.LFTsFile) || !has(g3, lft.LFTsFile) {
		t.Errorf("dump in generation 2: %v (want false), in 3: %v (want true)", has(g2, lft.LFTsFile), has(g3, lft.LFTsFile))
	}
	c, err := os.Stat(filepath.Join(g3, lft.FabricFile))
	if err != nil || os.SameFile(b, c) {
		t.Errorf("changed fabric linked to the old one (%v)", err)
	}
	if err := s2.pub.check(3); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{g1, g2, g3} {
		if _, err := lft.ReadTableSet(dir, genGraph(t, dir), lft.ReadOptions{}); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

// TestOlderGenerationUpgraded: a current generation in the older form
// (OpenSM's LFT and SL2VL dumps, no nuesm.lft) is read, republished in
// the compact form although its tables are equal, and keeps its dump
// when it is no longer current: the dump is its only record of the LFTs.
func TestOlderGenerationUpgraded(t *testing.T) {
	out := t.TempDir()
	tp, err := topo.Torus([]int{3, 3}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	s1, fab := daemonOn(t, out, tp, Config{OpenSMDump: "on"})
	mustReroute(t, s1)
	g1 := filepath.Join(out, genName(1))
	g := genGraph(t, g1)
	r, err := lft.ReadTableSet(g1, g, lft.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := lft.WriteOpenSMSL2VLFile(filepath.Join(g1, lft.OpenSMSL2VLFile), g, r); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{lft.CompactLFTsFile, lft.SL2VLFile} {
		if err := os.Remove(filepath.Join(g1, name)); err != nil {
			t.Fatal(err)
		}
	}
	olderStatus(t, g1)

	s2, err := New(Config{Fabric: fab, Output: out, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.pub.check(1); err != nil {
		t.Fatalf("the older generation as set up: %v", err)
	}
	old := s2.readPublished(g)
	if old == nil || !lft.Equal(old, r) {
		t.Fatal("the older generation does not read back as its tables")
	}
	if st := mustReroute(t, s2); st.LastResult != resultPublished || st.Published.Generation != 2 {
		t.Fatalf("older form: %s, generation %d", st.LastResult, st.Published.Generation)
	}
	checkPublished(t, out)
	if !has(g1, lft.LFTsFile) {
		t.Error("the older generation lost its only LFT record")
	}
}

// olderStatus rewrites status.json in dir to list the files dir holds,
// with their checksums, as a publish in the older form recorded them.
func olderStatus(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, statusFile))
	if err != nil {
		t.Fatal(err)
	}
	var st PublishedStatus
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	st.Files, st.SHA256 = map[string]string{}, map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == statusFile {
			continue
		}
		sum, err := fileSHA256(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		st.Files[e.Name()], st.SHA256[e.Name()] = e.Name(), sum
	}
	if b, err = json.MarshalIndent(&st, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, statusFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
