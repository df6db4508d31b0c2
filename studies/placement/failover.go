package placement

import (
	"fmt"
	"slices"
)

// Move is one compute node's reassignment.
type Move struct {
	Node             int
	From, To         int // old and new I/O node
	OldDist, NewDist int
}

// Region is what a failover touched (§4.4): the failed I/O nodes, the
// compute nodes they served (directly affected, each with its move), and
// the compute nodes next to those that are served by other I/O nodes (the
// neighbours the affected nodes notify).
type Region struct {
	Failed     []int
	Moves      []Move
	Neighbours []int
}

// Failover returns a new assignment in which the I/O nodes in failed no
// longer serve anyone: every compute node they served moves to the nearest
// healthy I/O node, ties broken X-line first, then Y and so on (§4.3,
// axisKey), then by the lowest index. Other nodes keep their I/O node. a is
// not modified. Failing every I/O node, or a node that is no (healthy) I/O
// node, is an error.
func Failover(a *Assignment, failed []int) (*Assignment, *Region, error) {
	t := a.P.Torus
	out := &Assignment{P: a.P, Of: slices.Clone(a.Of), Dist: slices.Clone(a.Dist), Failed: make([]bool, t.N())}
	if a.Failed != nil {
		copy(out.Failed, a.Failed)
	}
	is := a.P.IsIO()
	for _, f := range failed {
		if f < 0 || f >= t.N() || !is[f] {
			return nil, nil, fmt.Errorf("%w: node %d is no I/O node", ErrBadParam, f)
		}
		if out.Failed[f] {
			return nil, nil, fmt.Errorf("%w: I/O node %s failed twice", ErrBadParam, t.Label(f))
		}
		out.Failed[f] = true
		out.Of[f], out.Dist[f] = -1, 0
	}
	var healthy []int
	for _, v := range a.P.IO {
		if !out.Failed[v] {
			healthy = append(healthy, v)
		}
	}
	if len(healthy) == 0 {
		return nil, nil, fmt.Errorf("%w: every I/O node failed", ErrBadParam)
	}
	reg := &Region{Failed: slices.Sorted(slices.Values(failed))}
	affected := make([]bool, t.N())
	for i, v := range a.Of {
		if v < 0 || v == i || !out.Failed[v] {
			continue
		}
		best, bd := -1, 0
		for _, h := range healthy {
			d := t.Dist(i, h)
			if best < 0 || d < bd || (d == bd && axisKey(t, i, h) < axisKey(t, i, best)) {
				best, bd = h, d
			}
		}
		out.Of[i], out.Dist[i] = best, bd
		affected[i] = true
		reg.Moves = append(reg.Moves, Move{Node: i, From: v, To: best, OldDist: a.Dist[i], NewDist: bd})
	}
	c := make([]int, t.Dims())
	seen := make([]bool, t.N())
	for _, m := range reg.Moves {
		t.Coord(m.Node, c)
		for d := range c {
			for _, s := range [2]int{1, -1} {
				c[d] += s
				v := t.Index(c)
				c[d] -= s
				if !affected[v] && !seen[v] && out.Of[v] >= 0 && out.Of[v] != v {
					seen[v] = true
					reg.Neighbours = append(reg.Neighbours, v)
				}
			}
		}
	}
	slices.Sort(reg.Neighbours)
	return out, reg, nil
}
