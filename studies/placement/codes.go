package placement

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Sentinel errors callers branch on.
var (
	// ErrNoCode: no known perfect Lee code for these n and t (Table 1 of
	// the seed: 1D any t, 2D any t, 3D only t = 1).
	ErrNoCode = errors.New("placement: no perfect Lee code known")
	// ErrNoPerfect: a perfect placement needs p to divide every radix.
	ErrNoPerfect = errors.New("placement: no perfect placement")
	// ErrNoQP: the quasi-perfect scheme of the cited work (k I/O nodes in
	// a k×k torus) does not apply or finds no code.
	ErrNoQP = errors.New("placement: no quasi-perfect k-resource placement")
	// ErrBadParam: an out-of-range t, W or method.
	ErrBadParam = errors.New("placement: bad parameter")
)

// Placement is a set of I/O nodes in a torus.
type Placement struct {
	Torus  *Torus
	Method string // one of Methods, or rqp-delete / perfect-add … (WithCount)
	T      int    // design distance t (0 for base)
	IO     []int  // I/O node indices, increasing
}

// IsIO returns a membership table of the I/O nodes.
func (p *Placement) IsIO() []bool {
	is := make([]bool, p.Torus.N())
	for _, v := range p.IO {
		is[v] = true
	}
	return is
}

// maxT bounds the design distance (no torus of MaxNodes nodes needs more).
const maxT = 1 << 10

// CheckMatrix returns the check matrix H (for the address (x_{n−1}, …,
// x_0)) and the modulus p = SphereVolume(n, t) of the perfect distance-t
// Lee code in n dimensions: H = (1) in 1D, (1, 2t+1) in 2D, (1, 2, 3) in 3D
// with t = 1 (SEEDS.md's reading of §3.1.1 and §3.1.5; the text's 2D
// (2t², t) is a typo).
func CheckMatrix(n, t int) ([]int, int, error) {
	if t < 1 || t > maxT {
		return nil, 0, fmt.Errorf("%w: t = %d, expected 1..%d", ErrBadParam, t, maxT)
	}
	switch {
	case n == 1:
		return []int{1}, 2*t + 1, nil
	case n == 2:
		return []int{1, 2*t + 1}, SphereVolume(2, t), nil
	case n == 3 && t == 1:
		return []int{1, 2, 3}, 7, nil
	}
	return nil, 0, fmt.Errorf("%w for n = %d, t = %d (only 1D, 2D, and 3D with t = 1)", ErrNoCode, n, t)
}

// syndrome returns X·Hᵀ mod p for coordinates c (c[0] = x_0).
func syndrome(c, h []int, p int) int {
	n, s := len(c), 0
	for j, hj := range h {
		s += hj * c[n-1-j]
	}
	return ((s % p) + p) % p
}

// codewordsIn lists the nodes of t whose coordinates, read in a torus of
// radices q (q_i >= k_i), satisfy X·Hᵀ ≡ 0 (mod p). With q = K this is the
// code itself; with larger q it is the code of T_q cut to x_i < k_i.
func codewordsIn(t *Torus, h []int, p int) []int {
	var out []int
	c := make([]int, t.Dims())
	for i := 0; i < t.N(); i++ {
		if syndrome(t.Coord(i, c), h, p) == 0 {
			out = append(out, i)
		}
	}
	return out
}

// Perfect returns the perfect distance-t placement (§3.1.1): every node is
// within t of exactly one I/O node. It needs p | k_i for every i.
func Perfect(t *Torus, dist int) (*Placement, error) {
	h, p, err := CheckMatrix(t.Dims(), dist)
	if err != nil {
		return nil, err
	}
	for i, k := range t.K {
		if k%p != 0 {
			return nil, fmt.Errorf("%w: radix %d of dimension %d is not a multiple of p = %d (use rqp)", ErrNoPerfect, k, i, p)
		}
	}
	return &Placement{Torus: t, Method: "perfect", T: dist, IO: codewordsIn(t, h, p)}, nil
}

// RQP returns the relaxed quasi-perfect distance-t placement (§3.1.2–
// 3.1.3): the perfect code of T_q, q_i = ⌈k_i/p⌉·p, cut to x_i < k_i; it is
// the perfect placement when p divides every radix. Special case (§3.1.5):
// an even radix with k_i mod p = 1 would put I/O nodes at x_i = 0 and
// x_i = k_i − 1 next to each other across the wrap, so that dimension is
// halved, placed, and replicated twice. An odd radix with k_i mod p = 1
// cannot be halved; its wrap-adjacent pairs remain (MinIODistance shows
// them).
func RQP(t *Torus, dist int) (*Placement, error) {
	h, p, err := CheckMatrix(t.Dims(), dist)
	if err != nil {
		return nil, err
	}
	half := make([]int, t.Dims())
	halved := false
	for i, k := range t.K {
		half[i] = k
		if k%p == 1 && k%2 == 0 && k >= 4 {
			half[i], halved = k/2, true
		}
	}
	if halved {
		sub, err := NewTorus(half...)
		if err != nil {
			return nil, err
		}
		sp, err := RQP(sub, dist)
		if err != nil {
			return nil, err
		}
		is := sp.IsIO()
		var io []int
		c := make([]int, t.Dims())
		for i := 0; i < t.N(); i++ {
			if is[sub.Index(t.Coord(i, c))] {
				io = append(io, i)
			}
		}
		return &Placement{Torus: t, Method: "rqp", T: dist, IO: io}, nil
	}
	return &Placement{Torus: t, Method: "rqp", T: dist, IO: codewordsIn(t, h, p)}, nil
}

// Base returns the conventional edge-plane placement (§2.1.3, Fig. 1): W
// I/O nodes on the plane x_{n−1} = 0 (the first nodes in index order),
// spread evenly along it when W is smaller than the plane; further planes
// x_{n−1} = 1, 2, … fill when W is larger. W = 0 means one full plane.
func Base(t *Torus, w int) (*Placement, error) {
	plane := t.N() / t.K[t.Dims()-1]
	if w == 0 {
		w = plane
	}
	if w < 0 || w > t.N() {
		return nil, fmt.Errorf("%w: W = %d I/O nodes, expected 0..%d", ErrBadParam, w, t.N())
	}
	full := w / plane
	var io []int
	for i := 0; i < full*plane; i++ {
		io = append(io, i)
	}
	rest := w - full*plane
	for m := 0; m < rest; m++ {
		io = append(io, full*plane+m*plane/rest)
	}
	return &Placement{Torus: t, Method: "base", IO: io}, nil
}

// Methods lists the names Build accepts.
var Methods = []string{"perfect", "rqp", "qp", "qp-cut", "qp-greedy", "base"}

// Build dispatches by method name: perfect, rqp, qp, qp-cut, qp-greedy
// (with t) or base (with w).
func Build(t *Torus, method string, dist, w int) (*Placement, error) {
	switch method {
	case "perfect":
		return Perfect(t, dist)
	case "rqp":
		return RQP(t, dist)
	case "qp":
		return QP(t, dist)
	case "qp-cut":
		return QPCut(t, dist)
	case "qp-greedy":
		return QPGreedy(t, dist)
	case "base":
		return Base(t, w)
	}
	return nil, fmt.Errorf("%w: method %q, expected %s", ErrBadParam, method, strings.Join(Methods, ", "))
}

// Stats summarises a placement's geometry.
type Stats struct {
	IO            int   // I/O nodes
	Bound         int   // ⌈N/p⌉ for the design t (0 without one)
	CoverRadius   int   // max over nodes of the distance to the nearest I/O node
	MinIODistance int   // least Lee distance between two I/O nodes (0 with < 2)
	Nearest       []int // Nearest[d]: compute nodes whose nearest I/O node is at d
}

// Stats computes the placement's statistics. O(N·n) for distances
// (multi-source BFS) plus O(|IO|²·n).
func (p *Placement) Stats() Stats {
	t := p.Torus
	s := Stats{IO: len(p.IO)}
	if p.T > 0 {
		s.Bound = t.MinBound(p.T)
	}
	near := p.nearest()
	is := p.IsIO()
	for i, d := range near {
		if d < 0 {
			continue
		}
		s.CoverRadius = max(s.CoverRadius, d)
		if is[i] {
			continue
		}
		for len(s.Nearest) <= d {
			s.Nearest = append(s.Nearest, 0)
		}
		s.Nearest[d]++
	}
	for a := 0; a < len(p.IO); a++ {
		for b := a + 1; b < len(p.IO); b++ {
			if d := t.Dist(p.IO[a], p.IO[b]); s.MinIODistance == 0 || d < s.MinIODistance {
				s.MinIODistance = d
			}
		}
	}
	return s
}

// nearest returns every node's distance to the nearest I/O node (-1 with
// no I/O nodes), by a breadth-first search from all of them at once.
func (p *Placement) nearest() []int {
	t := p.Torus
	dist := make([]int, t.N())
	for i := range dist {
		dist[i] = -1
	}
	queue := make([]int, 0, t.N())
	for _, v := range p.IO {
		dist[v] = 0
		queue = append(queue, v)
	}
	c := make([]int, t.Dims())
	for h := 0; h < len(queue); h++ {
		u := queue[h]
		t.Coord(u, c)
		for d := range c {
			for _, s := range [2]int{1, -1} {
				c[d] += s
				v := t.Index(c)
				c[d] -= s
				if dist[v] < 0 {
					dist[v] = dist[u] + 1
					queue = append(queue, v)
				}
			}
		}
	}
	return dist
}

// sorted returns p with IO sorted and deduplicated.
func (p *Placement) sorted() *Placement {
	slices.Sort(p.IO)
	p.IO = slices.Compact(p.IO)
	return p
}
