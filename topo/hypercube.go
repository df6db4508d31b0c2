package topo

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// Hypercube builds the dim-dimensional binary hypercube (Seitz, "The cosmic
// cube", CACM 28(1), 1985): 2^dim switches, switch i cabled to i XOR 2^j for
// every bit j, with hosts per switch. Coords[i] holds the bits of i (bit j
// as coordinate j) and the label is "(b_0,b_1,…)", exactly as
// Torus(2×…×2) names its switches; ports: hosts on 1..hosts, bit j on port
// hosts+1+j. Radix = dim + hosts, diameter dim, Bisection 2^(dim−1).
func Hypercube(dim, hosts int) (*Topology, error) {
	const kind = "hypercube"
	if dim < 1 {
		return nil, paramError(kind, "dimension %d, expected >= 1", dim)
	}
	if hosts < 0 {
		return nil, paramError(kind, "%d hosts per switch, expected >= 0", hosts)
	}
	if dim+hosts > fabric.MaxPorts {
		return nil, paramError(kind, "dimension %d and %d hosts need %d ports, expected at most %d", dim, hosts, dim+hosts, fabric.MaxPorts)
	}
	if 1<<min(dim, 30) > fabric.MaxUnicastLID {
		return nil, paramError(kind, "dimension %d: 2^%d switches need more than the %d unicast LIDs", dim, dim, fabric.MaxUnicastLID)
	}
	n := 1 << dim
	if err := checkLIDBudget(kind, n, mulCap(n, hosts)); err != nil {
		return nil, err
	}
	s := newSpec(kind, fmt.Sprintf("dim=%d hosts=%d", dim, hosts), dim+hosts)
	s.coords = make([][]int, n)
	for i := range n {
		x := make([]int, dim)
		for j := range dim {
			x[j] = i >> j & 1
		}
		s.coords[i] = x
		s.addSwitch(coordLabel(x), hosts)
	}
	for i := range n {
		for j := range dim {
			if i>>j&1 == 0 {
				s.linkPorts(i, hosts+1+j, i|1<<j, hosts+1+j)
			}
		}
	}
	s.bisection = n / 2
	return s.build()
}

func init() {
	register(Generator{
		Kind:    "hypercube",
		Short:   "binary hypercube of 2^dim switches",
		Example: "--dim 4 --hosts 1",
		Params: []Param{
			{"dim", "4", "dimension (2^dim switches)"},
			{"hosts", "1", "hosts per switch"},
		},
		Build: func(v Values) (*Topology, error) {
			d, h := v.Int("dim"), v.Int("hosts")
			if err := v.Err(); err != nil {
				return nil, err
			}
			return Hypercube(d, h)
		},
	})
}
