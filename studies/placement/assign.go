package placement

import "fmt"

// Assignment maps every node to the I/O node serving it.
type Assignment struct {
	P      *Placement
	Of     []int  // node -> serving I/O node (itself for an I/O node, -1 for a failed one)
	Dist   []int  // node -> Lee distance to Of (0 for I/O and failed nodes)
	Failed []bool // node -> failed I/O node (nil when none failed)
}

// Assign gives every compute node an I/O node (§3.1.5, step 3 of the RQP
// algorithm, used for every method): a nearest I/O node; nodes within t of
// one are assigned first, the others after them; among equally near I/O
// nodes the least loaded so far wins, then the X-line-first rule of
// failover (axisKey), then the lowest index. Nodes are taken in index
// order. O(N·|IO|·n).
func Assign(p *Placement) (*Assignment, error) {
	if len(p.IO) == 0 {
		return nil, fmt.Errorf("%w: no I/O nodes to assign to", ErrBadParam)
	}
	t := p.Torus
	a := &Assignment{P: p, Of: make([]int, t.N()), Dist: make([]int, t.N())}
	is := p.IsIO()
	load := make([]int, t.N())
	near := make([]int, t.N())
	for i := range a.Of {
		a.Of[i] = -1
		near[i] = -1
		if is[i] {
			a.Of[i] = i
			continue
		}
		for _, v := range p.IO {
			if d := t.Dist(i, v); near[i] < 0 || d < near[i] {
				near[i] = d
			}
		}
	}
	for pass := 0; pass < 2; pass++ {
		for i := range a.Of {
			if is[i] || (pass == 0) != (near[i] <= p.T) {
				continue
			}
			best := -1
			for _, v := range p.IO {
				if t.Dist(i, v) != near[i] {
					continue
				}
				if best < 0 || load[v] < load[best] ||
					(load[v] == load[best] && axisKey(t, i, v) < axisKey(t, i, best)) {
					best = v
				}
			}
			a.Of[i], a.Dist[i] = best, near[i]
			load[best]++
		}
	}
	return a, nil
}

// axisKey orders equally near I/O nodes v for node x by the rule of §4.3:
// an I/O node on x's X-line (all coordinates but x_0 equal) first, then on
// its Y-line, and so on; failing all, the lines one step away, in the same
// dimension order. The key is r·n + d for the least (r, d) with v at
// distance r from x's line along dimension d.
func axisKey(t *Torus, x, v int) int {
	n := t.Dims()
	key := -1
	for d := 0; d < n; d++ {
		if k := t.lineDist(x, v, d)*n + d; key < 0 || k < key {
			key = k
		}
	}
	return key
}

// Loads returns the compute nodes served by each I/O node of P.IO, in
// that order (failed I/O nodes serve none).
func (a *Assignment) Loads() []int {
	at := map[int]int{}
	for j, v := range a.P.IO {
		at[v] = j
	}
	out := make([]int, len(a.P.IO))
	for i, v := range a.Of {
		if v >= 0 && v != i {
			out[at[v]]++
		}
	}
	return out
}

// Histogram returns h[d] = the compute nodes at Lee distance d from their
// I/O node.
func (a *Assignment) Histogram() []int {
	var h []int
	for i, v := range a.Of {
		if v < 0 || v == i {
			continue
		}
		for len(h) <= a.Dist[i] {
			h = append(h, 0)
		}
		h[a.Dist[i]]++
	}
	return h
}

// MeanDist returns the average distance of the compute nodes to their I/O
// node.
func (a *Assignment) MeanDist() float64 {
	s, c := 0, 0
	for i, v := range a.Of {
		if v >= 0 && v != i {
			s += a.Dist[i]
			c++
		}
	}
	if c == 0 {
		return 0
	}
	return float64(s) / float64(c)
}

// Role returns "io", "compute" or "failed" for node i.
func (a *Assignment) Role(i int) string {
	switch {
	case a.Failed != nil && a.Failed[i]:
		return "failed"
	case a.Of[i] == i:
		return "io"
	}
	return "compute"
}
