package topo

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// Torus builds a mixed-radix torus (k-ary n-cube generalised to sizes
// k_0 × k_1 × …, Dally and Towles, "Principles and Practices of
// Interconnection Networks", 2004, Section 5.1) or, with mesh, the
// corresponding mesh, with hosts per switch. dims is not retained.
//
// Choices:
//   - A dimension of size 1 is rejected: it adds no switches and no cables
//     and would only give every switch a coordinate that is always 0.
//   - In a torus, a dimension of size 2 gets one cable between the pair,
//     not two parallel ones (the "wrap-around" cable would join the same
//     two switches again); such a dimension is then the same as in a mesh.
//     A torus of sizes 2×2×…×2 is therefore the hypercube.
//
// Switch s has coordinates x with s = x_0 + k_0·(x_1 + k_1·(x_2 + …))
// (dimension 0 fastest); Coords[s] = x and the label is "(x_0,x_1,…)", so a
// dimension-order engine can recover the coordinates from the switch
// description ("torus (1,2,3)"). Ports are fixed per dimension: hosts on
// 1..hosts, then per dimension i in order one port if k_i = 2, else two:
// the "+" port (to x_i+1) and the "−" port (to x_i−1). Mesh switches on the
// boundary leave the missing direction's port free. Radix = hosts + Σ
// (1 if k_i = 2 else 2).
//
// Bisection is the number of cables crossing the cut that halves the
// largest dimension (the first of equal largest ones) into ⌊K/2⌋ and ⌈K/2⌉
// slices: with P = (number of switches)/K, 2P for a torus with K ≥ 3 and P
// for a mesh or K = 2. For even K this is the minimum bisection; for odd K
// the two sides differ by P switches and no straight cut balances them, so
// the value is that of the near-bisection.
func Torus(dims []int, hosts int, mesh bool) (*Topology, error) {
	kind := "torus"
	if mesh {
		kind = "mesh"
	}
	if len(dims) == 0 {
		return nil, paramError(kind, "no dimensions, expected sizes such as 4x4x4")
	}
	if hosts < 0 {
		return nil, paramError(kind, "%d hosts per switch, expected >= 0", hosts)
	}
	dims = append([]int(nil), dims...)
	radix, n := hosts, 1
	base := make([]int, len(dims)) // first port of each dimension
	for i, k := range dims {
		if k < 2 {
			return nil, paramError(kind, "dimension %d has size %d, expected >= 2 (size-1 dimensions are rejected)", i, k)
		}
		base[i] = radix + 1
		if k == 2 {
			radix++
		} else {
			radix += 2
		}
		n = mulCap(n, k)
	}
	if radix > fabric.MaxPorts {
		return nil, paramError(kind, "%d hosts and %d dimensions need %d ports, expected at most %d", hosts, len(dims), radix, fabric.MaxPorts)
	}
	if err := checkLIDBudget(kind, n, mulCap(n, hosts)); err != nil {
		return nil, err
	}

	s := newSpec(kind, fmt.Sprintf("dims=%s hosts=%d", fmtInts(dims, "x"), hosts), radix)
	s.coords = make([][]int, n)
	flat := make([]int, n*len(dims)) // one backing array for all coordinates
	for sw := range n {
		x := flat[sw*len(dims) : (sw+1)*len(dims) : (sw+1)*len(dims)]
		for i, v := 0, sw; i < len(dims); i++ {
			x[i] = v % dims[i]
			v /= dims[i]
		}
		s.coords[sw] = x
		s.addSwitch(coordLabel(x), hosts)
	}
	for sw := range n {
		stride := 1
		for i, k := range dims {
			x := s.coords[sw][i]
			switch {
			case k == 2 && x == 0:
				s.linkPorts(sw, base[i], sw+stride, base[i])
			case k >= 3 && x+1 < k:
				s.linkPorts(sw, base[i], sw+stride, base[i]+1)
			case k >= 3 && !mesh: // x = k-1: wrap-around cable to x = 0
				s.linkPorts(sw, base[i], sw-(k-1)*stride, base[i]+1)
			}
			stride *= k
		}
	}
	big := 0
	for i, k := range dims {
		if k > dims[big] {
			big = i
		}
	}
	s.bisection = n / dims[big]
	if !mesh && dims[big] >= 3 {
		s.bisection *= 2
	}
	return s.build()
}

func init() {
	torusGen := func(kind string, mesh bool) Generator {
		short := "mixed-radix torus (k-ary n-cube); a size-2 dimension gets one cable"
		example := "--dims 4x4x4 --hosts 1"
		if mesh {
			short = "mixed-radix mesh"
			example = "--dims 8x4 --hosts 2"
		}
		return Generator{
			Kind:    kind,
			Short:   short,
			Example: example,
			Params: []Param{
				{"dims", "4x4x4", "sizes of the dimensions, e.g. 8x4 or 3,5,7 (each >= 2)"},
				{"hosts", "1", "hosts per switch"},
			},
			Build: func(v Values) (*Topology, error) {
				d, h := v.Ints("dims"), v.Int("hosts")
				if err := v.Err(); err != nil {
					return nil, err
				}
				return Torus(d, h, mesh)
			},
		}
	}
	register(torusGen("torus", false))
	register(torusGen("mesh", true))
}
