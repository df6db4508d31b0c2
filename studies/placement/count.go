package placement

import "fmt"

// WithCount returns a placement of exactly w I/O nodes (§3.2). With M_t =
// ⌈N/p_t⌉ the bound of distance t, it picks t with M_{t+1} ≤ w < M_t and
// deletes I/O nodes from the distance-t placement when w is at least as
// close to M_t as to M_{t+1} (eq. 3.3, 3.5), else adds to the distance-(t+1)
// placement (eq. 3.4). The starting placement is RQP (perfect where p
// divides every radix). Where no code exists for t+1 (3D beyond t = 1) it
// deletes; where w ≥ M_1 it adds to the distance-1 placement.
func WithCount(t *Torus, w int) (*Placement, error) {
	if w < 1 || w >= t.N() {
		return nil, fmt.Errorf("%w: W = %d I/O nodes, expected 1..%d", ErrBadParam, w, t.N()-1)
	}
	dist := chooseT(t, w)
	p, err := RQP(t, dist)
	if err != nil {
		return nil, err
	}
	if _, err := Perfect(t, dist); err == nil {
		p.Method = "perfect"
	}
	switch {
	case len(p.IO) > w:
		p = deleteIO(p, w)
		p.Method += "-delete"
	case len(p.IO) < w:
		p = addIO(p, w)
		p.Method += "-add"
	}
	return p.sorted(), nil
}

// chooseT returns the design distance of the starting placement; whether
// to delete or add then follows from its I/O count.
func chooseT(t *Torus, w int) int {
	if w >= t.MinBound(1) {
		return 1
	}
	for d := 1; ; d++ {
		if _, _, err := CheckMatrix(t.Dims(), d+1); err != nil || 2*(d+1) >= maxRadix(t) {
			return d // no code (or no room) for d+1: delete from d
		}
		mt, mt1 := t.MinBound(d), t.MinBound(d+1)
		if mt1 <= w {
			if abs(mt-w) <= abs(mt1-w) {
				return d
			}
			return d + 1
		}
	}
}

func maxRadix(t *Torus) int {
	m := 0
	for _, k := range t.K {
		m = max(m, k)
	}
	return m
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// deleteIO is the deletion procedure (§3.2, case I): I/O nodes closer
// than 2t+1 (RQP's close pairs, Theorem 2) lose their later member first;
// then I/O nodes are deleted in index order, each deletion marking the
// I/O nodes within 2t+1 of it undeletable for the rest of the pass; a
// pass that deletes nothing clears the marks.
func deleteIO(p *Placement, w int) *Placement {
	t, d := p.Torus, 2*p.T+1
	alive := append([]int(nil), p.IO...)
	count := len(alive)
	gone := map[int]bool{}
	marked := map[int]bool{}
	del := func(v int) {
		gone[v] = true
		count--
		for _, u := range alive {
			if !gone[u] && t.Dist(u, v) <= d {
				marked[u] = true
			}
		}
	}
	for a := 0; a < len(alive) && count > w; a++ {
		for b := a + 1; b < len(alive) && count > w; b++ {
			u, v := alive[a], alive[b]
			if !gone[u] && !gone[v] && !marked[v] && t.Dist(u, v) < d {
				del(v)
			}
		}
	}
	for count > w {
		deleted := false
		for _, v := range alive {
			if count == w {
				break
			}
			if !gone[v] && !marked[v] {
				del(v)
				deleted = true
			}
		}
		if !deleted {
			clear(marked)
		}
	}
	out := &Placement{Torus: t, Method: p.Method, T: p.T}
	for _, v := range alive {
		if !gone[v] {
			out.IO = append(out.IO, v)
		}
	}
	return out
}

// addIO is the addition procedure (§3.2, case II), in a greedy form: mark
// the compute nodes farthest (r) from every I/O node and make I/O the node
// that brings the most marked nodes within r−1 (the paper adds a marked
// node close to 2n−1 others), ties to the lowest index; repeat until w.
// O((w−|IO|)·N·marked·n).
func addIO(p *Placement, w int) *Placement {
	t := p.Torus
	out := &Placement{Torus: t, Method: p.Method, T: p.T, IO: append([]int(nil), p.IO...)}
	for len(out.IO) < w {
		near := out.nearest()
		r := 0
		for _, v := range near {
			r = max(r, v)
		}
		var far []int
		for i, v := range near {
			if v == r {
				far = append(far, i)
			}
		}
		best, score := -1, -1
		for c := 0; c < t.N(); c++ {
			if near[c] == 0 {
				continue
			}
			s := 0
			for _, m := range far {
				if t.Dist(c, m) <= r-1 {
					s++
				}
			}
			if s > score {
				best, score = c, s
			}
		}
		out.IO = append(out.IO, best)
		out.sorted()
	}
	return out
}
