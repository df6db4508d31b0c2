package routing

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// TestBaselineConformance runs every baseline engine on the fabric table
// and verifies delivery of every connected pair (terminals and switches as
// sources) with one VL; updn and ftree must also have an acyclic CDG.
func TestBaselineConformance(t *testing.T) {
	blFtreeRefused = 0
	defer func() {
		// Of the five damaged trees in the table, ftree routes all but
		// clos3-8-3% (seeded failures), whose switch-LID detours cycle.
		if blFtreeRefused > 1 {
			t.Errorf("ftree refused %d damaged trees, want at most 1", blFtreeRefused)
		}
	}()
	for _, c := range blCases() {
		t.Run(c.name, func(t *testing.T) {
			g := c.graph(t)
			for _, e := range []Engine{MinHop{}, UpDn{}, Ftree{}} {
				r, err := e.Route(context.Background(), g, Options{Workers: 3})
				if _, isFtree := e.(Ftree); isFtree && !c.tree {
					if !errors.Is(err, ErrNotApplicable) {
						t.Fatalf("ftree on %s: err = %v, want ErrNotApplicable", c.name, err)
					}
					continue
				}
				if _, isFtree := e.(Ftree); isFtree && c.fail > 0 && errors.Is(err, ErrNotApplicable) {
					// Detours for switch LIDs around failed links may close
					// a cycle; ftree then refuses and says so.
					if !strings.Contains(err.Error(), "dependency cycle") {
						t.Fatalf("ftree on %s: %v", c.name, err)
					}
					t.Logf("ftree refuses: %v", err)
					blFtreeRefused++
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", e.Name(), err)
				}
				var rep *cdg.Report
				switch e.(type) {
				case Ftree:
					// Top switches cannot reach each other up and down;
					// CA sources reach everything.
					rep = blVerify(t, g, r, true, false)
				case MinHop:
					// Switches as sources too: every LFT entry is exercised.
					rep = blVerify(t, g, r, false, true)
					if c.full {
						// Shortest paths between the terminals of a full
						// tree never turn down and up again (switch-to-
						// switch routes and detours around failures do).
						rep = blVerify(t, g, r, true, false)
					}
				default:
					rep = blVerify(t, g, r, true, true)
				}
				t.Logf("%-6s pairs %d, CDG edges %d, cycle %v", e.Name(), rep.Pairs, rep.CDGEdges, rep.Cycle != nil)
			}
		})
	}
}

var blFtreeRefused int

// TestMinHopRingCycle is a known answer: shortest paths on a 5-ring all
// turn the same way and close a dependency cycle in each direction.
func TestMinHopRingCycle(t *testing.T) {
	g := blTopo(t)(topo.Ring(5, 1, nil))
	r := blRoute(t, MinHop{}, g, Options{})
	rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: 1})
	if !errors.Is(err, cdg.ErrCycle) || rep.Cycle == nil {
		t.Fatalf("minhop on a 5-ring: err = %v, want a CDG cycle", err)
	}
	if rep.Delivered != rep.Pairs {
		t.Fatalf("delivered %d of %d", rep.Delivered, rep.Pairs)
	}
	if n := len(rep.Cycle.Channels); n != 5 {
		t.Errorf("cycle of %d channels, want the 5 channels of one direction: %v", n, rep.Cycle)
	}
	// Up*/Down* on the same ring is cycle-free.
	blVerify(t, g, blRoute(t, UpDn{}, g, Options{}), true, true)
}

// TestMinHopShortest compares MinHop's hop counts with BFS distances for
// every (switch, destination LID) pair of several fabrics.
func TestMinHopShortest(t *testing.T) {
	for _, c := range blCases() {
		g := c.graph(t)
		r := blRoute(t, MinHop{}, g, Options{})
		S := g.NumSwitches()
		dist, queue := make([]int32, S), make([]int32, S)
		var buf []int32
		for _, d := range Destinations(g) {
			g.BFS(d.Switch, dist, queue)
			for u := int32(0); int(u) < S; u++ {
				path, ok := blWalk(g, r, u, int(d.LID), buf)
				if dist[u] < 0 {
					if r.Port(u, int(d.LID)) != lft.NoPort {
						t.Fatalf("%s: switch %d has a route to unreachable LID %d", c.name, u, d.LID)
					}
					continue
				}
				if !ok || len(path) != int(dist[u]) {
					t.Fatalf("%s: switch %d to LID %d: %d hops (ok %v), BFS says %d", c.name, u, d.LID, len(path), ok, dist[u])
				}
				buf = path
			}
		}
	}
}

// TestUpDnLegal checks every route of updn climbs and then descends in the
// rank order of its roots, and is a shortest such route where the rule
// "descend when you can" allows.
func TestUpDnLegal(t *testing.T) {
	for _, c := range blCases() {
		g := c.graph(t)
		roots, err := UpDn{}.Roots(context.Background(), g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ud := updnOrientation(g, roots)
		r := blRoute(t, UpDn{}, g, Options{})
		var buf []int32
		for _, d := range Destinations(g) {
			for u := int32(0); int(u) < g.NumSwitches(); u++ {
				if r.Port(u, int(d.LID)) == lft.NoPort {
					continue
				}
				path, ok := blWalk(g, r, u, int(d.LID), buf)
				if !ok {
					t.Fatalf("%s: switch %d to LID %d not delivered", c.name, u, d.LID)
				}
				down := false
				for _, ch := range path {
					if ud.up[ch] && down {
						t.Fatalf("%s: route from %d to LID %d climbs after descending", c.name, u, d.LID)
					}
					down = down || !ud.up[ch]
				}
				buf = path
			}
		}
	}
}

// TestUpDnRoot checks root choice: given by GUID, description or CA, the
// unknown-root error, and the default (lowest eccentricity, lowest GUID)
// against a brute-force reference, also on a disconnected fabric.
func TestUpDnRoot(t *testing.T) {
	g := blTopo(t)(topo.Clos2(8))
	spine := int32(9)
	guid := g.F.Nodes[g.Switches[spine]].GUID
	for _, spec := range []string{"0x" + strings.ToUpper(strings.TrimLeft(blHex(guid), "0")), g.SwitchName(spine)} {
		roots, err := UpDn{}.Roots(context.Background(), g, Options{Root: spec})
		if err != nil || len(roots) != 1 || roots[0] != spine {
			t.Fatalf("root %q: %v, %v; want [%d]", spec, roots, err, spine)
		}
		r := blRoute(t, UpDn{}, g, Options{Root: spec})
		blVerify(t, g, r, true, true)
	}
	// A CA stands for its leaf switch.
	ca := g.Terms[5]
	roots, err := UpDn{}.Roots(context.Background(), g, Options{Root: g.F.Nodes[ca.Node].Desc})
	if err != nil || roots[0] != ca.Switch {
		t.Fatalf("CA root: %v, %v; want [%d]", roots, err, ca.Switch)
	}
	// A root at a leaf still gives a deadlock-free routing.
	blVerify(t, g, blRoute(t, UpDn{}, g, Options{Root: g.SwitchName(3)}), true, true)
	if _, err := (UpDn{}).Route(context.Background(), g, Options{Root: "no such switch"}); !errors.Is(err, ErrUnknownSwitch) {
		t.Fatalf("unknown root: err = %v, want ErrUnknownSwitch", err)
	}
	if _, err := (UpDn{}).Route(context.Background(), g, Options{Root: "0x0bad"}); !errors.Is(err, ErrUnknownSwitch) {
		t.Fatalf("unknown GUID: err = %v, want ErrUnknownSwitch", err)
	}

	// Default roots against brute force; the ring cut twice falls apart.
	ring, _, err := topo.InjectFailures(blMust(topo.Ring(9, 1, nil)).Fabric, topo.FailureSpec{Links: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	graphs := map[string]*topo.Topology{"random": blMust(topo.Random(30, 3, 1, 5)), "fattree": blMust(topo.FatTree(3, 3, 0)),
		"mesh": blMust(topo.Torus([]int{5, 4}, 1, true))}
	for name, tp := range graphs {
		blCheckCentres(t, name, blCompile(t, tp.Fabric))
	}
	gr := blCompile(t, ring)
	if comps := blCheckCentres(t, "cut ring", gr); comps != 2 {
		t.Fatalf("cut ring has %d components, want 2", comps)
	}
	blVerify(t, gr, blRoute(t, UpDn{}, gr, Options{}), true, true)
}

func blMust(tp *topo.Topology, err error) *topo.Topology {
	if err != nil {
		panic(err)
	}
	return tp
}

func blHex(v uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[:])
}

// blCheckCentres compares UpDn.Roots with a brute-force eccentricity scan
// and returns the number of components.
func blCheckCentres(t *testing.T, name string, g *fabric.Graph) int {
	t.Helper()
	S := g.NumSwitches()
	comp := g.SwitchComponents()
	dist := make([]int32, S)
	ecc := make([]int32, S)
	for s := int32(0); int(s) < S; s++ {
		g.BFS(s, dist, nil)
		for _, d := range dist {
			ecc[s] = max(ecc[s], d)
		}
	}
	var want []int32
	for c := int32(0); int(c) < S; c++ {
		if comp[c] != c {
			continue
		}
		best := int32(-1)
		for s := int32(0); int(s) < S; s++ {
			if comp[s] != c {
				continue
			}
			if best < 0 || ecc[s] < ecc[best] || (ecc[s] == ecc[best] && g.F.Nodes[g.Switches[s]].GUID < g.F.Nodes[g.Switches[best]].GUID) {
				best = s
			}
		}
		want = append(want, best)
	}
	for _, w := range []int{1, 2, 5} {
		got, err := UpDn{}.Roots(context.Background(), g, Options{Workers: w})
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%s, %d workers: roots %v (%v), brute force %v", name, w, got, err, want)
		}
	}
	return len(want)
}
