package topo

import (
	"fmt"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// FlattenedButterfly builds an n-dimensional flattened butterfly (Kim,
// Dally, Abts, ISCA 2007) as seed 002 uses it (§III-A, Fig. 3b; the
// 15×15×15×6 4D FB of §VI-A): switches on the grid dims[0]×…×dims[n−1],
// all-to-all within every dimension (two switches are cabled iff their
// coordinates differ in exactly one dimension: the Hamming graph), with
// hosts per switch. dims may mix radices; every radix must be ≥ 2.
//
// Switch order is mixed radix with dimension 0 fastest: switch
// x0 + dims[0]·(x1 + dims[1]·(…)). Labels and Coords are the coordinates.
// Ports: hosts 1..hosts, then dimension by dimension: in dimension d the
// cable to coordinate v lands on port hosts + Σ_{e<d}(dims[e]−1) + 1 + v
// when v < x_d, one less when v > x_d. Radix = hosts + Σ(dims[d]−1).
//
// Bisection: when the smallest radix k_min is even, cutting that dimension
// in halves crosses N·k_min/4 cables (N switches), which is the minimum
// (nested solutions of the edge-isoperimetric problem for products of
// cliques, Lindsey 1964); the tests confirm it by brute force on small
// grids. Otherwise (e.g. 6×3: 21 cables, less than the 27 of halving the
// 6) the generator leaves Bisection 0 (unknown). O(N·Σ dims).
func FlattenedButterfly(dims []int, hosts int) (*Topology, error) {
	const kind = "fbfly"
	if len(dims) == 0 {
		return nil, paramError(kind, "no dimensions")
	}
	if hosts < 0 {
		return nil, paramError(kind, "%d hosts per switch, expected >= 0", hosts)
	}
	n, radix := 1, hosts
	for d, k := range dims {
		if k < 2 {
			return nil, paramError(kind, "dimension %d has %d switches, expected >= 2", d, k)
		}
		if n > fabric.MaxUnicastLID/k {
			return nil, paramError(kind, "dims %v give more switches than LIDs", dims)
		}
		n *= k
		radix += k - 1
	}
	if radix > fabric.MaxPorts {
		return nil, paramError(kind, "dims %v with %d hosts need radix %d, more than %d ports", dims, hosts, radix, fabric.MaxPorts)
	}
	if err := directLIDs(kind, n, hosts); err != nil {
		return nil, err
	}
	s := newSpec(kind, fmt.Sprintf("dims=%s hosts=%d", fbDimsString(dims), hosts), radix)
	for i := 0; i < n; i++ {
		c := fbCoords(i, dims)
		s.addSwitch(coordLabel(c), hosts)
		s.coords = append(s.coords, c)
	}
	for i := 0; i < n; i++ {
		c := s.coords[i]
		base, stride := hosts, 1
		for d, k := range dims {
			for v := c[d] + 1; v < k; v++ {
				j := i + (v-c[d])*stride
				// v > c[d]: on i it is base+v; c[d] < v: on j it is base+1+c[d].
				s.linkPorts(i, base+v, j, base+1+c[d])
			}
			base += k - 1
			stride *= k
		}
	}
	kmin := dims[0]
	for _, k := range dims {
		kmin = min(kmin, k)
	}
	if kmin%2 == 0 {
		s.bisection = n * kmin / 4
	}
	return s.build()
}

// FlattenedButterflyUniform builds the n-dimensional flattened butterfly
// with k switches in every dimension (k^n switches, radix hosts + n(k−1)).
// Seed 002's balanced choice is hosts = k.
func FlattenedButterflyUniform(n, k, hosts int) (*Topology, error) {
	if n < 1 || n > 32 {
		return nil, paramError("fbfly", "n = %d dimensions, expected 1..32", n)
	}
	dims := make([]int, n)
	for i := range dims {
		dims[i] = k
	}
	return FlattenedButterfly(dims, hosts)
}

// fbCoords returns the mixed-radix coordinates of index i (dimension 0
// fastest).
func fbCoords(i int, dims []int) []int {
	c := make([]int, len(dims))
	for d, k := range dims {
		c[d] = i % k
		i /= k
	}
	return c
}

// fbEdges lists the edges of the Hamming graph on dims (vertices numbered
// as in FlattenedButterfly), each once, lower index first.
func fbEdges(dims []int) [][2]int {
	n := 1
	for _, k := range dims {
		n *= k
	}
	var edges [][2]int
	for i := 0; i < n; i++ {
		c := fbCoords(i, dims)
		stride := 1
		for d, k := range dims {
			for v := c[d] + 1; v < k; v++ {
				edges = append(edges, [2]int{i, i + (v-c[d])*stride})
			}
			stride *= k
		}
	}
	return edges
}

func fbDimsString(dims []int) string {
	parts := make([]string, len(dims))
	for i, k := range dims {
		parts[i] = fmt.Sprint(k)
	}
	return strings.Join(parts, "x")
}

func init() {
	register(Generator{
		Kind:    "fbfly",
		Short:   "flattened butterfly: all-to-all in every dimension of a grid (seed 002)",
		Example: "--dims 4x4 --hosts 4",
		Params: []Param{
			{"dims", "4x4", "switches per dimension, e.g. 8x8 or 15x15x15x6"},
			{"hosts", "4", "hosts per switch"},
		},
		Build: func(v Values) (*Topology, error) {
			dims, h := v.Ints("dims"), v.Int("hosts")
			if err := v.Err(); err != nil {
				return nil, err
			}
			return FlattenedButterfly(dims, h)
		},
	})
}
