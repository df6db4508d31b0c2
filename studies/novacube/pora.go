package novacube

// This file models PORA (§5.1) on a Cube: the literal procedure with its
// probabilities, a per-hop minimal variant, and the deterministic tables
// of the "pora" routing engine, as routing relations (every hop a packet
// may take next, given where it is and how it got there).

// Routing modes of a packet in flight.
const (
	modeSrc  = iota // at the source: step 1 (§5.1.1), jump allowed
	modeSrcJ        // after a jump at the source: step 1 again, regular links only
	modeQuad        // inside a quadrant (§5.1.2); the quadrant is kept apart
)

// Variant names a PORA reading.
type Variant string

// The readings the package models.
const (
	// Literal: step 1 picks any neighbour with probability ∝ 1/Δ² (Δ: Lee
	// distance to the destination; a neighbour that is the destination is
	// taken for sure); a regular neighbour fixes the quadrant (its own
	// direction in its dimension, the shorter way in the others, even the
	// long way round when the first hop moved away); after a jump step 1
	// repeats over regular links. In the quadrant, dimension order, and
	// the jump when its far end stays inside the quadrant's box and is
	// strictly closer (Lee) than the DOR hop, chosen between the two by
	// eq. 12.
	Literal Variant = "literal"
	// Minimal: the per-hop minimal reading: every choice of Literal kept
	// to hops on a shortest NovaCube path (Δ: NovaCube distance). Step 1
	// picks among the neighbours on a shortest path; then the DOR hop
	// (shorter way per dimension) and the jump, whichever are on a
	// shortest path, by eq. 12; where neither is (odd k), any neighbour on
	// a shortest path. Its average path length is the BFS one.
	Minimal Variant = "minimal"
	// Quadrant: Literal with Δ the Lee distance inside each quadrant: a
	// regular neighbour of the source is weighed by the hops its quadrant
	// (fixed at the source: the hop's direction in its dimension, the
	// shorter way in the others) still needs to d, the long way round
	// included; in the quadrant the jump is compared with the DOR hop by
	// the same distance and stays inside the box.
	Quadrant Variant = "quadrant"
	// Reducing: Literal with step 1 restricted to the neighbours strictly
	// closer (Lee) to d than the node itself, the jump included, so the
	// quadrant is always the shorter way round.
	Reducing Variant = "reducing"
	// Tables: the deterministic tables of the "pora" engine: the jump when
	// strictly closer (Lee) than the DOR hop, else the DOR hop.
	Tables Variant = "tables"
)

// Variants lists the readings in report order.
var Variants = []Variant{Literal, Quadrant, Reducing, Minimal, Tables}

// Readings lists the probabilistic readings of §5.1 (not the engine's
// tables).
var Readings = []Variant{Literal, Quadrant, Reducing, Minimal}

// hop is one possible next hop: the output slot, the probability, and the
// routing state after it.
type hop struct {
	slot int
	p    float64
	mode int
	quad int // quadrant: bit i set = direction −1 in dimension i
}

// router enumerates next hops for one destination: the one PORA
// next-hop relation, used by ExpectedAPL, the VC audit, the pora engine's
// tables and the simulator's per-hop policy.
type router struct {
	c    *Cube
	v    Variant
	d    int
	par  int   // coordinate sum of d (DOR tie rule)
	dist []int // BFS distances to d (Minimal)
}

func newRouter(c *Cube, d int, v Variant) *router {
	r := &router{c: c, v: v, d: d, par: c.coordSum(d)}
	if v == Minimal {
		r.dist = c.BFS(d) // links are symmetric: distances from d are to d
	}
	return r
}

// quadrantDOR reports whether the variant keeps the quadrant's
// directions after step 1 (else each dimension the shorter way).
func (r *router) quadrantDOR() bool {
	return r.v == Literal || r.v == Quadrant || r.v == Reducing
}

// dorSlot returns the DOR output slot of u towards d (u != d), each
// dimension the shorter way (Tables) or in the quadrant's direction.
func (r *router) dorSlot(u int, quad int, useQuad bool) int {
	c := r.c
	for i := 0; i < c.N; i++ {
		a, b := c.coord(u, i), c.coord(r.d, i)
		if a == b {
			continue
		}
		s := minDir(a, b, c.K, r.par)
		if useQuad {
			s = 1 - 2*(quad>>i&1)
		}
		return 2*i + (1-s)/2
	}
	return -1
}

// tableSlot is the Tables reading's one hop from u (u != d): the jump when
// its far end is strictly closer (Lee) than the DOR hop, else the DOR hop.
func (r *router) tableSlot(u int) int {
	c := r.c
	if jump := c.Jump(u); jump >= 0 && c.Lee(jump, r.d) < c.Lee(u, r.d)-1 {
		return 2 * c.N
	}
	return r.dorSlot(u, 0, false)
}

// quadOf returns the quadrant a packet enters by taking regular slot s of
// u: its direction in that dimension, the shorter way from the new node in
// the others.
func (r *router) quadOf(u, s int) int {
	c := r.c
	v := c.dest(u, s)
	q := 0
	for i := 0; i < c.N; i++ {
		dir := -1
		switch {
		case i == s/2:
			dir = 1 - 2*(s%2)
		case c.coord(v, i) != c.coord(r.d, i):
			dir = minDir(c.coord(v, i), c.coord(r.d, i), c.K, r.par)
		default:
			dir = 1
		}
		if dir < 0 {
			q |= 1 << i
		}
	}
	return q
}

// inBox reports whether the jump from u stays inside the quadrant's box:
// in every dimension its displacement, measured in the quadrant's
// direction, is at most what remains to d.
func (r *router) inBox(u, j, quad int) bool {
	c := r.c
	for i := 0; i < c.N; i++ {
		s := 1 - 2*(quad>>i&1)
		rem := ((c.coord(r.d, i)-c.coord(u, i))*s%c.K + c.K) % c.K
		disp := ((c.coord(j, i)-c.coord(u, i))*s%c.K + c.K) % c.K
		if disp > rem {
			return false
		}
	}
	return true
}

// next appends to hs[:0] the hops a packet at u (u != d) in the given
// state may take, with their probabilities; a hop onto d is the only one
// returned (probability 1).
func (r *router) next(hs []hop, u, mode, quad int) []hop {
	c := r.c
	hs = hs[:0]
	jump := c.Jump(u)
	switch {
	case r.v == Tables:
		return append(hs, hop{slot: r.tableSlot(u), p: 1, mode: modeQuad})
	case r.v == Minimal:
		return r.weigh(r.minimal(hs, u, mode), u)
	case mode == modeQuad:
		dor := r.dorSlot(u, quad, true)
		j := hop{slot: 2 * c.N, mode: modeQuad, quad: quad}
		if jump >= 0 && r.inBox(u, jump, quad) && r.far(jump, j) < r.far(c.dest(u, dor), j) {
			hs = append(hs, j, hop{slot: dor, mode: modeQuad, quad: quad})
			return r.weigh(hs, u)
		}
		return append(hs, hop{slot: dor, p: 1, mode: modeQuad, quad: quad})
	}
	here := c.Lee(u, r.d)
	for s := 0; s < 2*c.N; s++ {
		if r.v != Reducing || c.Lee(c.dest(u, s), r.d) < here {
			hs = append(hs, hop{slot: s, mode: modeQuad, quad: r.quadOf(u, s)})
		}
	}
	if mode == modeSrc && jump >= 0 && (r.v != Reducing || c.Lee(jump, r.d) < here) {
		hs = append(hs, hop{slot: 2 * c.N, mode: modeSrcJ})
	}
	return r.weigh(hs, u)
}

// minimal appends the hops of the Minimal variant, unweighted.
func (r *router) minimal(hs []hop, u, mode int) []hop {
	c := r.c
	on := func(s int) bool { w := c.dest(u, s); return w >= 0 && r.dist[w] == r.dist[u]-1 }
	if mode == modeQuad {
		if s := r.dorSlot(u, 0, false); on(s) {
			hs = append(hs, hop{slot: s, mode: modeQuad})
		}
		if on(2 * c.N) {
			hs = append(hs, hop{slot: 2 * c.N, mode: modeQuad})
		}
	}
	if len(hs) == 0 {
		for s := 0; s < 2*c.N; s++ {
			if on(s) {
				hs = append(hs, hop{slot: s, mode: modeQuad})
			}
		}
		if mode == modeSrc && on(2*c.N) {
			hs = append(hs, hop{slot: 2 * c.N, mode: modeSrcJ})
		}
	}
	return hs
}

// far returns the distance Δ from w to d the variant weighs hop h by: the
// NovaCube distance (Minimal), the hops left in h's quadrant (Quadrant,
// once the quadrant is chosen) or the Lee distance.
func (r *router) far(w int, h hop) int {
	switch {
	case r.dist != nil:
		return r.dist[w]
	case r.v == Quadrant && h.mode == modeQuad:
		return r.quadDist(w, h.quad)
	}
	return r.c.Lee(w, r.d)
}

// quadDist returns the hops from w to d moving only in quad's directions.
func (r *router) quadDist(w, quad int) int {
	c, t := r.c, 0
	for i := 0; i < c.N; i++ {
		s := 1 - 2*(quad>>i&1)
		t += ((c.coord(r.d, i)-c.coord(w, i))*s%c.K + c.K) % c.K
	}
	return t
}

// weigh sets eq. 12's probabilities ∝ 1/Δ²; a hop onto d is kept alone
// with probability 1.
func (r *router) weigh(hs []hop, u int) []hop {
	sum := 0.0
	for i := range hs {
		w := r.c.dest(u, hs[i].slot)
		if w == r.d {
			hs[0] = hs[i]
			hs[0].p = 1
			return hs[:1]
		}
		l := float64(r.far(w, hs[i]))
		hs[i].p = 1 / (l * l)
		sum += hs[i].p
	}
	for i := range hs {
		hs[i].p /= sum
	}
	return hs
}

// ExpectedAPL returns the average over ordered pairs of distinct nodes of
// the expected number of hops of variant v (exact: a recursion over the
// routing states, no sampling). O(N²·2^n·n) for Literal.
func ExpectedAPL(c *Cube, v Variant) float64 {
	total := 0.0
	N := c.Nodes()
	states := (2 + (1 << c.N)) * N
	memo := make([]float64, states)
	done := make([]bool, states)
	for d := 0; d < N; d++ {
		r := newRouter(c, d, v)
		clear(done)
		var exp func(u, mode, quad int) float64
		exp = func(u, mode, quad int) float64 {
			if u == d {
				return 0
			}
			key := mode*N + u
			if mode == modeQuad {
				key = (2+quad)*N + u
			}
			if done[key] {
				return memo[key]
			}
			e := 1.0
			for _, h := range r.next(nil, u, mode, quad) {
				if h.p > 0 {
					e += h.p * exp(c.dest(u, h.slot), h.mode, h.quad)
				}
			}
			memo[key], done[key] = e, true
			return e
		}
		for s := 0; s < N; s++ {
			if s != d {
				total += exp(s, modeSrc, 0)
			}
		}
	}
	return total / float64(N*(N-1))
}
