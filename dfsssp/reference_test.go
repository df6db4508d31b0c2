package dfsssp

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// Reference tests: the optimised code against simple implementations.

// plainDijkstra is the textbook O(S²) Dijkstra towards root over the
// traffic-direction weights w.
func plainDijkstra(g *fabric.Graph, root int32, w []int64) []int64 {
	S := g.NumSwitches()
	dist := make([]int64, S)
	done := make([]bool, S)
	for i := range dist {
		dist[i] = inf
	}
	dist[root] = 0
	for {
		u := int32(-1)
		for v := int32(0); int(v) < S; v++ {
			if !done[v] && dist[v] < inf && (u < 0 || dist[v] < dist[u]) {
				u = v
			}
		}
		if u < 0 {
			return dist
		}
		done[u] = true
		for c := g.Off[u]; c < g.Off[u+1]; c++ {
			if v := g.Head[c]; dist[u]+w[g.Rev[c]] < dist[v] {
				dist[v] = dist[u] + w[g.Rev[c]]
			}
		}
	}
}

// TestDijkstraReference: on random fabrics with random small weights (many
// ties), the OpenSM-compatible Dijkstra finds the plain one's distances,
// settles switches in distance order, and every parent channel is tight.
func TestDijkstraReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for seed := uint64(0); seed < 20; seed++ {
		tp, err := topo.Random(10+int(seed), 3+int(seed%3), 1, seed)
		g := withFailures(t, tp, err, 0.1, seed)
		p, err := newPlan(g, false)
		if err != nil {
			t.Fatal(err)
		}
		dj := newDijkstra(p)
		w := make([]int64, g.NumChannels())
		for range 5 {
			wr := make([]int64, len(w))
			for c := range w {
				w[c] = 1 + rng.Int64N(4)
			}
			for c := range w {
				wr[c] = w[g.Rev[c]]
			}
			for _, d := range p.dests {
				dj.run(d.sw, d.port, wr)
				want := plainDijkstra(g, d.sw, w)
				shift := int64(0)
				if d.port != 0 {
					shift = 1 // the destination CA's link
				}
				reached := 0
				for _, x := range want {
					if x < inf {
						reached++
					}
				}
				if len(dj.order) != reached || dj.order[0] != d.sw {
					t.Fatalf("seed %d: settled %d switches from %d, want %d from %d", seed, len(dj.order), dj.order[0], reached, d.sw)
				}
				prev := int64(-1)
				for _, s := range dj.order {
					got := dj.dist[dj.vid[s]] - shift
					if got != want[s] || got < prev {
						t.Fatalf("seed %d: dist of %d is %d (after %d), want %d", seed, s, got, prev, want[s])
					}
					prev = got
					if c := dj.par[s]; s != d.sw && want[g.Head[c]]+w[c] != want[s] {
						t.Fatalf("seed %d: parent channel of %d is not tight", seed, s)
					}
				}
			}
		}
	}
}

// TestHeapOrder: the heap extracts keys in order under random inserts and
// key changes.
func TestHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 200
	h := newOSMHeap(n)
	keys := make([]int64, n)
	for v := range n {
		keys[v] = rng.Int64N(50)
		h.insert(int32(v), keys[v])
	}
	for range 300 {
		v := int32(rng.IntN(n))
		keys[v] = rng.Int64N(50)
		h.setKey(v, keys[v])
	}
	prev := int64(-1)
	for range n {
		v := h.extract()
		if keys[v] < prev {
			t.Fatalf("extracted key %d after %d", keys[v], prev)
		}
		prev = keys[v]
	}
	if h.extract() != -1 {
		t.Fatal("heap not empty")
	}
}

// routedBuilder runs SSSP with layer 0 recorded.
func routedBuilder(t *testing.T, g *fabric.Graph, switchSources bool) (*builder, *lft.Routing) {
	t.Helper()
	p, err := newPlan(g, switchSources)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBuilder(p)
	if err != nil {
		t.Fatal(err)
	}
	r := lft.New(g, "test")
	if err := shortestPaths(context.Background(), p, r, routing.Options{}, b); err != nil {
		t.Fatal(err)
	}
	b.finish()
	return b, r
}

// TestLayerZeroReference builds layer 0 the way OpenSM does — path after
// path in (destination, source rank) order, walking each one — and
// compares it with the per-tree construction: the counts, the order of
// every dependency list, and the order vertices were created in.
func TestLayerZeroReference(t *testing.T) {
	for _, fx := range fixtures {
		for _, ss := range []bool{false, true} {
			tp, err := fx.make()
			g := withFailures(t, tp, err, 0.05, 4)
			b, _ := routedBuilder(t, g, ss)
			ref := newLayer(g.NumChannels(), len(b.tdOff)-1)
			bySrc := make([]int32, b.S)
			for s := range b.S {
				bySrc[b.p.srcRank[s]] = int32(s)
			}
			for di := range b.D {
				for _, s := range bySrc {
					if b.p.mult[s] > 0 && b.nh[di*b.S+int(s)] >= 0 {
						walk(b, di, s, func(c, prev int32) {
							ref.node(c)
							if prev >= 0 {
								ref.add(b.turn(prev, c), prev, b.p.mult[s], b.tbase)
							}
						})
					}
				}
			}
			l := b.l0
			if !slices.Equal(ref.nodes, l.nodes) || !slices.Equal(ref.adjLen, l.adjLen) {
				t.Fatalf("%s: vertices or list lengths differ", fx.name)
			}
			for c := range l.adjLen {
				lo, hi := b.tbase[c], b.tbase[c]+l.adjLen[c]
				if !slices.Equal(ref.adj[lo:hi], l.adj[lo:hi]) {
					t.Fatalf("%s: dependency list of channel %d: %v, reference %v", fx.name, c, l.adj[lo:hi], ref.adj[lo:hi])
				}
			}
			if !slices.Equal(ref.count, l.count) {
				t.Fatalf("%s: counts differ", fx.name)
			}
		}
	}
}

// walk calls f for each channel of path (s, di) with the channel before it
// (-1 for the first).
func walk(b *builder, di int, s int32, f func(c, prev int32)) {
	root := b.p.dests[di].sw
	nh := b.nh[di*b.S : (di+1)*b.S]
	prev := int32(-1)
	for x := s; x != root; {
		c := nh[x]
		f(c, prev)
		prev, x = c, b.g.Head[c]
	}
}

// TestPathsOnReference compares the paths pathsOn finds on a dependency
// (preorder slices of the turn's destinations' trees, skipping subtrees
// above the layer) with a scan of every path, for every turn and layer of
// finished layerings.
func TestPathsOnReference(t *testing.T) {
	for _, fx := range []fixture{fixtures[0], fixtures[2], fixtures[7], fixtures[9]} {
		tp, err := fx.make()
		g := compile(t, tp, err)
		b, _ := routedBuilder(t, g, false)
		needed, err := b.layering(context.Background(), lft.MaxVLs, &Stats{})
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for L := range uint8(needed) {
			for c1 := int32(0); int(c1) < g.NumChannels(); c1++ {
				for t1 := b.tbase[c1]; t1 < b.tbase[c1+1]; t1++ {
					got = b.pathsOn(t1, c1, L, got[:0])
					var want []uint64
					for di := range b.D {
						for s := int32(0); int(s) < b.S; s++ {
							pid := di*b.S + int(s)
							if b.p.mult[s] == 0 || b.nh[pid] < 0 || b.pl[pid] != L {
								continue
							}
							uses := false
							walk(b, di, s, func(c, prev int32) { uses = uses || (prev == c1 && b.turn(prev, c) == t1) })
							if uses {
								want = append(want, uint64(b.pathStamp(pid))<<32|uint64(pid))
							}
						}
					}
					slices.Sort(want)
					if !slices.Equal(got, want) {
						t.Fatalf("%s: turn %d, layer %d: %d paths, reference %d", fx.name, t1, L, len(got), len(want))
					}
				}
			}
		}
	}
}

// TestLayersAcyclicFromScratch rebuilds each layer's CDG from the final
// tables (every source switch's path, on the VL its SL maps to) and checks
// it with cdg.FindCycle, independently of the incremental bookkeeping.
func TestLayersAcyclicFromScratch(t *testing.T) {
	for _, fx := range fixtures {
		for _, ss := range []string{"off", "on"} {
			tp, err := fx.make()
			g := withFailures(t, tp, err, 0.03, 8)
			r, st, err := DFSSSP{Config: Config{NoVLBalance: true, SwitchSources: ss == "on"}}.RouteStats(context.Background(), g, routing.Options{})
			if err != nil {
				t.Fatal(err)
			}
			p, _ := newPlan(g, ss == "on")
			C := int32(g.NumChannels())
			seen := map[[2]int32]bool{}
			var from, to []int32
			for _, d := range p.dests {
				for s := int32(0); int(s) < g.NumSwitches(); s++ {
					if p.mult[s] == 0 || r.Port(s, int(d.lid)) == lft.NoPort {
						continue
					}
					vl := int32(r.SL.Of(s, 0, int(d.lid)))
					prev := int32(-1)
					for x := s; x != d.sw; {
						c := g.ChannelAt(x, r.Port(x, int(d.lid)))
						if e := [2]int32{prev*16 + vl, c*16 + vl}; prev >= 0 && !seen[e] {
							seen[e] = true
							from, to = append(from, vl*C+prev), append(to, vl*C+c)
						}
						prev, x = c, g.Head[c]
					}
				}
			}
			csr, err := cdg.NewCSR(int(C)*st.Needed, from, to)
			if err != nil {
				t.Fatal(err)
			}
			if cyc := cdg.FindCycle(csr); cyc != nil {
				t.Fatalf("%s switchsources=%s: a layer's CDG has a cycle of %d channels", fx.name, ss, len(cyc))
			}
		}
	}
}
