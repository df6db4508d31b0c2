package fabric_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// permuted returns f with its nodes listed in another order (node i of f
// becomes node perm[i]), every cable kept: the same fabric as a dump
// taken from another host lists it.
func permuted(f *fabric.Fabric, perm []int) *fabric.Fabric {
	g := f.Clone()
	for i := range f.Nodes {
		n := f.Nodes[i]
		n.Ports = append([]fabric.Port(nil), n.Ports...)
		for p := range n.Ports {
			if peer := n.Ports[p].Peer; peer.Node >= 0 {
				n.Ports[p].Peer.Node = fabric.NodeID(perm[peer.Node])
			}
		}
		g.Nodes[perm[i]] = n
	}
	return g
}

// TestCompileNodeOrder compiles fabrics and the same fabrics with their
// nodes listed in random orders: the graphs must be the same but for the
// node ids (switch indices, channels, terminals and LID owners alike), as
// engines number everything by them.
func TestCompileNodeOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 26))
	fs := []*fabric.Fabric{graphFabric(t, true)}
	for range 100 {
		fs = append(fs, randomFabric(t, r, randOpts{maxSwitches: 15, edgeProb: 0.25, maxHosts: 3, extras: true}))
	}
	for i, f := range fs {
		g := mustCompile(t, f)
		perm := r.Perm(len(f.Nodes))
		pf := permuted(f, perm)
		mustValid(t, pf)
		pg := mustCompile(t, pf)
		if d := graphDiff(g, pg, perm); d != "" {
			t.Fatalf("fabric %d, nodes permuted %v: %s", i, perm, d)
		}
	}
}

// graphDiff names the first difference between g and pg, the graph of
// g's fabric with node i listed as node perm[i].
func graphDiff(g, pg *fabric.Graph, perm []int) string {
	for s, id := range g.Switches {
		if int(pg.Switches[s]) != perm[id] {
			return "switch order"
		}
	}
	eq := slices.Equal[[]int32]
	if len(g.Switches) != len(pg.Switches) || !eq(g.Off, pg.Off) || !eq(g.Head, pg.Head) || !eq(g.Tail, pg.Tail) ||
		!eq(g.Rev, pg.Rev) || !slices.Equal(g.OutPort, pg.OutPort) || !slices.Equal(g.InPort, pg.InPort) {
		return "channels"
	}
	if len(g.Terms) != len(pg.Terms) || !eq(g.TermOff, pg.TermOff) || !eq(g.TermAt, pg.TermAt) {
		return "terminal lists"
	}
	for i, tm := range g.Terms {
		tm.Node = fabric.NodeID(perm[tm.Node])
		if pg.Terms[i] != tm {
			return "terminal order"
		}
	}
	for lid := 0; lid <= g.MaxLID(); lid++ {
		s, tm := g.Owner(lid)
		ps, ptm := pg.Owner(lid)
		if s != ps || tm != ptm {
			return "LID owners"
		}
	}
	return ""
}
