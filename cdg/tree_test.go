package cdg

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// shortestTables routes every LID of g along a breadth-first tree towards
// its switch (the first shortest channel of every switch).
func shortestTables(g *fabric.Graph) *lft.Routing {
	r := lft.New(g, "bfs")
	S := g.NumSwitches()
	dist, queue := make([]int32, S), make([]int32, S)
	for lid := 1; lid <= g.MaxLID(); lid++ {
		dsw, dport, _ := lft.Target(g, lid)
		if dsw < 0 {
			continue
		}
		r.SetPort(dsw, lid, dport)
		g.BFS(dsw, dist, queue)
		for u := int32(0); int(u) < S; u++ {
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				if dist[u] > 0 && dist[g.Head[c]] == dist[u]-1 {
					r.SetPort(u, lid, g.OutPort[c])
					break
				}
			}
		}
	}
	return r
}

// TestTreeTakesDeliveredDestinations: tree, not the walk of dest, checks
// every destination whose sources are all delivered, leaves vls zero, and
// hands a destination with one broken entry on to dest having counted
// nothing. TestVerifyAgainstReference checks what both find.
func TestTreeTakesDeliveredDestinations(t *testing.T) {
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	r := shortestTables(g)
	_, term := g.Owner(g.MaxLID())
	broken := g.MaxLID()
	r.SetPort(0, broken, lft.NoPort) // switch 0 is a leaf; the LID is a CA's
	if term < 0 || g.Terms[term].Switch == 0 {
		t.Fatalf("fixture: LID %d is not a CA's on another switch than 0", broken)
	}
	v := newVerifier(g, r, Options{SwitchDelivery: true})
	w := newWalker(v)
	S := g.NumSwitches()
	col := make([]int32, S)
	dests := 0
	for d := 1; d <= g.MaxLID(); d++ {
		if sw, _ := g.Owner(d); sw < 0 {
			continue
		}
		for x := int32(0); int(x) < S; x++ {
			transposeHops(col, 1, x, g.PortChannels(x), r.Row(x)[d:d+1])
		}
		pairs := w.pairs
		ok := w.tree(d, col, nil)
		if ok != (d != broken) {
			t.Errorf("LID %d: tree took it %v", d, ok)
		}
		if !ok && w.pairs != pairs {
			t.Errorf("LID %d: tree counted %d pairs and gave up", d, w.pairs-pairs)
		}
		for x, m := range w.vls {
			if m != 0 {
				t.Fatalf("LID %d: vls[%d] = %#x after tree", d, x, m)
			}
		}
		dests++
	}
	if want := int64(dests-1) * int64(v.totalN-1); w.pairs != want || w.deliv != want {
		t.Errorf("tree counted %d pairs, %d delivered; want %d", w.pairs, w.deliv, want)
	}
}
