package nue

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/graph/simple"
	gtopo "gonum.org/v1/gonum/graph/topo"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// TestUsedTurnsAgainstTarjan checks the incremental acyclicity test
// (dynamic topological order) against a full recomputation: gonum's Tarjan SCC on
// the graph of used turns after each tentative insertion. Turns are also
// released again at random, as tentative turns are in Nue.
func TestUsedTurnsAgainstTarjan(t *testing.T) {
	fabrics := []func() (*topo.Topology, error){
		func() (*topo.Topology, error) { return topo.Ring(6, 1, []int{0, 3}) },
		func() (*topo.Topology, error) { return topo.Torus([]int{3, 4}, 1, false) },
		func() (*topo.Topology, error) { return topo.Random(12, 3, 1, 5) },
		func() (*topo.Topology, error) { return topo.Kautz(2, 2, 1) },
	}
	for fi, gen := range fabrics {
		tp, err := gen()
		g := build(t, tp, err)
		ti := newTurnIndex(g)
		for seed := uint64(0); seed < 5; seed++ {
			tarjanRun(t, g, ti, fi, seed)
		}
	}
}

// tarjanRun inserts and releases 400 random turns into one layer (a
// seeded order on odd seeds) and checks each answer, the order and the
// order list against gonum's Tarjan SCC.
func tarjanRun(t *testing.T, g *fabric.Graph, ti *turnIndex, fi int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(fi)))
	ut := newUsedTurns(ti, nil)
	if seed%2 == 1 {
		lv := make([]int32, g.NumSwitches())
		for i := range lv {
			lv[i] = int32(rng.IntN(3))
		}
		ut.seedOrder(lv)
	}
	ref := simple.NewDirectedGraph()
	for c := 0; c < g.NumChannels(); c++ {
		ref.AddNode(simple.Node(c))
	}
	var wet [][2]int32
	for step := 0; step < 400; step++ {
		a := int32(rng.IntN(g.NumChannels()))
		h := g.Head[a]
		b := g.Off[h] + int32(rng.IntN(g.Degree(h)))
		if b == g.Rev[a] {
			continue // U-turns are never used
		}
		tid := ti.id(a, b)
		wasUsed, wasBlocked := ut.isUsed(tid), ut.state[tid] == tBlocked
		cyclic := refAdd(ref, a, b)
		st := uint8(tUsed)
		if rng.IntN(3) == 0 {
			st = tWet
		}
		got := ut.use(a, b, st)
		switch {
		case wasUsed && !got:
			t.Fatalf("fabric %d seed %d step %d: used turn refused", fi, seed, step)
		case wasBlocked:
			if got {
				t.Fatalf("fabric %d seed %d step %d: blocked turn accepted", fi, seed, step)
			}
			// Blocked stays blocked even if a release since made it
			// acyclic: drop it from the reference.
			if !cyclic {
				ref.RemoveEdge(int64(a), int64(b))
			}
		case got == cyclic:
			t.Fatalf("fabric %d seed %d step %d: use(%s, %s) = %v, Tarjan says cyclic = %v",
				fi, seed, step, g.ChannelName(a), g.ChannelName(b), got, cyclic)
		}
		if got && !wasUsed && st == tWet {
			wet = append(wet, [2]int32{a, b})
		}
		// Release some tentative turns.
		if len(wet) > 0 && rng.IntN(4) == 0 {
			i := rng.IntN(len(wet))
			e := wet[i]
			wet = append(wet[:i], wet[i+1:]...)
			ut.release(ti.id(e[0], e[1]))
			ref.RemoveEdge(int64(e[0]), int64(e[1]))
		}
		if c, c2, ok := orderViolation(g, ti, ut); !ok {
			t.Fatalf("fabric %d seed %d step %d: order violates used turn %s -> %s", fi, seed, step, g.ChannelName(c), g.ChannelName(c2))
		}
	}
	checkOrderList(t, g, ut, fi)
}

// refAdd adds a→b to the reference graph unless it is there; it reports
// whether that closes a cycle, and then takes the edge out again.
func refAdd(ref *simple.DirectedGraph, a, b int32) (cyclic bool) {
	if ref.HasEdgeFromTo(int64(a), int64(b)) {
		return false
	}
	ref.SetEdge(ref.NewEdge(simple.Node(a), simple.Node(b)))
	for _, scc := range gtopo.TarjanSCC(ref) {
		if len(scc) > 1 {
			cyclic = true
		}
	}
	if cyclic {
		ref.RemoveEdge(int64(a), int64(b))
	}
	return cyclic
}

// orderViolation finds a used turn c→c2 the order does not respect.
func orderViolation(g *fabric.Graph, ti *turnIndex, ut *usedTurns) (c, c2 int32, ok bool) {
	for c := int32(0); int(c) < g.NumChannels(); c++ {
		hh := g.Head[c]
		for c2 := g.Off[hh]; c2 < g.Off[hh+1]; c2++ {
			if ut.isUsed(ti.id(c, c2)) && ut.ord(c) >= ut.ord(c2) {
				return c, c2, false
			}
		}
	}
	return 0, 0, true
}

// checkOrderList: the list holds every channel once, labels increasing.
func checkOrderList(t *testing.T, g *fabric.Graph, ut *usedTurns, fi int) {
	t.Helper()
	n, prev := 0, int32(-1)
	ut.list()
	for c := ut.head; c >= 0; c = ut.next[c] {
		if ut.prev[c] != prev || (prev >= 0 && ut.ord(prev) >= ut.ord(c)) {
			t.Fatalf("fabric %d: order list broken at %s", fi, g.ChannelName(c))
		}
		prev = c
		n++
	}
	if n != g.NumChannels() {
		t.Fatalf("fabric %d: order list has %d of %d channels", fi, n, g.NumChannels())
	}
}

// BenchmarkUsedTurns: the incremental cycle check alone (use, hence
// insert), a fixed random sequence of turns on an 8×8×8 torus into an
// empty layer, where most turns go against the order and search.
func BenchmarkUsedTurns(b *testing.B) {
	g := benchGraph(b, "torus8x8x8")
	ti := newTurnIndex(g)
	rng := rand.New(rand.NewPCG(1, 2))
	var turns [][2]int32
	for len(turns) < 20000 {
		a := int32(rng.IntN(g.NumChannels()))
		h := g.Head[a]
		if c := g.Off[h] + int32(rng.IntN(g.Degree(h))); c != g.Rev[a] {
			turns = append(turns, [2]int32{a, c})
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u := newUsedTurns(ti, nil)
		for _, t := range turns {
			u.use(t[0], t[1], tUsed)
		}
	}
}
