package placement

import "fmt"

// The seed names quasi-perfect (QP) placement (Def. 2: every compute node
// within t+1, the radius-t spheres of the I/O nodes disjoint) as RQP's
// baseline but cites its construction ([3], [12]) instead of giving it.
// Three readings are offered side by side:
//
//   - QP: the scheme of the cited work, k resources in a k×k torus: the
//     codewords of X·Hᵀ ≡ 0 (mod k) — §3.1.1's formula with the modulus
//     it prints, k — for H = (1, h). It is what §3 draws: "a quasi-perfect
//     distance-1 placement in Q_8^2 ... (8 I/O nodes)" (Fig. 3).
//   - QPCut: RQP's construction (the perfect code of the next multiple of
//     p, cut to the torus) before RQP relaxes Def. 2, i.e. with every
//     codeword dropped whose sphere meets an earlier one's.
//   - QPGreedy: a lexicographic greedy packing of disjoint spheres.

// QP returns the quasi-perfect distance-t placement of a k×k torus with k
// I/O nodes: the codewords X·Hᵀ ≡ 0 (mod k), X = (x_1, x_0), H = (1, h).
// It takes h = 2t+1 (the seed's 2D check matrix) when that code is
// quasi-perfect, else the least h that is; an error when no h is (or the
// torus is not k×k). O(k·N·k) per h tried.
func QP(t *Torus, dist int) (*Placement, error) {
	if dist < 1 || dist > maxT {
		return nil, fmt.Errorf("%w: t = %d, expected 1..%d", ErrBadParam, dist, maxT)
	}
	if t.Dims() != 2 || t.K[0] != t.K[1] {
		return nil, fmt.Errorf("%w: qp needs a square 2D torus, got %s (use qp-cut or qp-greedy)", ErrNoQP, t)
	}
	k := t.K[0]
	try := []int{(2*dist + 1) % k}
	for h := 1; h < k; h++ {
		if h != try[0] {
			try = append(try, h)
		}
	}
	for _, h := range try {
		p := &Placement{Torus: t, Method: "qp", T: dist, IO: codewordsIn(t, []int{1, h}, k)}
		if p.quasiPerfect(dist) {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: no check matrix (1, h) mod %d gives a quasi-perfect distance-%d placement of %s (use qp-cut or qp-greedy)", ErrNoQP, k, dist, t)
}

// quasiPerfect reports Def. 2: I/O nodes at least 2t+1 apart, every node
// within t+1 of one.
func (p *Placement) quasiPerfect(dist int) bool {
	st := p.Stats()
	return len(p.IO) > 0 && (len(p.IO) == 1 || st.MinIODistance >= 2*dist+1) && st.CoverRadius <= dist+1
}

// QPCut returns RQP's codewords (the perfect code of the next multiple of
// p cut to the torus, §3.1.2) thinned to disjoint radius-t spheres: in
// index order, a codeword closer than 2t+1 to one already kept is dropped.
// Whether every node stays within t+1 shows in Stats.
func QPCut(t *Torus, dist int) (*Placement, error) {
	h, p, err := CheckMatrix(t.Dims(), dist)
	if err != nil {
		return nil, err
	}
	out := &Placement{Torus: t, Method: "qp-cut", T: dist}
	out.IO = packDisjoint(t, codewordsIn(t, h, p), dist)
	return out, nil
}

// QPGreedy returns a greedy packing of disjoint radius-t spheres: nodes
// in index order, each taken when it is at least 2t+1 from every one taken
// before. Whether every node is within t+1 shows in Stats. O(N·|IO|·n).
func QPGreedy(t *Torus, dist int) (*Placement, error) {
	if dist < 1 || dist > maxT {
		return nil, fmt.Errorf("%w: t = %d, expected 1..%d", ErrBadParam, dist, maxT)
	}
	all := make([]int, t.N())
	for i := range all {
		all[i] = i
	}
	return &Placement{Torus: t, Method: "qp-greedy", T: dist, IO: packDisjoint(t, all, dist)}, nil
}

// packDisjoint keeps, in order, the candidates at least 2t+1 from every
// one kept before.
func packDisjoint(t *Torus, cand []int, dist int) []int {
	var io []int
	for _, i := range cand {
		ok := true
		for _, j := range io {
			if t.Dist(i, j) < 2*dist+1 {
				ok = false
				break
			}
		}
		if ok {
			io = append(io, i)
		}
	}
	return io
}
