package dfsssp

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// TestFFLayerInsert checks the dynamic topological order against a plain
// reachability test: random insertions into a layer are refused exactly
// when they close a cycle, and removals undo them.
func TestFFLayerInsert(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(1, 2))
	l := newFFLayer(n, 1)
	adj := make([][]int32, n)
	reach := func(from, to int32) bool {
		seen := make([]bool, n)
		st := []int32{from}
		seen[from] = true
		for len(st) > 0 {
			v := st[len(st)-1]
			st = st[:len(st)-1]
			if v == to {
				return true
			}
			for _, w := range adj[v] {
				if !seen[w] {
					seen[w] = true
					st = append(st, w)
				}
			}
		}
		return false
	}
	for i := 0; i < 2000; i++ {
		x, y := int32(rng.IntN(n)), int32(rng.IntN(n))
		want := !reach(y, x)
		if got := l.insert(x, y); got != want {
			t.Fatalf("insert %d -> %d: %v, want %v", x, y, got, want)
		}
		if want {
			adj[x] = append(adj[x], y)
			if rng.IntN(4) == 0 { // undo now and then, as a refused path does
				l.remove(x, y)
				adj[x] = adj[x][:len(adj[x])-1]
			}
		}
		for v := range n {
			for _, w := range l.out[v] {
				if l.ord[v] >= l.ord[w] {
					t.Fatalf("after %d insertions: %d -> %d against the order", i, v, w)
				}
			}
		}
	}
}

// TestFirstFitLayering: layering=firstfit routes the small tori in fewer
// layers than OpenSM's cycle breaking (4×4×4 with 1 CA per switch: 6
// against 7; with 2: 6 against 10; 5×5×5: 7 against 12, within 8 VLs),
// the tables pass the verifier, and the engine stays deterministic.
func TestFirstFitLayering(t *testing.T) {
	for _, c := range []struct {
		dims    []int
		hosts   int
		osm, ff int
	}{
		{[]int{4, 4, 4}, 1, 7, 6}, {[]int{4, 4, 4}, 2, 10, 6}, {[]int{5, 5, 5}, 1, 12, 7},
	} {
		tp, err := topo.Torus(c.dims, c.hosts, false)
		g := compile(t, tp, err)
		_, st, _ := RouteDFSSSP(context.Background(), g, routing.Options{MaxVLs: 15})
		if st.Needed != c.osm {
			t.Errorf("%v×%d osm: %d layers, want %d", c.dims, c.hosts, st.Needed, c.osm)
		}
		ff := DFSSSP{Config: Config{FirstFit: true}}
		opt := routing.Options{MaxVLs: 8}
		r, st, err := ff.RouteStats(context.Background(), g, opt)
		if err != nil || st.Needed != c.ff {
			t.Fatalf("%v×%d firstfit: %v, %d layers, want %d", c.dims, c.hosts, err, st.Needed, c.ff)
		}
		if rep, err := verify(t, g, r, 8, false); err != nil {
			t.Fatalf("%v\n%s", err, rep)
		}
		r2, _, err := ff.RouteStats(context.Background(), g, opt)
		if err != nil || !lft.Equal(r, r2) {
			t.Fatalf("%v×%d firstfit: second run differs (%v)", c.dims, c.hosts, err)
		}
	}
	tp, err := topo.Torus([]int{5, 5, 5}, 1, false)
	g := compile(t, tp, err)
	_, _, err = DFSSSP{Config: Config{FirstFit: true}}.RouteStats(context.Background(), g, routing.Options{MaxVLs: 5})
	var ve *routing.VLError
	if !errors.As(err, &ve) || ve.Needed != 6 {
		t.Fatalf("5×5×5 firstfit at 5 VLs: %v, want needed 6", err)
	}
	if _, err := ParseConfig(Config{}, map[string]string{"layering": "best"}); err == nil {
		t.Fatal("layering=best accepted")
	}
	if c, err := ParseConfig(Config{}, map[string]string{"layering": "firstfit"}); err != nil || !c.FirstFit {
		t.Fatalf("layering=firstfit: %+v, %v", c, err)
	}
}
