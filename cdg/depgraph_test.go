package cdg_test

import (
	"math/rand/v2"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/topo"
)

// TestTurnGraph: random single-edge replacements on a torus's turns at
// two VLs; Replace accepts an edge exactly when the reference (FindCycle
// over all counted edges and the new one) finds no cycle, and a refused
// Replace leaves every count as it was.
func TestTurnGraph(t *testing.T) {
	tp, err := topo.Torus([]int{3, 3}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	g := compileFabric(t, tp.Fabric)
	const V = 2
	type edge struct{ c1, c2, vl int32 }
	var all []edge
	for c1 := int32(0); int(c1) < g.NumChannels(); c1++ {
		h := g.Head[c1]
		for c2 := g.Off[h]; c2 < g.Off[h+1]; c2++ {
			if c2 != g.Rev[c1] {
				all = append(all, edge{c1, c2, 0}, edge{c1, c2, 1})
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	tg := cdg.NewTurnGraph(g, V)
	if err := tg.Order(); err != nil {
		t.Fatal(err)
	}
	have := map[edge]int{}
	acyclic := func(extra *edge) bool {
		var from, to []int32
		for e, n := range have {
			if n > 0 {
				from, to = append(from, e.c1*V+e.vl), append(to, e.c2*V+e.vl)
			}
		}
		if extra != nil {
			from, to = append(from, extra.c1*V+extra.vl), append(to, extra.c2*V+extra.vl)
		}
		csr, err := cdg.NewCSR(g.NumChannels()*V, from, to)
		if err != nil {
			t.Fatal(err)
		}
		return cdg.FindCycle(csr) == nil
	}
	accepted, refused := 0, 0
	for step := 0; step < 600; step++ {
		e := all[rng.IntN(len(all))]
		id := tg.Edge(e.c1, e.c2, uint8(e.vl))
		if have[e] > 0 && rng.IntN(2) == 0 {
			if !tg.Replace([]int64{id}, nil) {
				t.Fatalf("step %d: removing an edge refused", step)
			}
			have[e]--
			continue
		}
		want := acyclic(&e)
		if got := tg.Replace(nil, []int64{id}); got != want {
			t.Fatalf("step %d: Replace says %v, reference %v", step, got, want)
		}
		if want {
			have[e]++
			accepted++
		} else {
			refused++
		}
	}
	t.Logf("accepted %d, refused %d", accepted, refused)
	if accepted < 50 || refused < 50 {
		t.Fatalf("accepted %d, refused %d: the walk tests too little", accepted, refused)
	}
}
