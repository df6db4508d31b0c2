package routing

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

type dlFabric struct {
	name string
	f    *fabric.Fabric
}

// dlLASHFabrics is the LASH test set: rings, tori, meshes, Kautz, random
// fabrics, trees, and several of them with failed links and switches.
func dlLASHFabrics(tb testing.TB) []dlFabric {
	tb.Helper()
	var out []dlFabric
	add := func(name string, tp *topo.Topology, err error) *fabric.Fabric {
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		out = append(out, dlFabric{name, tp.Fabric})
		return tp.Fabric
	}
	fail := func(name string, f *fabric.Fabric, spec topo.FailureSpec) {
		ff, _, err := topo.InjectFailures(f, spec)
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		out = append(out, dlFabric{name, ff})
	}
	tp, err := topo.Ring(5, 1, nil)
	add("ring5", tp, err)
	tp, err = topo.Ring(8, 2, nil)
	add("ring8", tp, err)
	tp, err = topo.Ring(5, 1, []int{2, 4})
	add("ring5-shortcut", tp, err)
	tp, err = topo.Torus([]int{3, 3}, 1, false)
	add("torus3x3", tp, err)
	tp, err = topo.Torus([]int{4, 4}, 2, false)
	t44 := add("torus4x4", tp, err)
	tp, err = topo.Torus([]int{4, 4, 4}, 1, false)
	t444 := add("torus4x4x4", tp, err)
	tp, err = topo.Torus([]int{5, 4}, 1, true)
	add("mesh5x4", tp, err)
	tp, err = topo.Hypercube(4, 1)
	add("hypercube4", tp, err)
	tp, err = topo.Kautz(2, 3, 1)
	kz := add("kautz2-3", tp, err)
	tp, err = topo.Kautz(3, 2, 2)
	add("kautz3-2", tp, err)
	var rnd []*fabric.Fabric
	for seed := uint64(1); seed <= 4; seed++ {
		tp, err = topo.Random(24, 4, 1, seed)
		rnd = append(rnd, add(fmt.Sprintf("random24-4-s%d", seed), tp, err))
	}
	tp, err = topo.Random(40, 3, 2, 9)
	add("random40-3", tp, err)
	tp, err = topo.FatTree(4, 2, 0)
	ft2 := add("fattree4-2", tp, err)
	tp, err = topo.FatTree(4, 3, 0)
	ft3 := add("fattree4-3", tp, err)
	tp, err = topo.Clos2(8)
	add("clos2-8", tp, err)
	fail("torus4x4-3links", t44, topo.FailureSpec{Links: 3, Seed: 1})
	fail("torus4x4x4-6links", t444, topo.FailureSpec{Links: 6, Seed: 2})
	fail("torus4x4x4-1switch", t444, topo.FailureSpec{Switches: 1, Seed: 5})
	fail("random-5links", rnd[0], topo.FailureSpec{Links: 5, Seed: 3})
	fail("random-10pct", rnd[1], topo.FailureSpec{LinkFraction: 0.1, Seed: 4})
	fail("kautz-2links", kz, topo.FailureSpec{Links: 2, Seed: 6})
	fail("fattree4-2-3links", ft2, topo.FailureSpec{Links: 3, Seed: 7})
	fail("fattree4-3-8links", ft3, topo.FailureSpec{Links: 8, Seed: 8})
	// Many failures: the switch graph may fall apart; pairs the fabric
	// disconnects are not routed.
	fail("torus4x4-12links", t44, topo.FailureSpec{Links: 12, Seed: 9})
	return out
}

// TestLASHFabrics: on every fabric of the set, LASH routes minimal paths,
// and the verifier passes within the VLs LASH reports, from CA ports; with
// sources=all also from switches.
func TestLASHFabrics(t *testing.T) {
	for _, fx := range dlLASHFabrics(t) {
		t.Run(fx.name, func(t *testing.T) {
			g := dlFabricGraph(t, fx.f)
			r, err := LASH{}.Route(context.Background(), g, Options{MaxVLs: lft.MaxVLs})
			if err != nil {
				t.Fatal(err)
			}
			rep := dlVerify(t, g, r, false)
			if rep.VLsUsed != r.NumVLs {
				t.Fatalf("VLs used %d, NumVLs %d", rep.VLsUsed, r.NumVLs)
			}
			dlCheckMinimal(t, g, r, false)
			ra, err := LASH{Config: LASHConfig{AllSources: true}}.Route(context.Background(), g, Options{MaxVLs: lft.MaxVLs})
			if err != nil {
				t.Fatal(err)
			}
			dlVerify(t, g, ra, true)
			t.Logf("%d switches: layers %d (%d with switch sources)", g.NumSwitches(), r.NumVLs, ra.NumVLs)
		})
	}
}

// TestLASHLayerCounts pins known layer counts: shortest paths of a fat tree
// are up*/down* paths and need one layer; a ring of five needs two.
func TestLASHLayerCounts(t *testing.T) {
	cases := []struct {
		name string
		tp   func() (*topo.Topology, error)
		want int
	}{
		{"fattree4-2", func() (*topo.Topology, error) { return topo.FatTree(4, 2, 0) }, 1},
		{"fattree4-3", func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }, 1},
		{"clos2-12", func() (*topo.Topology, error) { return topo.Clos2(12) }, 1},
		{"ring5", func() (*topo.Topology, error) { return topo.Ring(5, 1, nil) }, 2},
		{"ring3", func() (*topo.Topology, error) { return topo.Ring(3, 1, nil) }, 1},
	}
	for _, c := range cases {
		tp, err := c.tp()
		g := dlGraph(t, tp, err)
		r, err := LASH{}.Route(context.Background(), g, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.NumVLs != c.want {
			t.Errorf("%s: %d layers, want %d", c.name, r.NumVLs, c.want)
		}
		if c.want == 1 && r.SL.BySrc != nil {
			t.Errorf("%s: one layer but SLs not compacted to per destination", c.name)
		}
	}
}

// TestLASHVLLimit: a ring of five does not fit one VL; the error reports
// the exact count.
func TestLASHVLLimit(t *testing.T) {
	tp, err := topo.Ring(5, 1, nil)
	g := dlGraph(t, tp, err)
	_, err = LASH{}.Route(context.Background(), g, Options{MaxVLs: 1})
	var ve *VLError
	if !errors.As(err, &ve) || !errors.Is(err, ErrNeedVLs) || ve.Needed != 2 || ve.Limit != 1 || ve.Engine != "lash" {
		t.Fatalf("err = %v, want VLError{lash, 2, 1}", err)
	}
	// A 6×6 torus needs more than two layers; the error counts them all.
	tp, err = topo.Torus([]int{6, 6}, 1, false)
	g = dlGraph(t, tp, err)
	full, err := LASH{}.Route(context.Background(), g, Options{MaxVLs: lft.MaxVLs})
	if err != nil {
		t.Fatal(err)
	}
	_, err = LASH{}.Route(context.Background(), g, Options{MaxVLs: 2})
	if !errors.As(err, &ve) || ve.Needed != full.NumVLs || full.NumVLs <= 2 {
		t.Fatalf("err = %v, want Needed %d (> 2)", err, full.NumVLs)
	}
}

// TestLASHDeterministic: repeated runs and any number of workers give
// identical routings.
func TestLASHDeterministic(t *testing.T) {
	tp, err := topo.Random(30, 4, 2, 11)
	g := dlGraph(t, tp, err)
	var first *lft.Routing
	for _, w := range []int{1, 4, 1, 8} {
		r, err := LASH{}.Route(context.Background(), g, Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = r
		} else if !lft.Equal(first, r) {
			t.Fatalf("routing with %d workers differs", w)
		}
	}
}

// TestLASHParamsAndCancel covers parameter errors and cancellation.
func TestLASHParamsAndCancel(t *testing.T) {
	tp, err := topo.Ring(5, 1, nil)
	g := dlGraph(t, tp, err)
	if _, err := routeParams(context.Background(), LASH{}, g, Options{}, map[string]string{"sources": "some"}); err == nil {
		t.Error("sources=some accepted")
	}
	if _, err := routeParams(context.Background(), LASH{}, g, Options{}, map[string]string{"dims": "5"}); err == nil {
		t.Error("unknown parameter accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (LASH{}).Route(ctx, g, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestLASHIncrementalMatchesFullSearch compares the incremental acyclicity
// check of a layer with a full cycle search (cdg.FindCycle) after every
// path, on random walks over random fabrics, and checks the topological
// order invariant.
func TestLASHIncrementalMatchesFullSearch(t *testing.T) {
	accepted, refused := 0, 0
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 77))
		var tp *topo.Topology
		var err error
		switch seed % 3 {
		case 0:
			tp, err = topo.Random(8+int(seed%10), 3, 0, seed)
		case 1:
			tp, err = topo.Torus([]int{3 + int(seed%3), 4}, 0, false)
		default:
			tp, err = topo.Kautz(2, 2+int(seed%2), 0)
		}
		g := dlGraph(t, tp, err)
		ts := newTurnSpace(g)
		L := ts.newLayer()
		sc := newDAGScratch(g.NumChannels())
		var from, to []int32
		C := int32(g.NumChannels())
		for it := 0; it < 300; it++ {
			// A random walk of 2..7 channels without U-turns.
			path := []int32{rng.Int32N(C)}
			for n := 2 + rng.IntN(6); len(path) < n; {
				last := path[len(path)-1]
				h := g.Head[last]
				var opts []int32
				for c := g.Off[h]; c < g.Off[h+1]; c++ {
					if c != g.Rev[last] {
						opts = append(opts, c)
					}
				}
				if len(opts) == 0 {
					break
				}
				path = append(path, opts[rng.IntN(len(opts))])
			}
			f2, t2 := append([]int32(nil), from...), append([]int32(nil), to...)
			for j := 0; j+1 < len(path); j++ {
				f2, t2 = append(f2, path[j]), append(t2, path[j+1])
			}
			csr, err := cdg.NewCSR(int(C), f2, t2)
			if err != nil {
				t.Fatal(err)
			}
			want := cdg.FindCycle(csr) == nil
			if got := ts.tryAdd(L, path, sc); got != want {
				t.Fatalf("seed %d step %d: tryAdd = %v, full search says acyclic = %v (path %v)", seed, it, got, want, path)
			}
			if want {
				from, to = f2, t2
				accepted++
			} else {
				refused++
			}
			// The layer holds exactly the accepted turns, in order.
			seen := make([]bool, C)
			for _, p := range L.ord {
				if p < 0 || p >= C || seen[p] {
					t.Fatalf("seed %d: ord is not a permutation", seed)
				}
				seen[p] = true
			}
			n := 0
			for c := int32(0); c < C; c++ {
				h := g.Head[c]
				for c2 := g.Off[h]; c2 < g.Off[h+1]; c2++ {
					if L.has(ts.turn(c, c2)) {
						n++
						if L.ord[c] >= L.ord[c2] {
							t.Fatalf("seed %d: turn %d->%d against the order", seed, c, c2)
						}
					}
				}
			}
			distinct := map[[2]int32]bool{}
			for i := range from {
				distinct[[2]int32{from[i], to[i]}] = true
			}
			if n != len(distinct) {
				t.Fatalf("seed %d: layer holds %d turns, %d accepted", seed, n, len(distinct))
			}
		}
	}
	if accepted == 0 || refused == 0 {
		t.Fatalf("accepted %d, refused %d: the test does not exercise both outcomes", accepted, refused)
	}
	t.Logf("%d paths accepted, %d refused", accepted, refused)
}

func BenchmarkLASH_Torus4x4x4(b *testing.B) {
	dlBenchGraphs(b)
	for b.Loop() {
		if _, err := (LASH{}).Route(context.Background(), dlBench.lash, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
