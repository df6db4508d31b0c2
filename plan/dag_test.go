package plan

import (
	"math/rand/v2"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// The incremental acyclic graph (Pearce-Kelly) against the plain
// reference: after every insertion attempt the edge set it holds must be
// acyclic by cdg.FindCycle, and an insertion must be refused exactly when
// the reference finds a cycle with the new edge; removals and replace
// keep the two in step.
func TestDAGMatchesCycleSearch(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		tp, err := topo.Random(8, 3, 0, seed)
		g := compile(t, tp, err)
		for _, cross := range []bool{false, true} {
			es := newEdgeSpace(g, 2, cross)
			d := newDAG(es)
			if err := d.order(); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(seed, 1))
			bits := make([]uint64, (es.size()+63)/64)
			var held []int64
			accepted, refused := 0, 0
			for i := 0; i < 400; i++ {
				if len(held) > 0 && rng.IntN(4) == 0 {
					k := rng.IntN(len(held))
					e := held[k]
					held = append(held[:k], held[k+1:]...)
					d.remove(e)
					if d.cnt[e] == 0 {
						bits[e>>6] &^= 1 << (e & 63)
					}
					continue
				}
				e := rng.Int64N(es.size())
				probe := append([]uint64(nil), bits...)
				probe[e>>6] |= 1 << (e & 63)
				cyc, _ := es.cycle(probe)
				ok := d.insert(e)
				if ok != (cyc == nil) {
					t.Fatalf("seed %d cross %v step %d: insert says %v, reference cycle %v", seed, cross, i, ok, cyc)
				}
				if ok {
					accepted++
					held = append(held, e)
					bits[e>>6] |= 1 << (e & 63)
				} else {
					refused++
				}
				if c, _ := es.cycle(bits); c != nil {
					t.Fatalf("seed %d: held edges cyclic", seed)
				}
			}
			if refused == 0 || accepted == 0 {
				t.Fatalf("seed %d cross %v: %d accepted, %d refused; the test needs both", seed, cross, accepted, refused)
			}
			// replace is all or nothing.
			before := append([]uint16(nil), d.cnt...)
			in := []int64{rng.Int64N(es.size()), rng.Int64N(es.size()), rng.Int64N(es.size())}
			var out []int64
			if len(held) > 0 {
				out = held[:1]
			}
			if !d.replace(out, in) {
				for i := range before {
					if before[i] != d.cnt[i] {
						t.Fatalf("seed %d: refused replace changed the graph", seed)
					}
				}
			}
		}
	}
}
