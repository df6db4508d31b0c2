package sm

import (
	"testing"

	"github.com/nuesm/nuesm/lft"
)

// A full reroute of the published fabric dumped with its node blocks in
// another order (as a rescan from another host lists them) routes to the
// published tables: no LFT entry, SL or SL2VL changes, so no switch is
// touched.
func TestReorderedDumpFullReroute(t *testing.T) {
	s, _, fab, out := torusServer(t)
	n0 := s.Status().Reroutes
	writeText(t, fab, reorderedDump(t, fab))
	waitFor(t, s, "reordered dump", func(st Status) bool { return st.Reroutes > n0 && st.State == "idle" })
	n0, routes := s.Status().Reroutes, phaseCount(t, s, "route")
	s.Trigger("test")
	st := waitFor(t, s, "full reroute of the reordered dump", func(st Status) bool { return st.Reroutes > n0 && st.State == "idle" })
	if n := phaseCount(t, s, "route") - routes; n != 1 {
		t.Fatalf("%d routing runs, expected one full routing of the reordered dump", n)
	}
	if st.Published == nil {
		t.Fatalf("nothing published: %s %q", st.LastResult, st.LastError)
	}
	g, r := readGen(t, out, st.Published.Generation)
	old, err := lft.ReadTableSet((&publisher{dir: out}).genDir(1), g, lft.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := lft.Diff(g, old, r)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Empty() {
		t.Errorf("the full routing of the reordered dump (generation %d) differs from generation 1: %+v", st.Published.Generation, d.Summary())
	}
}
