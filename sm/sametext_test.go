package sm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// The dump is rewritten with the fabric the published tables were
// verified for, in other text. Its node blocks reordered under another
// header: the tables stay published (no new generation) with no routing
// or repair run, one verification. A host renamed: no routing or repair
// run either, but a new generation with the same tables publishes the
// dump and OpenSM's LFT dump that name it.
func TestSameFabricOtherText(t *testing.T) {
	s, tp, fab, out := torusServer(t)
	_, r1 := readGen(t, out, 1)
	text, err := os.ReadFile(fab)
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(strings.TrimSpace(string(text)), "\n\n")
	for i, j := 0, len(blocks)-1; i < j; i, j = i+1, j-1 {
		blocks[i], blocks[j] = blocks[j], blocks[i]
	}
	reordered := "# Topology file: scanned on another day\n\n" + strings.Join(blocks, "\n\n") + "\n"
	renamed := tp.Fabric.Clone()
	for i := range renamed.Nodes {
		if renamed.Nodes[i].Kind == fabric.CA {
			renamed.Nodes[i].Desc += " renamed"
			break
		}
	}
	for _, step := range []struct {
		what  string
		write func()
		gen   int
	}{
		{"node blocks reordered", func() { writeText(t, fab, reordered) }, 1},
		{"a host renamed", func() { writeFabric(t, fab, &topo.Topology{Fabric: renamed}, nil) }, 2},
	} {
		n0, routes, verifies := s.Status().Reroutes, phaseCount(t, s, "route"), phaseCount(t, s, "verify")
		step.write()
		st := waitFor(t, s, step.what, func(st Status) bool { return st.Reroutes > n0 && st.State == "idle" })
		if st.Published == nil || st.Published.Generation != step.gen || st.Published.Engine != "nue" {
			t.Fatalf("%s: %s %q, published %+v; expected generation %d by nue", step.what, st.LastResult, st.LastError, st.Published, step.gen)
		}
		if n := phaseCount(t, s, "route") - routes; n != 0 {
			t.Errorf("%s: %d routing or repair runs; the published tables were verified for this fabric", step.what, n)
		}
		if n := phaseCount(t, s, "verify") - verifies; n != 1 {
			t.Errorf("%s: %d verifications, expected the kept tables' one", step.what, n)
		}
		g, r := readGen(t, out, step.gen)
		if !lft.Equal(r, r1) {
			t.Errorf("%s: generation %d's tables differ from generation 1's in %d destinations", step.what, step.gen, changedDests(g, r1, r))
		}
	}
	dir := (&publisher{dir: out}).genDir(2)
	want, err := os.ReadFile(fab)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, lft.FabricFile)); err != nil || string(got) != string(want) {
		t.Errorf("generation 2 does not publish the dump with the renamed host (%v)", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, lft.LFTsFile)); err != nil || !strings.Contains(string(got), " renamed'") {
		t.Errorf("generation 2's %s does not name the renamed host (%v)", lft.LFTsFile, err)
	}
}

// writeText writes a dump's text atomically.
func writeText(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
