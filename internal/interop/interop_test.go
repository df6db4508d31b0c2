package interop

// The tests skip loudly when ibsim, OpenSM or the diags are missing, and
// fail instead when NUESM_REQUIRE_TOOLS is set (see internal/ibtest).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	_ "github.com/nuesm/nuesm/dfsssp" // registers "dfsssp" and "sssp"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// fatTree is the 3-level fat tree the tests route: k=4, 48 switches of 8
// ports, 64 CAs, 112 LIDs (within ibsim's default limits).
func fatTree(t *testing.T) *fabric.Graph {
	t.Helper()
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// startSim writes g's fabric as an ibsim net file and simulates it.
func startSim(t *testing.T, g *fabric.Graph) *ibtest.Sim {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fabric.net")
	if err := ibnetdiscover.WriteIBSimFile(path, g.F); err != nil {
		t.Fatal(err)
	}
	return ibtest.StartSim(t, path, ibtest.SimConfig{})
}

// lidOf returns the LIDs OpenSM is told to use (its guid2lid cache):
// g's own LIDs, passed through relabel.
func lidOf(g *fabric.Graph, relabel func(uint16) uint16) []ibtest.LIDAssignment {
	var a []ibtest.LIDAssignment
	for _, id := range g.Switches {
		p := &g.F.Nodes[id].Ports[0]
		a = append(a, ibtest.LIDAssignment{GUID: g.F.Nodes[id].GUID, LID: relabel(p.LID), LMC: p.LMC})
	}
	for _, tm := range g.Terms {
		n := &g.F.Nodes[tm.Node]
		a = append(a, ibtest.LIDAssignment{GUID: n.Ports[tm.Port].GUID, LID: relabel(tm.LID), LMC: tm.LMC})
	}
	return a
}

func same(lid uint16) uint16 { return lid }

// route runs one of our engines on g and checks that its tables are safe.
func route(t *testing.T, g *fabric.Graph, name string) *lft.Routing {
	t.Helper()
	e, err := routing.Lookup(name)
	if err != nil {
		t.Fatalf("engine %q is not registered although its package is linked in: %v", name, err)
	}
	opt := routing.Options{MaxVLs: 8}
	r, err := e.Route(context.Background(), g, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: 8}); err != nil {
		t.Fatalf("%s: our own tables fail verification: %v\n%s", name, err, rep)
	}
	return r
}

// lftOnly copies r's forwarding tables into a routing with default SLs and
// SL2VL, the part OpenSM's file engine loads and ibroute reads back.
func lftOnly(g *fabric.Graph, r *lft.Routing) *lft.Routing {
	c := lft.New(g, "file")
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		copy(c.Row(s), r.Row(s))
	}
	return c
}

// diff lists up to limit differing LFT entries.
func diff(g *fabric.Graph, got, want *lft.Routing, limit int) string {
	var b strings.Builder
	n := 0
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		for lid := 0; lid <= g.MaxLID(); lid++ {
			if a, w := got.Port(s, lid), want.Port(s, lid); a != w {
				if n++; n <= limit {
					fmt.Fprintf(&b, "  %s, LID %d: switch holds port %d, we wrote %d\n", g.SwitchName(s), lid, a, w)
				}
			}
		}
	}
	fmt.Fprintf(&b, "  %d entries differ", n)
	return b.String()
}

// readBack reads every switch's LFT with ibroute (one call per switch, by
// its LID, over LID-routed SMPs) and parses the concatenated output.
func readBack(t *testing.T, sim *ibtest.Sim, g *fabric.Graph) *lft.Routing {
	t.Helper()
	var all bytes.Buffer
	for _, id := range g.Switches {
		lid := g.F.Nodes[id].Ports[0].LID
		out, err := sim.Run(ibtest.Budget(t), "ibroute", strconv.Itoa(int(lid)))
		if err != nil {
			t.Fatal(err)
		}
		all.Write(out)
	}
	got, err := lft.ReadIBRoute(&all, "ibroute", g)
	if err != nil {
		t.Fatalf("reading ibroute's output: %v", err)
	}
	return got
}

// TestOpenSMLoadsOurTables routes a 3-level fat tree with our MinHop and
// DFSSSP, has OpenSM's file engine (-R file -U) load each dump into the
// simulated switches, reads every switch's table back with ibroute, and
// compares them with what we wrote, entry by entry. OpenSM is given our
// LIDs (its guid2lid cache), so the tables it programs and the ones we
// wrote are in one LID space; the ibroute output also names each
// destination's port GUID, which our reader checks against the fabric.
func TestOpenSMLoadsOurTables(t *testing.T) {
	ibtest.Require(t, "ibsim", "opensm", "ibroute")
	g := fatTree(t)
	sim := startSim(t, g)
	// held is what the switches hold before each load (nil: ibsim's
	// empty tables). Each load must change it, or a read-back equal to
	// our tables could be the previous run's leftovers.
	var held *lft.Routing
	for _, name := range []string{"minhop", "dfsssp"} {
		t.Run(name, func(t *testing.T) {
			r := route(t, g, name)
			want := lftOnly(g, r)
			if held != nil && lft.Equal(held, want) {
				t.Fatalf("our %s tables equal what the switches already hold: the read-back could not tell a load from leftovers", name)
			}
			path := filepath.Join(t.TempDir(), "nuesm-"+name+".dump")
			if err := lft.WriteOpenSMLFTsFile(path, g, r); err != nil {
				t.Fatal(err)
			}
			osm, err := ibtest.RunOpenSMOnce(t, sim, ibtest.OpenSMConfig{
				Args: []string{"-R", "file", "-U", path},
				LIDs: lidOf(g, same),
			})
			if err != nil {
				t.Fatal(err)
			}
			if errs := osm.LogErrors(); len(errs) > 0 {
				t.Errorf("OpenSM logged errors:\n%s", strings.Join(errs, "\n"))
			}
			// Without this line OpenSM fell back to minhop (a rejected
			// file is no failure to it), and the switches would hold
			// OpenSM's tables instead of ours.
			if !strings.Contains(osm.Log(), "file tables configured on all switches") {
				t.Fatalf("OpenSM did not configure the switches with the file engine; log:\n%s", osm.Log())
			}
			got := readBack(t, sim, g)
			held = got
			if !lft.Equal(got, want) {
				t.Errorf("switch tables (ibroute) differ from our %s tables:\n%s", name, diff(g, got, want, 10))
			}
		})
	}
}

// TestVerifyOpenSMMinHop runs OpenSM's own MinHop on the same fat tree and
// reads its opensm-lfts.dump with our reader and verifier. OpenSM is given
// other LIDs than ours (ours in reverse order), so the reader must map its
// LIDs back to our ports by the port GUIDs the dump names.
func TestVerifyOpenSMMinHop(t *testing.T) {
	ibtest.Require(t, "ibsim", "opensm")
	g := fatTree(t)
	sim := startSim(t, g)
	top := uint16(g.MaxLID())
	osm, err := ibtest.RunOpenSMOnce(t, sim, ibtest.OpenSMConfig{
		Args: []string{"-R", "minhop"},
		LIDs: lidOf(g, func(lid uint16) uint16 { return top + 1 - lid }),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(osm.Log(), "minhop tables configured on all switches") {
		t.Fatalf("OpenSM did not route with minhop; log:\n%s", osm.Log())
	}
	dump := osm.Dump("opensm-lfts.dump")
	if err := ibtest.WaitFile(dump, ibtest.Budget(t)); err != nil {
		t.Fatal(err)
	}
	// OpenSM did use the other LIDs: the first switch's table names it by
	// its relabelled LID.
	text, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	sw0 := &g.F.Nodes[g.Switches[0]]
	if hdr := fmt.Sprintf(" of switch Lid %d guid 0x%016x ", top+1-sw0.Ports[0].LID, sw0.GUID); !bytes.Contains(text, []byte(hdr)) {
		t.Fatalf("OpenSM's dump has no table headed %q: it did not take the LIDs it was given", hdr)
	}
	r, err := lft.ReadOpenSMLFTsFile(dump, g)
	if err != nil {
		t.Fatalf("our reader rejects OpenSM's dump: %v", err)
	}
	rep, verr := cdg.Verify(g, r, cdg.Options{MaxVLs: 1})
	if rep == nil {
		t.Fatalf("verifier: %v", verr)
	}
	// LMC 0: one LID per switch and per CA port
	if want := int64(len(g.Terms)) * int64(len(g.Switches)+len(g.Terms)-1); rep.Pairs != want || rep.Delivered != rep.Pairs {
		t.Fatalf("OpenSM's minhop: %d of %d pairs delivered, want all %d (every CA port to every other LID) (%v)\n%s",
			rep.Delivered, rep.Pairs, want, verr, rep)
	}
	// Shortest paths in a k-ary n-tree go up, then down, so they cannot
	// close a dependency cycle: a cycle here is a misread table (wrong
	// ports, or LIDs mapped to the wrong nodes), not OpenSM's doing.
	if verr != nil {
		t.Fatalf("our verifier rejects OpenSM's minhop on a fat tree: %v\n%s", verr, rep)
	}
	// Both MinHops take a shortest path for every pair, so hop counts
	// agree exactly although the port choices (and the LIDs) differ.
	theirs, err := routing.Measure(g, r, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := routing.Measure(g, route(t, g, "minhop"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if theirs.AvgHops != ours.AvgHops || theirs.MaxHops != ours.MaxHops || theirs.Pairs != ours.Pairs {
		t.Errorf("OpenSM's minhop: %d pairs, avg hops %.4f, max %d; ours: %d pairs, avg %.4f, max %d (both are shortest-path routings)",
			theirs.Pairs, theirs.AvgHops, theirs.MaxHops, ours.Pairs, ours.AvgHops, ours.MaxHops)
	}
	t.Logf("OpenSM minhop on fattree k=4 n=3: %d pairs delivered, CDG acyclic, avg hops %.3f (ours %.3f), max EFI %d (ours %d)",
		rep.Delivered, theirs.AvgHops, ours.AvgHops, theirs.MaxEFI, ours.MaxEFI)
}
