package placement

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxNodes bounds the tori the package accepts (the addition procedure is
// quadratic in the node count).
const MaxNodes = 1 << 16

// ErrBadTorus is wrapped by errors about torus sizes.
var ErrBadTorus = errors.New("placement: bad torus")

// Torus is a mixed-radix torus T_{k_0×k_1×…}; node i has coordinates
// x with i = x_0 + k_0·(x_1 + k_1·(x_2 + …)) (dimension 0 fastest, as
// topo.Torus numbers switches).
type Torus struct {
	K []int // radix of each dimension, each >= 2
	n int   // nodes
}

// NewTorus checks the radices (each >= 2, at most MaxNodes nodes).
func NewTorus(k ...int) (*Torus, error) {
	if len(k) == 0 {
		return nil, fmt.Errorf("%w: no dimensions", ErrBadTorus)
	}
	n := 1
	for i, v := range k {
		if v < 2 {
			return nil, fmt.Errorf("%w: dimension %d has radix %d, expected >= 2", ErrBadTorus, i, v)
		}
		n *= v
		if n > MaxNodes {
			return nil, fmt.Errorf("%w: more than %d nodes", ErrBadTorus, MaxNodes)
		}
	}
	return &Torus{K: append([]int(nil), k...), n: n}, nil
}

// ParseDims reads "8x8" or "4,4,4" into a Torus.
func ParseDims(s string) (*Torus, error) {
	var k []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == 'x' || r == 'X' || r == ',' }) {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%w: dims %q: %q is not a number", ErrBadTorus, s, f)
		}
		k = append(k, v)
	}
	return NewTorus(k...)
}

// N returns the number of nodes.
func (t *Torus) N() int { return t.n }

// Dims returns the number of dimensions.
func (t *Torus) Dims() int { return len(t.K) }

// String formats the sizes as "8x8".
func (t *Torus) String() string {
	p := make([]string, len(t.K))
	for i, v := range t.K {
		p[i] = strconv.Itoa(v)
	}
	return strings.Join(p, "x")
}

// Coord writes the coordinates of node i into c (len Dims()) and returns it.
func (t *Torus) Coord(i int, c []int) []int {
	if c == nil {
		c = make([]int, len(t.K))
	}
	for d, k := range t.K {
		c[d] = i % k
		i /= k
	}
	return c
}

// Index returns the node at coordinates c (taken mod the radices).
func (t *Torus) Index(c []int) int {
	i := 0
	for d := len(t.K) - 1; d >= 0; d-- {
		k := t.K[d]
		i = i*k + ((c[d]%k)+k)%k
	}
	return i
}

// Label formats node i's coordinates as "(x_0,x_1,…)".
func (t *Torus) Label(i int) string {
	c := t.Coord(i, nil)
	p := make([]string, len(c))
	for d, v := range c {
		p[d] = strconv.Itoa(v)
	}
	return "(" + strings.Join(p, ",") + ")"
}

// leeWeight is min(v mod k, k − v mod k) (§2.3.1).
func leeWeight(v, k int) int {
	v = ((v % k) + k) % k
	return min(v, k-v)
}

// LeeDistance returns Σ_i min((a_i − b_i) mod k_i, (b_i − a_i) mod k_i)
// (eq. 2.2, mixed radix §2.3.2), the hop distance in the torus.
func LeeDistance(k, a, b []int) int {
	s := 0
	for i := range k {
		s += leeWeight(a[i]-b[i], k[i])
	}
	return s
}

// Dist returns the Lee distance between nodes i and j. O(n).
func (t *Torus) Dist(i, j int) int {
	s := 0
	for _, k := range t.K {
		s += leeWeight(i%k-j%k, k)
		i /= k
		j /= k
	}
	return s
}

// lineDist returns the Lee distance between i and j ignoring dimension d:
// 0 when j lies on i's line along d (the "X-line" for d = 0, §4.3).
func (t *Torus) lineDist(i, j, d int) int {
	s := 0
	for e, k := range t.K {
		if e != d {
			s += leeWeight(i%k-j%k, k)
		}
		i /= k
		j /= k
	}
	return s
}

// binom returns C(n, r) for small arguments.
func binom(n, r int) int {
	if r < 0 || r > n {
		return 0
	}
	v := 1
	for i := 1; i <= r; i++ {
		v = v * (n - r + i) / i
	}
	return v
}

// SphereVolume returns the number of points within Lee distance t of a
// point in n dimensions (radix > 2t everywhere): the packing-sphere volume
// p = 1 + Σ_{i=1..min(t,n)} 2^i·C(n,i)·C(t,i) (eq. 3.2).
func SphereVolume(n, t int) int {
	if n < 1 || t < 0 {
		return 0
	}
	p := 1
	for i := 1; i <= min(t, n); i++ {
		p += (1 << i) * binom(n, i) * binom(t, i)
	}
	return p
}

// MinBound returns ⌈N/p⌉, the lower bound M on the I/O nodes of a
// distance-t placement (eq. 3.1).
func (t *Torus) MinBound(dist int) int {
	p := SphereVolume(len(t.K), dist)
	return (t.n + p - 1) / p
}
