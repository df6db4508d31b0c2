package flitsim

import (
	"fmt"

	"github.com/nuesm/nuesm/studies/novacube"
)

// PORA (seed 004 §5.1) per hop, the readings of package novacube (whose
// next-hop relation is unexported; TestPORAMeanHops checks these hops
// against novacube.ExpectedAPL). Node i of the Cube is switch i.

// PORA packet modes (packet.pmode).
const (
	poraSrc  = iota // at the source: step 1, jump allowed
	poraSrcJ        // after a jump at the source: step 1 over regular links
	poraQuad        // inside a quadrant (§5.1.2)
)

// poraTables holds the cube, its channels per (node, slot) and, for the
// minimal reading, all BFS distances.
type poraTables struct {
	c       *novacube.Cube
	k, dims int
	v       novacube.Variant
	slot    []int32 // node*(2n+1)+slot -> channel, -1 none
	dist    []int16 // Minimal: dist[d*N+u]
	nodes   int
}

// poraHopC is one candidate hop.
type poraHopC struct {
	slot       int
	p          float64
	mode, quad uint8
}

func newPoraTables(n *Network, c *novacube.Cube, v novacube.Variant) (*poraTables, error) {
	if c == nil {
		return nil, fmt.Errorf("PORA needs a Cube")
	}
	if v != novacube.Literal && v != novacube.Minimal {
		return nil, fmt.Errorf("PORA variant %q, expected %s or %s", v, novacube.Literal, novacube.Minimal)
	}
	N := c.Nodes()
	if N != n.g.NumSwitches() || c.N > 6 {
		return nil, fmt.Errorf("cube of %d nodes (%d dimensions) for %d switches", N, c.N, n.g.NumSwitches())
	}
	if v == novacube.Minimal && N > 2048 {
		return nil, fmt.Errorf("minimal PORA keeps all distances: %d nodes exceed 2048", N)
	}
	pt := &poraTables{c: c, k: c.K, dims: c.N, v: v, nodes: N}
	W := 2*c.N + 1
	pt.slot = make([]int32, N*W)
	g := n.g
	used := make([]bool, g.NumChannels())
	for u := 0; u < N; u++ {
		for s := 0; s < W; s++ {
			pt.slot[u*W+s] = -1
			w := pt.dest(u, s)
			if w < 0 {
				continue
			}
			for ch := g.Off[u]; ch < g.Off[u+1]; ch++ {
				if int(g.Head[ch]) == w && !used[ch] {
					pt.slot[u*W+s], used[ch] = ch, true
					break
				}
			}
			if pt.slot[u*W+s] < 0 {
				return nil, fmt.Errorf("the fabric has no cable from switch %d to %d (slot %d): not this cube", u, w, s)
			}
		}
	}
	if v == novacube.Minimal {
		pt.dist = make([]int16, N*N)
		for d := 0; d < N; d++ {
			for u, x := range c.BFS(d) {
				pt.dist[d*N+u] = int16(x)
			}
		}
	}
	return pt, nil
}

func (pt *poraTables) coord(u, i int) int {
	for ; i > 0; i-- {
		u /= pt.k
	}
	return u % pt.k
}

// dest is the node at slot s of u: 2i (+1) and 2i+1 (−1) in dimension
// i, 2n the jump link (-1 when u has none).
func (pt *poraTables) dest(u, s int) int {
	if s == 2*pt.dims {
		return pt.c.Jump(u)
	}
	i, dir := s/2, 1-2*(s%2)
	stride := 1
	for j := 0; j < i; j++ {
		stride *= pt.k
	}
	x := pt.coord(u, i)
	return u + ((x+dir+pt.k)%pt.k-x)*stride
}

// minDir is novacube's shorter direction with its tie rule.
func minDir(a, b, k, par int) int {
	f := (b - a + k) % k
	if 2*f < k || (2*f == k && par%2 == 0) {
		return 1
	}
	return -1
}

func (pt *poraTables) dorSlot(u, d, par, quad int, useQuad bool) int {
	for i := 0; i < pt.dims; i++ {
		a, b := pt.coord(u, i), pt.coord(d, i)
		if a == b {
			continue
		}
		s := minDir(a, b, pt.k, par)
		if useQuad {
			s = 1 - 2*(quad>>i&1)
		}
		return 2*i + (1-s)/2
	}
	return -1
}

func (pt *poraTables) quadOf(u, d, par, s int) uint8 {
	v := pt.dest(u, s)
	q := 0
	for i := 0; i < pt.dims; i++ {
		dir := 1
		switch {
		case i == s/2:
			dir = 1 - 2*(s%2)
		case pt.coord(v, i) != pt.coord(d, i):
			dir = minDir(pt.coord(v, i), pt.coord(d, i), pt.k, par)
		}
		if dir < 0 {
			q |= 1 << i
		}
	}
	return uint8(q)
}

func (pt *poraTables) inBox(u, j, d, quad int) bool {
	k := pt.k
	for i := 0; i < pt.dims; i++ {
		s := 1 - 2*(quad>>i&1)
		rem := ((pt.coord(d, i)-pt.coord(u, i))*s%k + k) % k
		disp := ((pt.coord(j, i)-pt.coord(u, i))*s%k + k) % k
		if disp > rem {
			return false
		}
	}
	return true
}

// far returns the distance Δ from w to d the variant weighs by.
func (pt *poraTables) far(w, d int) int {
	if pt.dist != nil {
		return int(pt.dist[d*pt.nodes+w])
	}
	return pt.c.Lee(w, d)
}

// next fills hs with the hops of a packet at u (u != d) and returns them,
// weighted ∝ 1/Δ² (a hop onto d is taken for sure).
func (pt *poraTables) next(hs []poraHopC, u, d, mode, quad int) []poraHopC {
	par := 0
	for x := d; x > 0; x /= pt.k {
		par += x % pt.k
	}
	J, jump := 2*pt.dims, pt.c.Jump(u)
	hs = hs[:0]
	if pt.v == novacube.Minimal {
		du := pt.far(u, d)
		on := func(s int) bool { w := pt.dest(u, s); return w >= 0 && pt.far(w, d) == du-1 }
		if mode == poraQuad {
			if s := pt.dorSlot(u, d, par, 0, false); on(s) {
				hs = append(hs, poraHopC{slot: s, mode: poraQuad})
			}
			if on(J) {
				hs = append(hs, poraHopC{slot: J, mode: poraQuad})
			}
		}
		if len(hs) == 0 {
			for s := 0; s < J; s++ {
				if on(s) {
					hs = append(hs, poraHopC{slot: s, mode: poraQuad})
				}
			}
			if mode == poraSrc && on(J) {
				hs = append(hs, poraHopC{slot: J, mode: poraSrcJ})
			}
		}
	} else if mode == poraQuad {
		dor := pt.dorSlot(u, d, par, quad, true)
		q := uint8(quad)
		if jump >= 0 && pt.inBox(u, jump, d, quad) && pt.c.Lee(jump, d) < pt.c.Lee(pt.dest(u, dor), d) {
			hs = append(hs, poraHopC{slot: J, mode: poraQuad, quad: q}, poraHopC{slot: dor, mode: poraQuad, quad: q})
		} else {
			return append(hs, poraHopC{slot: dor, p: 1, mode: poraQuad, quad: q})
		}
	} else {
		for s := 0; s < J; s++ {
			hs = append(hs, poraHopC{slot: s, mode: poraQuad, quad: pt.quadOf(u, d, par, s)})
		}
		if mode == poraSrc && jump >= 0 {
			hs = append(hs, poraHopC{slot: J, mode: poraSrcJ})
		}
	}
	sum := 0.0
	for i := range hs {
		w := pt.dest(u, hs[i].slot)
		if w == d {
			hs[0], hs = hs[i], hs[:1]
			hs[0].p = 1
			return hs
		}
		l := float64(pt.far(w, d))
		hs[i].p = 1 / (l * l)
		sum += hs[i].p
	}
	for i := range hs {
		hs[i].p /= sum
	}
	return hs
}

// poraHop picks pk's PORA hop at switch x.
func (s *sim) poraHop(x int32, pk *packet) int32 {
	pt := s.n.pol.pora
	var buf [16]poraHopC
	hs := pt.next(buf[:0], int(x), int(s.n.nodeSw[pk.dst]), int(pk.pmode), int(pk.pquad))
	if len(hs) == 0 {
		return -1
	}
	h := hs[len(hs)-1]
	if len(hs) > 1 {
		r := s.swRng[x].Float64()
		for _, c := range hs {
			if r -= c.p; r < 0 {
				h = c
				break
			}
		}
	}
	pk.pmode, pk.pquad = uint8(h.mode), h.quad
	return pt.slot[int(x)*(2*pt.dims+1)+h.slot]
}
