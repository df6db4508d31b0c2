package topo

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

func TestHypercubeCounts(t *testing.T) {
	for dim := 1; dim <= 8; dim++ {
		for _, hosts := range []int{0, 1, 3} {
			tp, err := Hypercube(dim, hosts)
			if err != nil {
				t.Fatal(err)
			}
			n := 1 << dim
			_, st := verifyShape(t, tp, shapeWant{switches: n, hosts: n * hosts, cables: dim * n / 2, radix: dim + hosts})
			if st.Diameter != dim {
				t.Errorf("dim %d: diameter %d", dim, st.Diameter)
			}
			// Σ over ordered pairs of the Hamming distance: N · dim · 2^(dim−1).
			if want := float64(dim*n/2) / float64(n-1); hosts > 0 && math.Abs(st.AvgSwitchHops-want) > 1e-9 {
				t.Errorf("dim %d: average hops %v, want %v", dim, st.AvgSwitchHops, want)
			}
			if tp.Bisection != n/2 {
				t.Errorf("dim %d: bisection %d, want %d", dim, tp.Bisection, n/2)
			}
		}
	}
}

func TestHypercubeBisection(t *testing.T) {
	for dim := 1; dim <= 4; dim++ {
		tp, err := Hypercube(dim, 1)
		if err != nil {
			t.Fatal(err)
		}
		g, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		if got := bruteBisection(t, g); got != tp.Bisection {
			t.Errorf("dim %d: brute-force bisection %d, Bisection %d", dim, got, tp.Bisection)
		}
	}
}

// TestHypercubeIsTorus2: the hypercube is the 2×…×2 torus with one cable
// per pair; both generators must produce the same coordinates, labels and
// cabling port for port.
func TestHypercubeIsTorus2(t *testing.T) {
	for dim := 1; dim <= 5; dim++ {
		hc, err := Hypercube(dim, 2)
		if err != nil {
			t.Fatal(err)
		}
		dims := make([]int, dim)
		for i := range dims {
			dims[i] = 2
		}
		to, err := Torus(dims, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(hc.Coords, to.Coords) || hc.Bisection != to.Bisection || hc.Radix != to.Radix {
			t.Fatalf("dim %d: coords, bisection or radix differ", dim)
		}
		for i := range hc.Fabric.Nodes {
			a, b := &hc.Fabric.Nodes[i], &to.Fabric.Nodes[i]
			if strings.TrimPrefix(a.Desc, "hypercube ") != strings.TrimPrefix(b.Desc, "torus ") {
				t.Fatalf("dim %d: node %d: %q vs %q", dim, i, a.Desc, b.Desc)
			}
			for p := range a.Ports {
				if a.Ports[p].Peer != b.Ports[p].Peer {
					t.Fatalf("dim %d: %q port %d: peer %v vs %v", dim, a.Desc, p, a.Ports[p].Peer, b.Ports[p].Peer)
				}
			}
		}
	}
}

func TestHypercubeDeterministic(t *testing.T) {
	verifyDeterministic(t, func() (*Topology, error) { return Hypercube(6, 2) })
}

func TestHypercubeParams(t *testing.T) {
	for _, c := range []struct {
		dim, hosts int
		what       string
	}{
		{0, 1, "dimension 0"},
		{-1, 1, "negative dimension"},
		{4, -1, "negative hosts"},
		{4, 251, "255 ports"},
		{16, 0, "2^16 switches"},
		{14, 3, "beyond the LID space"},
		{1 << 40, 0, "huge dimension"},
	} {
		_, err := Hypercube(c.dim, c.hosts)
		wantParamError(t, "hypercube", err, c.what)
	}
}
