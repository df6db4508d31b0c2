package topo

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// NovaCube builds the NovaCube of Wang et al. (seed 004, §4.1): a k-ary
// n-cube (torus) plus one jump-over cable from each node to its most
// distant node, with hosts per switch (the paper's servers are switchless;
// here each node is a switch with its hosts).
//
//   - Even k (§4.1.1): node (a_1, …, a_n) is cabled to its antipode
//     ((a_i + k/2) mod k); the k^n/2 antipodal pairs are disjoint
//     (Theorem 4.1), every node has degree 2n + 1, and there are
//     (n + ½)·k^n cables (eq. 11).
//   - Odd k (§4.1.2): the jump-over cables are those of the even
//     (k−1)-ary n-NovaCube on the nodes whose coordinates are all ≤ k−2:
//     node a is cabled to ((a_i + (k−1)/2) mod (k−1)). Nodes with some
//     coordinate k−1 (the "k-th node in each dimension") keep degree 2n.
//     That is (k−1)^n/2 jump-over cables, n·k^n + (k−1)^n/2 in all; both
//     ends of each are (k−1)/2 = ⌊k/2⌋ apart in every dimension, i.e.
//     mutually most distant in the k-ary torus too. (The text's count of
//     unchanged nodes, "n^k − n^(k−1)", is a typo for k^n − (k−1)^n.)
//
// k ≥ 3 (a 2-ary "torus" has parallel wrap-around cables; use a
// hypercube) and k = 3 needs n ≥ 2 (with n = 1 the jump cable would
// duplicate a ring cable).
//
// The text's diameter formula (eq. 3, ⌊⌊k/2⌋·n/2⌋) is wrong whenever
// ⌊k/2⌋·n is odd and for every odd k tested; BFS gives ⌈⌈k/2⌉·n/2⌉ (the
// last line of its proof, rounded up) on every size in the tests' table.
// Its bisection (eq. 4) is the cut of one dimension in halves, which is
// not minimal in general (the tests show an 8×8 cut of 32 cables against
// the formula's 48), so Bisection is left 0.
//
// Switch order is mixed radix with dimension 0 fastest; labels and Coords
// are the coordinates. Ports: hosts 1..hosts; in dimension d the cable to
// the +1 neighbour on port hosts+2d+1 and to the −1 neighbour on
// hosts+2d+2; the jump-over cable on hosts+2n+1 (uncabled on the odd-k
// nodes without one). Radix = hosts + 2n + 1. O(n·k^n).
func NovaCube(k, n, hosts int) (*Topology, error) {
	const kind = "novacube"
	if k < 3 {
		return nil, paramError(kind, "k = %d, expected >= 3 (a 2-ary torus has parallel wrap-around cables)", k)
	}
	if n < 1 {
		return nil, paramError(kind, "n = %d dimensions, expected >= 1", n)
	}
	if k == 3 && n == 1 {
		return nil, paramError(kind, "k = 3, n = 1: the jump-over cable would duplicate a ring cable")
	}
	if hosts < 0 {
		return nil, paramError(kind, "%d hosts per switch, expected >= 0", hosts)
	}
	total := 1
	for d := 0; d < n; d++ {
		if total > fabric.MaxUnicastLID/k {
			return nil, paramError(kind, "%d^%d switches exceed the LID space", k, n)
		}
		total *= k
	}
	radix := hosts + 2*n + 1
	if radix > fabric.MaxPorts {
		return nil, paramError(kind, "radix %d exceeds %d ports", radix, fabric.MaxPorts)
	}
	if err := directLIDs(kind, total, hosts); err != nil {
		return nil, err
	}
	s := newSpec(kind, fmt.Sprintf("k=%d n=%d hosts=%d", k, n, hosts), radix)
	dims := make([]int, n)
	for d := range dims {
		dims[d] = k
	}
	for i := 0; i < total; i++ {
		c := fbCoords(i, dims)
		s.addSwitch(coordLabel(c), hosts)
		s.coords = append(s.coords, c)
	}
	for i := 0; i < total; i++ {
		c := s.coords[i]
		stride := 1
		for d := 0; d < n; d++ {
			j := i + ((c[d]+1)%k-c[d])*stride
			s.linkPorts(i, hosts+2*d+1, j, hosts+2*d+2)
			stride *= k
		}
	}
	jump := hosts + 2*n + 1
	for i := 0; i < total; i++ {
		if j, ok := novaJump(s.coords[i], k); ok && i < j {
			s.linkPorts(i, jump, j, jump)
		}
	}
	return s.build()
}

// novaJump returns the index of the jump-over partner of the node at c in
// a k-ary NovaCube, ok = false when the node has none (odd k, some
// coordinate k−1).
func novaJump(c []int, k int) (int, bool) {
	m, half := k, k/2
	if k%2 == 1 {
		m = k - 1
	}
	j, stride := 0, 1
	for _, a := range c {
		if a >= m {
			return 0, false
		}
		j += ((a + half) % m) * stride
		stride *= k
	}
	return j, true
}

func init() {
	register(Generator{
		Kind:    "novacube",
		Short:   "NovaCube: k-ary n-cube plus a jump-over cable to each node's antipode (seed 004)",
		Example: "--k 8 --n 2 --hosts 1",
		Params: []Param{
			{"k", "8", "nodes per dimension (>= 3; odd k: jump cables on the (k−1)-ary sub-cube)"},
			{"n", "2", "dimensions"},
			{"hosts", "1", "hosts per switch"},
		},
		Build: func(v Values) (*Topology, error) {
			k, n, h := v.Int("k"), v.Int("n"), v.Int("hosts")
			if err := v.Err(); err != nil {
				return nil, err
			}
			return NovaCube(k, n, h)
		},
	})
}
