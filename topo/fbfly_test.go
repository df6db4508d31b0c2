package topo

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

func TestFlattenedButterflyCounts(t *testing.T) {
	for _, c := range []struct {
		dims  []int
		hosts int
	}{
		{[]int{4, 4}, 4}, {[]int{8, 8}, 8}, {[]int{3, 5}, 1}, {[]int{2, 2, 2, 2}, 1}, {[]int{4, 4, 4}, 4},
		{[]int{6, 3, 2}, 2}, {[]int{7}, 3}, {[]int{15, 15, 6}, 0},
	} {
		tp, err := FlattenedButterfly(c.dims, c.hosts)
		if err != nil {
			t.Fatal(err)
		}
		n, sumK := 1, 0
		for _, k := range c.dims {
			n *= k
			sumK += k - 1
		}
		if tp.Radix != c.hosts+sumK {
			t.Fatalf("%v: radix %d, want %d", c.dims, tp.Radix, c.hosts+sumK)
		}
		g := directCheck(t, tp, directWant{switches: n, hosts: n * c.hosts, cables: n * sumK / 2})
		if lo, hi := directDegrees(g); lo != sumK || hi != sumK {
			t.Fatalf("%v: degrees %d..%d, want %d", c.dims, lo, hi, sumK)
		}
		// Diameter = number of dimensions with k > 1 (Hamming graph).
		if _, diam := directDistSum(g); diam != len(c.dims) {
			t.Fatalf("%v: diameter %d, want %d", c.dims, diam, len(c.dims))
		}
		for i, crd := range tp.Coords {
			if got := fbCoords(i, c.dims); len(crd) != len(got) || crd[0] != got[0] {
				t.Fatalf("%v: switch %d coords %v", c.dims, i, crd)
			}
		}
		if n <= 200 {
			directGonumOracle(t, g)
		}
	}
}

// TestFlattenedButterflyNeighbours checks that every cable joins switches
// differing in exactly one coordinate and lands on the documented ports.
func TestFlattenedButterflyNeighbours(t *testing.T) {
	dims, hosts := []int{3, 4, 2}, 2
	tp, err := FlattenedButterfly(dims, hosts)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	for c := 0; c < g.NumChannels(); c++ {
		a, b := tp.Coords[g.Tail[c]], tp.Coords[g.Head[c]]
		diff, dim := 0, -1
		for d := range a {
			if a[d] != b[d] {
				diff++
				dim = d
			}
		}
		if diff != 1 {
			t.Fatalf("%s joins %v and %v", g.ChannelName(int32(c)), a, b)
		}
		base := hosts
		for e := 0; e < dim; e++ {
			base += dims[e] - 1
		}
		want := base + 1 + b[dim]
		if b[dim] > a[dim] {
			want--
		}
		if int(g.OutPort[c]) != want {
			t.Fatalf("%s: port %d, want %d", g.ChannelName(int32(c)), g.OutPort[c], want)
		}
	}
}

// TestFlattenedButterflyBisection compares the generator's bisection
// (N·k_min/4 when k_min is even) with a brute-force minimum on small grids,
// and checks that it gives up (0) when the smallest radix is odd.
func TestFlattenedButterflyBisection(t *testing.T) {
	for _, dims := range [][]int{{2, 3}, {4, 4}, {2, 4}, {2, 2, 2, 2}, {2, 5}, {2, 2, 3}, {2, 3, 3}, {4, 5}, {6, 3}, {2, 9}} {
		tp, err := FlattenedButterfly(dims, 1)
		if err != nil {
			t.Fatal(err)
		}
		g, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		brute := directMinBisection(g)
		if tp.Bisection != 0 && tp.Bisection != brute {
			t.Fatalf("%v: bisection %d, brute force %d", dims, tp.Bisection, brute)
		}
		kmin := dims[0]
		for _, k := range dims {
			kmin = min(kmin, k)
		}
		if (kmin%2 == 0) != (tp.Bisection != 0) {
			t.Fatalf("%v: bisection %d with k_min %d", dims, tp.Bisection, kmin)
		}
		t.Logf("fbfly %v: bisection %d (brute force %d)", dims, tp.Bisection, brute)
	}
}

func TestFlattenedButterflyUniformAndDeterminism(t *testing.T) {
	a, err := FlattenedButterflyUniform(3, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	b, err := FlattenedButterfly([]int{4, 4, 4}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if a.Params != b.Params || a.Params != "dims=4x4x4 hosts=4" {
		t.Fatalf("params %q vs %q", a.Params, b.Params)
	}
	directDeterministic(t, func() (*Topology, error) { return FlattenedButterfly([]int{5, 3, 2}, 2) })
}

func TestFlattenedButterflyErrors(t *testing.T) {
	for _, c := range []struct {
		dims  []int
		hosts int
	}{{nil, 1}, {[]int{4, 1}, 1}, {[]int{4, 4}, -1}, {[]int{200, 60}, 1}, {[]int{1000, 1000}, 1}, {[]int{100, 100, 2}, 4}} {
		if _, err := FlattenedButterfly(c.dims, c.hosts); err == nil {
			t.Fatalf("%v hosts %d accepted", c.dims, c.hosts)
		}
	}
	if _, err := FlattenedButterflyUniform(0, 4, 1); err == nil {
		t.Fatal("n = 0 accepted")
	}
	tp, err := Generate("fbfly", directExample(t, "fbfly"))
	if err != nil || tp.Fabric.Count(fabric.Switch) != 16 {
		t.Fatalf("example: %v", err)
	}
}
