package routing

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/topo"
)

// TestRepairScanMatchesVerifier: the CDG Repair's scan collects from
// intact tables is the one cdg.Verify builds (terminal sources, the VL of
// each path's SL): the same number of dependencies in every VL, for
// per-destination SLs (Up*/Down*, MinHop) and per-source SLs (LASH).
func TestRepairScanMatchesVerifier(t *testing.T) {
	fabrics := []func() (*topo.Topology, error){
		func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) },
		func() (*topo.Topology, error) { return topo.Torus([]int{4, 4}, 2, false) },
		func() (*topo.Topology, error) { return topo.Random(24, 4, 2, 3) },
	}
	for i, mk := range fabrics {
		tp, err := mk()
		g := dlGraph(t, tp, err)
		for _, e := range []Engine{UpDn{}, MinHop{}, LASH{}} {
			r, err := e.Route(context.Background(), g, Options{MaxVLs: 8})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := cdg.Verify(g, r, cdg.Options{})
			if rep == nil {
				t.Fatal(err)
			}
			rp := newRepairer(g, r, r.MaxVL()+1, make([]bool, g.NumSwitches()), nil)
			turns, dests, err := rp.scan(context.Background())
			if err != nil || len(dests) != 0 {
				t.Fatalf("fabric %d, %s: scan of intact tables: %v, %d broken destinations", i, e.Name(), err, len(dests))
			}
			for vl := range max(len(turns), len(rep.EdgesPerVL)) {
				n, want := 0, 0
				if vl < len(turns) {
					for _, w := range turns[vl] {
						n += bits.OnesCount64(w)
					}
				}
				if vl < len(rep.EdgesPerVL) {
					want = rep.EdgesPerVL[vl]
				}
				if n != want {
					t.Errorf("fabric %d, %s: VL %d: scan has %d dependencies, cdg.Verify %d", i, e.Name(), vl, n, want)
				}
			}
		}
	}
}

// TestRepairLayersMatchFullSearch: orderLayer accepts exactly the turn
// sets without a cycle, and try (with rollbacks) accepts exactly the turns
// that keep the layer acyclic, each compared with a full cycle search
// (cdg.FindCycle) on random turns of random fabrics.
func TestRepairLayersMatchFullSearch(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 17))
		tp, err := topo.Random(10+int(seed%8), 3, 0, seed)
		g := dlGraph(t, tp, err)
		ts := newTurnSpace(g)
		C := int32(g.NumChannels())
		randomTurn := func() (int32, int32) {
			c := rng.Int32N(C)
			h := g.Head[c]
			return c, g.Off[h] + rng.Int32N(g.Off[h+1]-g.Off[h])
		}
		acyclic := func(from, to []int32) bool {
			csr, err := cdg.NewCSR(int(C), from, to)
			if err != nil {
				t.Fatal(err)
			}
			return cdg.FindCycle(csr) == nil
		}
		// A random turn set, ordered from scratch.
		var from, to []int32
		L := ts.newLayer()
		for range 2 * int(C) {
			a, b := randomTurn()
			L.set(ts.turn(a, b))
			from, to = append(from, a), append(to, b)
		}
		if got, want := ts.orderLayer(L), acyclic(from, to); got != want {
			t.Fatalf("seed %d: orderLayer = %v, full search says acyclic = %v", seed, got, want)
		}
		// Incremental insertion with rollbacks, from an empty layer.
		ly, bad, err := newRepairLayers(context.Background(), ts, [][]uint64{ts.newLayer().turns})
		if err != nil || bad >= 0 {
			t.Fatalf("seed %d: empty layer: %v, %d", seed, err, bad)
		}
		from, to = from[:0], to[:0]
		for it := 0; it < 200; it++ {
			m := ly.mark()
			var f2, t2 []int32
			ok := true
			for range 1 + rng.IntN(3) {
				a, b := randomTurn()
				want := acyclic(append(append(from, f2...), a), append(append(to, t2...), b))
				if got := ly.try(0, a, b); got != want {
					t.Fatalf("seed %d step %d: try = %v, full search says acyclic = %v", seed, it, got, want)
				} else if !got {
					ok = false
					break
				}
				f2, t2 = append(f2, a), append(t2, b)
			}
			if !ok || rng.IntN(4) == 0 {
				ly.rollback(m)
				continue
			}
			ly.commit()
			from, to = append(from, f2...), append(to, t2...)
		}
		L = ly.vls[0]
		n := 0
		for _, w := range L.turns {
			n += bits.OnesCount64(w)
		}
		for i := range from {
			if !L.has(ts.turn(from[i], to[i])) {
				t.Fatalf("seed %d: committed turn %d->%d missing", seed, from[i], to[i])
			}
			if L.ord[from[i]] >= L.ord[to[i]] {
				t.Fatalf("seed %d: turn %d->%d against the order", seed, from[i], to[i])
			}
		}
		if distinct := countDistinct(ts, from, to); n != distinct {
			t.Fatalf("seed %d: layer holds %d turns, %d were committed", seed, n, distinct)
		}
	}
}

func countDistinct(ts *turnSpace, from, to []int32) int {
	seen := map[int64]bool{}
	for i := range from {
		seen[ts.turn(from[i], to[i])] = true
	}
	return len(seen)
}
