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
// dump and OpenSM's LFT dump that name it; a reroute asked again for
// that text routes in full (an operator's POST /reroute). Repaired
// tables (after a cable failure) stay too when their dump is reordered.
func TestSameFabricOtherText(t *testing.T) {
	s, tp, fab, out := torusServer(t)
	_, r1 := readGen(t, out, 1)
	var st Status
	renamed := tp.Fabric.Clone()
	for i := range renamed.Nodes {
		if renamed.Nodes[i].Kind == fabric.CA {
			renamed.Nodes[i].Desc += " renamed"
			break
		}
	}
	// keep rewrites the dump and checks that generation gen by engine is
	// published after it, with r1's tables, routed and repaired by no
	// run, verified once.
	keep := func(what string, write func(), gen int, engine string) {
		t.Helper()
		n0, routes, verifies := s.Status().Reroutes, phaseCount(t, s, "route"), phaseCount(t, s, "verify")
		write()
		st := waitFor(t, s, what, func(st Status) bool { return st.Reroutes > n0 && st.State == "idle" })
		if st.Published == nil || st.Published.Generation != gen || st.Published.Engine != engine {
			t.Fatalf("%s: %s %q, published %+v; expected generation %d by %s", what, st.LastResult, st.LastError, st.Published, gen, engine)
		}
		if n := phaseCount(t, s, "route") - routes; n != 0 {
			t.Errorf("%s: %d routing or repair runs; the published tables were verified for this fabric", what, n)
		}
		if n := phaseCount(t, s, "verify") - verifies; n != 1 {
			t.Errorf("%s: %d verifications, expected the kept tables' one", what, n)
		}
		g, r := readGen(t, out, gen)
		if !lft.Equal(r, r1) {
			t.Errorf("%s: generation %d's tables differ from the kept ones in %d destinations", what, gen, changedDests(g, r1, r))
		}
	}
	keep("node blocks reordered", func() { writeText(t, fab, reorderedDump(t, fab)) }, 1, "nue")
	keep("a host renamed", func() { writeFabric(t, fab, &topo.Topology{Fabric: renamed}, nil) }, 2, "nue")
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

	// Asked again for the text last routed, a full routing routes in
	// full: that is how an operator asks for one.
	n0, routes := s.Status().Reroutes, phaseCount(t, s, "route")
	s.Trigger("test")
	st = waitFor(t, s, "reroute of the renamed dump", func(st Status) bool { return st.Reroutes > n0 && st.State == "idle" })
	if n := phaseCount(t, s, "route") - routes; n != 1 {
		t.Errorf("a reroute asked for the text last routed: %d routing runs, expected one full routing", n)
	}

	// Repaired tables stay as well.
	failed, _, err := topo.InjectFailures(tp.Fabric, topo.FailureSpec{LinkFraction: 0.01, Seed: 7, SkipCritical: true})
	if err != nil {
		t.Fatal(err)
	}
	writeFabric(t, fab, &topo.Topology{Fabric: failed}, nil)
	gen := st.Published.Generation + 1
	st = waitFor(t, s, "repair", func(st Status) bool { return st.Published != nil && st.Published.Generation == gen })
	if st.Published.Engine != "nue"+repairSuffix {
		t.Fatalf("engine after a cable failure: %q, expected nue+repair", st.Published.Engine)
	}
	_, r1 = readGen(t, out, gen)
	keep("repaired tables' dump reordered", func() { writeText(t, fab, reorderedDump(t, fab)) }, gen, "nue"+repairSuffix)
}

// reorderedDump is the dump at path with its node blocks in reverse
// order under another header.
func reorderedDump(t *testing.T, path string) string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(strings.TrimSpace(string(text)), "\n\n")
	for i, j := 0, len(blocks)-1; i < j; i, j = i+1, j-1 {
		blocks[i], blocks[j] = blocks[j], blocks[i]
	}
	return "# Topology file: scanned on another day\n\n" + strings.Join(blocks, "\n\n") + "\n"
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
