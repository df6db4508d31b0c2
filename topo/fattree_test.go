package topo

import (
	"math"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

func ipowTest(b, e int) int {
	r := 1
	for range e {
		r *= b
	}
	return r
}

// fatTreeAvgLeafHops is the mean switch hops between distinct leaves of a
// k-ary n-tree: leaves whose highest differing digit is m are 2(m+1) apart,
// and (k−1)·k^m leaves differ from a given one first at digit m.
func fatTreeAvgLeafHops(k, n int) float64 {
	sum := 0
	for m := 0; m < n-1; m++ {
		sum += 2 * (m + 1) * (k - 1) * ipowTest(k, m)
	}
	return float64(sum) / float64(ipowTest(k, n-1)-1)
}

func TestFatTreeCounts(t *testing.T) {
	for _, c := range []struct{ k, n int }{{2, 1}, {2, 2}, {2, 3}, {2, 4}, {3, 2}, {3, 3}, {4, 2}, {4, 3}, {5, 3}, {8, 2}, {6, 3}, {4, 4}} {
		tp, err := FatTree(c.k, c.n, 0)
		if err != nil {
			t.Fatal(err)
		}
		per := ipowTest(c.k, c.n-1)
		_, st := verifyShape(t, tp, shapeWant{
			switches: c.n * per, hosts: per * c.k, cables: (c.n - 1) * per * c.k, radix: 2 * c.k,
		})
		if c.n == 1 {
			continue
		}
		if st.CADiameter != 2*(c.n-1) || st.Diameter != 2*(c.n-1) {
			t.Errorf("k=%d n=%d: diameter %d, leaf diameter %d, want %d", c.k, c.n, st.Diameter, st.CADiameter, 2*(c.n-1))
		}
		if want := fatTreeAvgLeafHops(c.k, c.n); math.Abs(st.AvgSwitchHops-want) > 1e-9 {
			t.Errorf("k=%d n=%d: average leaf hops %v, want %v", c.k, c.n, st.AvgSwitchHops, want)
		}
		levels := make([]int, c.n)
		for _, l := range tp.Group {
			levels[l]++
		}
		for l, cnt := range levels {
			if cnt != per {
				t.Errorf("k=%d n=%d: %d switches at level %d, want %d", c.k, c.n, cnt, l, per)
			}
		}
		want := 0 // unknown for odd k
		if c.k%2 == 0 {
			want = per * c.k / 2
		}
		if tp.Bisection != want {
			t.Errorf("k=%d n=%d: bisection %d, want %d", c.k, c.n, tp.Bisection, want)
		}
	}
}

// TestFatTreeK4N3 pins the instance of the brief: 48 switches, 64 hosts.
func TestFatTreeK4N3(t *testing.T) {
	tp, err := FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := verifyShape(t, tp, shapeWant{switches: 48, hosts: 64, cables: 128, radix: 8})
	// Hosts on leaf ports 1..k, up ports k+1..2k, top switches use 1..k.
	for _, term := range g.Terms {
		if term.SwitchPort < 1 || term.SwitchPort > 4 || tp.Group[term.Switch] != 0 {
			t.Fatalf("host on %s port %d", g.SwitchName(term.Switch), term.SwitchPort)
		}
	}
	for c := range g.NumChannels() {
		up := tp.Group[g.Head[c]] > tp.Group[g.Tail[c]]
		if p := g.OutPort[c]; up != (p > 4) {
			t.Fatalf("channel %s: port %d in the wrong half", g.ChannelName(int32(c)), p)
		}
	}
	if got := g.SwitchName(0); got != "fattree L0 (0,0)" {
		t.Errorf("first switch %q", got)
	}
}

func TestFatTreeRadixOverride(t *testing.T) {
	a, err := FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := FatTree(4, 3, 36)
	if err != nil {
		t.Fatal(err)
	}
	_, sa := verifyShape(t, a, shapeWant{48, 64, 128, 8})
	_, sb := verifyShape(t, b, shapeWant{48, 64, 128, 36})
	if sa != sb {
		t.Errorf("radix override changed hop stats: %+v vs %+v", sa, sb)
	}
	if b.Params != "k=4 n=3 radix=36" {
		t.Errorf("params %q", b.Params)
	}
	_, err = FatTree(4, 3, 7)
	wantParamError(t, "fattree", err, "radix below 2k")
	_, err = FatTree(4, 3, 255)
	wantParamError(t, "fattree", err, "radix above 254")
}

func TestFatTreeBisection(t *testing.T) {
	for _, c := range []struct{ k, n int }{{2, 2}, {2, 3}, {4, 2}, {6, 2}} {
		tp, err := FatTree(c.k, c.n, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		if got := bruteBisection(t, g); got != tp.Bisection {
			t.Errorf("k=%d n=%d: brute-force bisection %d, Bisection %d", c.k, c.n, got, tp.Bisection)
		}
	}
}

func TestFatTreeEqualsXGFT(t *testing.T) {
	for _, c := range []struct{ k, n int }{{2, 1}, {2, 3}, {3, 3}, {4, 2}, {4, 3}, {3, 4}} {
		ft, err := FatTree(c.k, c.n, 0)
		if err != nil {
			t.Fatal(err)
		}
		m, w := make([]int, c.n), make([]int, c.n)
		for i := range c.n {
			m[i], w[i] = c.k, c.k
		}
		w[0] = 1
		xg, err := XGFT(c.n, m, w)
		if err != nil {
			t.Fatal(err)
		}
		per := ipowTest(c.k, c.n-1)
		want := shapeWant{c.n * per, per * c.k, (c.n - 1) * per * c.k, 2 * c.k}
		if c.n == 1 {
			want.radix = c.k // XGFT: radix = m1 + 0
		}
		_, sf := verifyShape(t, ft, shapeWant{want.switches, want.hosts, want.cables, 2 * c.k})
		_, sx := verifyShape(t, xg, want)
		if sf != sx {
			t.Errorf("k=%d n=%d: hop stats differ: fattree %+v, xgft %+v", c.k, c.n, sf, sx)
		}
		for s := range ft.Group {
			if ft.Group[s] != xg.Group[s] {
				t.Fatalf("k=%d n=%d: switch %d: level %d vs %d", c.k, c.n, s, ft.Group[s], xg.Group[s])
			}
		}
	}
}

func TestFatTreeDeterministic(t *testing.T) {
	verifyDeterministic(t, func() (*Topology, error) { return FatTree(4, 3, 0) })
	verifyDeterministic(t, func() (*Topology, error) { return FatTree(3, 4, 10) })
}

func TestFatTreeParams(t *testing.T) {
	for _, c := range []struct {
		k, n, radix int
		what        string
	}{
		{1, 3, 0, "k=1"},
		{4, 0, 0, "n=0"},
		{128, 2, 0, "k needing 256 ports"},
		{16, 5, 0, "a tree beyond the LID space"},
		{1 << 20, 1 << 20, 0, "huge parameters"},
	} {
		_, err := FatTree(c.k, c.n, c.radix)
		wantParamError(t, "fattree", err, c.what)
	}
	tp, err := Generate("fattree", map[string]string{"k": "2", "n": "2", "radix": "6"})
	if err != nil || tp.Radix != 6 || tp.Fabric.Count(fabric.CA) != 4 {
		t.Fatalf("Generate fattree: %v", err)
	}
}

func BenchmarkFatTree_k18n3(b *testing.B) {
	for b.Loop() {
		if _, err := FatTree(18, 3, 0); err != nil {
			b.Fatal(err)
		}
	}
}
