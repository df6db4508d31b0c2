package novacube

import (
	"errors"
	"fmt"
)

// ErrParam is wrapped by errors about bad sizes.
var ErrParam = errors.New("novacube: bad parameter")

// maxNodes bounds the cubes the path-level analyses accept.
const maxNodes = 1 << 14

// Cube is a k-ary n-cube, with NovaCube's jump-over links when Nova is
// set (§4.1: each node to its antipode; odd k: on the (k−1)-ary sub-cube,
// as topo.NovaCube cables them). Node i has coordinates with dimension 0
// fastest, like the generators' switch order.
type Cube struct {
	K, N  int
	Nova  bool
	nodes int
	jump  []int32 // node -> jump partner, -1 none
}

// NewCube checks k >= 3, n >= 1 and the size.
func NewCube(k, n int, nova bool) (*Cube, error) {
	if k < 3 || n < 1 {
		return nil, fmt.Errorf("%w: k = %d, n = %d, expected k >= 3, n >= 1", ErrParam, k, n)
	}
	N := 1
	for i := 0; i < n; i++ {
		N *= k
		if N > maxNodes {
			return nil, fmt.Errorf("%w: %d^%d nodes exceed %d", ErrParam, k, n, maxNodes)
		}
	}
	c := &Cube{K: k, N: n, Nova: nova, nodes: N, jump: make([]int32, N)}
	m, half := k, k/2
	if k%2 == 1 {
		m = k - 1
	}
	x := make([]int, n)
	for u := 0; u < N; u++ {
		c.jump[u] = -1
		if !nova {
			continue
		}
		c.coords(u, x)
		j, stride, ok := 0, 1, true
		for _, a := range x {
			if a >= m {
				ok = false
				break
			}
			j += ((a + half) % m) * stride
			stride *= k
		}
		if ok {
			c.jump[u] = int32(j)
		}
	}
	return c, nil
}

// Nodes returns k^n.
func (c *Cube) Nodes() int { return c.nodes }

func (c *Cube) coords(u int, x []int) []int {
	for i := range x {
		x[i] = u % c.K
		u /= c.K
	}
	return x
}

func (c *Cube) coord(u, i int) int {
	for ; i > 0; i-- {
		u /= c.K
	}
	return u % c.K
}

// stride returns k^i.
func (c *Cube) stride(i int) int {
	s := 1
	for ; i > 0; i-- {
		s *= c.K
	}
	return s
}

// move returns the node one step from u in dimension i, direction s (+1
// or −1).
func (c *Cube) move(u, i, s int) int {
	x := c.coord(u, i)
	y := (x + s + c.K) % c.K
	return u + (y-x)*c.stride(i)
}

// Jump returns u's jump-over partner, or -1.
func (c *Cube) Jump(u int) int { return int(c.jump[u]) }

// Lee returns the torus distance between u and v.
func (c *Cube) Lee(u, v int) int {
	d := 0
	for i := 0; i < c.N; i++ {
		a := (u%c.K - v%c.K + c.K) % c.K
		d += min(a, c.K-a)
		u /= c.K
		v /= c.K
	}
	return d
}

// slots is the number of output channels per node: 2n ring ports and the
// jump port. Channel id = node·slots + slot.
func (c *Cube) slots() int { return 2*c.N + 1 }

// dest returns the node at the far end of slot s of u (-1: no jump link).
func (c *Cube) dest(u, s int) int {
	if s == 2*c.N {
		return int(c.jump[u])
	}
	return c.move(u, s/2, 1-2*(s%2))
}

// BFS returns the hop distances from src over ring and jump links.
func (c *Cube) BFS(src int) []int {
	d := make([]int, c.nodes)
	for i := range d {
		d[i] = -1
	}
	d[src] = 0
	q := []int{src}
	for h := 0; h < len(q); h++ {
		u := q[h]
		for s := 0; s < c.slots(); s++ {
			if v := c.dest(u, s); v >= 0 && d[v] < 0 {
				d[v] = d[u] + 1
				q = append(q, v)
			}
		}
	}
	return d
}

// minDir returns the shorter direction (+1/−1) from a to b in a ring of k
// (a != b); a tie at k/2 goes +1 when par is even, as DOR and the pora
// engine break it (par: the destination's coordinate sum).
func minDir(a, b, k, par int) int {
	f := (b - a + k) % k
	if 2*f < k || (2*f == k && par%2 == 0) {
		return 1
	}
	return -1
}

func (c *Cube) coordSum(u int) int {
	s := 0
	for ; u > 0; u /= c.K {
		s += u % c.K
	}
	return s
}
