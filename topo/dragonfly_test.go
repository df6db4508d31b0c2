package topo

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// dragonflyGroupCables counts global cables per unordered group pair and
// checks that local cables (ports up to p+a−1) stay inside groups and
// global ones (ports p+a..) leave them.
func dragonflyGroupCables(t *testing.T, tp *Topology, g *fabric.Graph, p, a int) map[[2]int]int {
	t.Helper()
	pairs := map[[2]int]int{}
	for c := 0; c < g.NumChannels(); c++ {
		u, v := g.Tail[c], g.Head[c]
		if u > v {
			continue
		}
		gu, gv := tp.Group[u], tp.Group[v]
		global := int(g.OutPort[c]) >= p+a
		if global == (gu == gv) {
			t.Fatalf("channel %s: groups %d, %d, global port %v", g.ChannelName(int32(c)), gu, gv, global)
		}
		if global {
			pairs[[2]int{min(gu, gv), max(gu, gv)}]++
		}
	}
	return pairs
}

func TestDragonflySeed002(t *testing.T) {
	tp, err := Dragonfly(8, 16, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	const G, a = 129, 16
	if tp.Radix != 31 {
		t.Fatalf("radix %d, want 31 (Table III: 31 ports)", tp.Radix)
	}
	g := directCheck(t, tp, directWant{switches: 2064, hosts: 16512, cables: G*a*(a-1)/2 + G*(G-1)/2})
	groups := map[int]bool{}
	for _, grp := range tp.Group {
		groups[grp] = true
	}
	if len(groups) != G {
		t.Fatalf("%d groups, want %d", len(groups), G)
	}
	pairs := dragonflyGroupCables(t, tp, g, 8, a)
	if len(pairs) != G*(G-1)/2 {
		t.Fatalf("%d group pairs cabled, want %d", len(pairs), G*(G-1)/2)
	}
	for pr, n := range pairs {
		if n != 1 {
			t.Fatalf("groups %v: %d global cables, want 1", pr, n)
		}
	}
	bal, err := DragonflyBalanced(8)
	if err != nil || bal.Params != tp.Params {
		t.Fatalf("DragonflyBalanced(8) = %v, %v; want %s", bal, err, tp.Params)
	}
}

// TestDragonflyWiringRule checks the seed's rule literally in the balanced
// case: group i, switch j, global port m → group (i + j·h + m + 1) mod G,
// landing on switch a−1−j, global port h−1−m.
func TestDragonflyWiringRule(t *testing.T) {
	const p, a, h = 2, 4, 2
	tp, err := Dragonfly(p, a, h, 0)
	if err != nil {
		t.Fatal(err)
	}
	G := a*h + 1
	f := tp.Fabric
	g := directCheck(t, tp, directWant{switches: G * a, hosts: G * a * p, cables: G*a*(a-1)/2 + G*(G-1)/2})
	for i := 0; i < G; i++ {
		for j := 0; j < a; j++ {
			for m := 0; m < h; m++ {
				sw := i*a + j
				c := g.ChannelAt(int32(sw), uint8(p+a+m))
				if c < 0 {
					t.Fatalf("g%d s%d global port %d uncabled", i, j, m)
				}
				peer := int(g.Head[c])
				wantGroup := (i + j*h + m + 1) % G
				if tp.Group[peer] != wantGroup || tp.Coords[peer][1] != a-1-j || int(g.InPort[c]) != p+a+(h-1-m) {
					t.Fatalf("g%d s%d m%d -> %s port %d, want group %d switch %d port %d",
						i, j, m, f.Name(g.Switches[peer]), g.InPort[c], wantGroup, a-1-j, p+a+h-1-m)
				}
			}
		}
	}
	st := g.Hops()
	if !st.Connected || st.Diameter != 3 {
		t.Fatalf("hops %+v, want diameter 3 (local, global, local)", st)
	}
	directGonumOracle(t, g)
}

// TestDragonflySmallG covers g < a·h + 1: every pair of groups gets
// ⌊a·h/(g−1)⌋ or one more cables, ports are used symmetrically, and the
// number of cables matches the rule's closed form.
func TestDragonflySmallG(t *testing.T) {
	for _, c := range []struct{ p, a, h, g int }{
		{1, 4, 2, 2}, {1, 4, 2, 3}, {1, 4, 2, 5}, {1, 4, 2, 6}, {2, 3, 3, 4}, {1, 5, 1, 4}, {1, 2, 3, 6}, {1, 1, 3, 3},
	} {
		tp, err := Dragonfly(c.p, c.a, c.h, c.g)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		n := c.a * c.h
		wired := 0 // ports cabled per group by the rule
		for k := 0; k < n; k++ {
			if _, _, ok := dragonflyPeer(0, k, n, c.g); ok {
				wired++
			}
		}
		want := directWant{switches: c.g * c.a, hosts: c.g * c.a * c.p, cables: c.g*c.a*(c.a-1)/2 + c.g*wired/2}
		g := directCheck(t, tp, want)
		pairs := dragonflyGroupCables(t, tp, g, c.p, c.a)
		lo := n / (c.g - 1)
		for i := 0; i < c.g; i++ {
			for j := i + 1; j < c.g; j++ {
				if k := pairs[[2]int{i, j}]; k < lo || k > lo+1 {
					t.Fatalf("%+v: groups %d-%d have %d cables, want %d or %d", c, i, j, k, lo, lo+1)
				}
			}
		}
		if st := g.Hops(); !st.Connected {
			t.Fatalf("%+v: disconnected", c)
		}
		directGonumOracle(t, g)
		directDeterministic(t, func() (*Topology, error) { return Dragonfly(c.p, c.a, c.h, c.g) })
	}
}

func TestDragonflyPeerInvolution(t *testing.T) {
	for _, c := range []struct{ n, g int }{{16, 17}, {16, 5}, {16, 4}, {15, 7}, {6, 2}, {10, 8}} {
		for i := 0; i < c.g; i++ {
			for k := 0; k < c.n; k++ {
				tg, k2, ok := dragonflyPeer(i, k, c.n, c.g)
				if !ok {
					continue
				}
				back, k3, ok2 := dragonflyPeer(tg, k2, c.n, c.g)
				if !ok2 || back != i || k3 != k || tg == i {
					t.Fatalf("n=%d g=%d: (%d,%d) -> (%d,%d) -> (%d,%d,%v)", c.n, c.g, i, k, tg, k2, back, k3, ok2)
				}
			}
		}
	}
}

func TestDragonflyErrors(t *testing.T) {
	for _, c := range []struct{ p, a, h, g int }{
		{-1, 4, 2, 0}, {1, 0, 2, 0}, {1, 4, 0, 0}, {1, 4, 2, 1}, {1, 4, 2, 10}, {200, 40, 20, 0}, {20, 20, 10, 0},
	} {
		if _, err := Dragonfly(c.p, c.a, c.h, c.g); err == nil {
			t.Fatalf("Dragonfly%+v accepted", c)
		}
	}
	if _, err := DragonflyBalanced(0); err == nil {
		t.Fatal("DragonflyBalanced(0) accepted")
	}
}

func TestDragonflyGenerate(t *testing.T) {
	tp, err := Generate("dragonfly", nil)
	if err != nil || tp.Fabric.Count(fabric.Switch) != 9*4 {
		t.Fatalf("defaults: %v", err)
	}
	tp, err = Generate("dragonfly", directExample(t, "dragonfly"))
	if err != nil || tp.Fabric.Count(fabric.CA) != 16512 {
		t.Fatalf("example: %v", err)
	}
	if _, err := Generate("dragonfly", map[string]string{"g": "x"}); err == nil {
		t.Fatal("bad g accepted")
	}
}

func BenchmarkDragonfly_p8a16h8(b *testing.B) {
	for b.Loop() {
		if _, err := Dragonfly(8, 16, 8, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDragonflyHops_p4a8h4(b *testing.B) {
	tp, err := DragonflyBalanced(4)
	if err != nil {
		b.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		g.Hops()
	}
}
