package flitsim

import (
	"math"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// referenceLoads is the channel load computation done the plain way: for
// every ordered pair of nodes, walk the routing's path hop by hop on the
// fabric graph and add the pair's share of the source's traffic.
func referenceLoads(t *testing.T, n *Network, tr Traffic, seed uint64) []float64 {
	t.Helper()
	tr = tr.withDefaults()
	if tr.Load == 0 {
		tr.Load = 1
	}
	w, err := compile(n, tr, seed)
	if err != nil {
		t.Fatal(err)
	}
	g, r := n.Graph(), n.Routing()
	C := int32(g.NumChannels())
	N := int32(n.NumNodes())
	loads := make([]float64, n.NumLinks())
	for src := int32(0); src < N; src++ {
		if !w.active[src] {
			continue
		}
		loads[C+src]++
		w.dist(src, func(dst int32, frac float64) {
			term := g.Terms[n.NodeTerm(dst)]
			x := n.NodeSwitch(src)
			for x != term.Switch {
				c := g.ChannelAt(x, r.Port(x, int(term.LID)))
				loads[c] += frac
				x = g.Head[c]
			}
			loads[C+N+dst] += frac
		})
	}
	return loads
}

// TestBoundReference compares Bound's per-switch aggregation with the
// pairwise reference on several fabrics and patterns.
func TestBoundReference(t *testing.T) {
	df := routed(t, "dragonfly", func() (*topo.Topology, error) { return topo.Dragonfly(2, 4, 2, 9) }, "nue", 4)
	cases := []struct {
		f  *fixture
		tr Traffic
	}{
		{torus(t, 4, "dor"), Traffic{Pattern: Uniform}},
		{torus(t, 4, "dor-nodateline"), Traffic{Pattern: Transpose}},
		{torus(t, 4, "nue"), Traffic{Pattern: BitReversal}},
		{torus(t, 4, "dor"), Traffic{Pattern: Neighbor}},
		{torus(t, 4, "dor"), Traffic{Pattern: HotSpot, HotNode: 3, HotFraction: 0.2, Classes: []Class{{MessagePackets: 2}, {MessagePackets: 5}}}},
		{fatTree(t, "ftree"), Traffic{Pattern: Permutation}},
		{fatTree(t, "ftree"), Traffic{Pattern: Shift}},
		{fatTree(t, "ftree"), Traffic{Pattern: IO, IONode: ioNodes(16, 4), IORatio: 0.25}},
		{ring5(t, "minhop"), Traffic{Pattern: Uniform}},
		{df, Traffic{Pattern: NextGroup, Groups: df.topo.Group}},
		{df, Traffic{Pattern: GroupHotSpot, Groups: df.topo.Group, SrcGroup: 2, DstGroup: 5}},
	}
	for _, c := range cases {
		n := network(t, c.f, Config{})
		b, err := n.Bound(c.tr, 9)
		if err != nil {
			t.Fatalf("%s %s: %v", c.f.r.Engine, c.tr.Pattern, err)
		}
		want := referenceLoads(t, n, c.tr, 9)
		mx := 0.0
		for l := range want {
			if math.Abs(b.Loads[l]-want[l]) > 1e-9 {
				t.Errorf("%s %s: link %s load %.6f, reference %.6f", c.f.r.Engine, c.tr.Pattern, n.LinkName(int32(l)), b.Loads[l], want[l])
			}
			mx = max(mx, want[l])
		}
		if math.Abs(b.Saturation-1/mx) > 1e-9 {
			t.Errorf("%s %s: saturation %.6f, want %.6f", c.f.r.Engine, c.tr.Pattern, b.Saturation, 1/mx)
		}
		t.Logf("%-14s %-13s saturation %.3f on %s", c.f.r.Engine, c.tr.Pattern, b.Saturation, b.LinkName)
	}
}

// TestBoundFinite: the completion bound of the shift exchange is the
// flits of the busiest link: on the fat tree with fat-tree routing each
// node link carries (N-1) messages.
func TestBoundFinite(t *testing.T) {
	n := network(t, fatTree(t, "ftree"), Config{PacketFlits: 4})
	b, err := n.Bound(Traffic{Pattern: Shift, MessagePackets: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(15 * 2 * 4); math.Abs(b.CompletionCycles-want) > 1e-9 {
		t.Errorf("completion bound %.1f, want %.1f", b.CompletionCycles, want)
	}
}

// TestPhaseBound: the phase-by-phase estimate of the shift exchange
// against a plain recount with Path; on the fat tree with fat-tree
// routing every phase is a contention-free permutation, so the estimate
// equals the bound.
func TestPhaseBound(t *testing.T) {
	tr := Traffic{Pattern: Shift, MessagePackets: 2}
	n := network(t, fatTree(t, "ftree"), Config{PacketFlits: 4})
	b, err := n.Bound(tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	if b.PhaseCycles != 15*2*4 || math.Abs(b.PhaseSaturation-1) > 1e-12 {
		t.Errorf("fat tree: phase cycles %.0f, saturation %.3f; want 120, 1", b.PhaseCycles, b.PhaseSaturation)
	}
	for _, engine := range []string{"dor", "nue"} {
		n := network(t, torus(t, 4, engine), Config{})
		b, err := n.Bound(tr, 1)
		if err != nil {
			t.Fatal(err)
		}
		N := int32(n.NumNodes())
		sum := 0
		for s := int32(1); s < N; s++ {
			cnt := map[int32]int{}
			best := 0
			for i := int32(0); i < N; i++ {
				for _, l := range n.Path(i, (i+s)%N) {
					cnt[l]++
					best = max(best, cnt[l])
				}
			}
			sum += best
		}
		if want := float64(sum * 2 * n.Config().PacketFlits); b.PhaseCycles != want || b.PhaseCycles < b.CompletionCycles {
			t.Errorf("%s: phase cycles %.0f, recount %.0f, completion bound %.0f", engine, b.PhaseCycles, want, b.CompletionCycles)
		}
	}
	if b, _ := n.Bound(Traffic{Pattern: Uniform}, 1); b.PhaseCycles != 0 {
		t.Error("phase estimate for uniform traffic")
	}
}
