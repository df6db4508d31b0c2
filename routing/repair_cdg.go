package routing

import (
	"slices"

	"github.com/nuesm/nuesm/lft"
)

// depGraph is the channel dependency graph of one VL, grown by Repair:
// nodes are switch-to-switch channels, an edge a→b says a packet holding
// a may wait for b.
type depGraph struct {
	adj   [][]int32
	seen  []uint32 // search stamps
	stamp uint32
	stack []int32
	// ord is a topological order of the graph (an edge a→b has ord[a] <
	// ord[b]), recomputed when an added edge breaks it (dirty): a
	// candidate whose new edges follow the order needs no search, and a
	// search never needs a node ordered after its targets (Pearce and
	// Kelly's bound).
	ord   []int32
	dirty bool
}

// layer returns the dependency graph of VL vl, built from every entry of
// the destinations whose SL maps to vl.
func (rp *repairer) layer(vl uint8) *depGraph {
	if dg, ok := rp.cdgs[vl]; ok {
		return dg
	}
	g, r := rp.g, rp.r
	n := g.NumChannels()
	dg := &depGraph{adj: make([][]int32, n), seen: make([]uint32, n), dirty: true}
	for d := 1; d <= g.MaxLID(); d++ {
		if r.SL2VL.Default[r.SL.ByDest[d]&0xF] != vl {
			continue
		}
		dsw, term := g.Owner(d)
		if term >= 0 {
			dsw = g.Terms[term].Switch
		}
		if dsw < 0 {
			continue
		}
		for x := int32(0); int(x) < g.NumSwitches(); x++ {
			if x == dsw {
				continue
			}
			p := r.Port(x, d)
			if p == lft.NoPort || p == 0 {
				continue
			}
			c := g.ChannelAt(x, p)
			if c < 0 {
				continue
			}
			y := g.Head[c]
			if y == dsw {
				continue
			}
			if q := r.Port(y, d); q != lft.NoPort && q != 0 {
				if c2 := g.ChannelAt(y, q); c2 >= 0 {
					dg.edge(c, c2)
				}
			}
		}
	}
	rp.cdgs[vl] = dg
	return dg
}

func (dg *depGraph) edge(a, b int32) {
	if slices.Contains(dg.adj[a], b) { // a channel has a switch's radix of successors at most
		return
	}
	dg.adj[a] = append(dg.adj[a], b)
	if dg.ord != nil && dg.ord[a] >= dg.ord[b] {
		dg.dirty = true
	}
}

// order recomputes ord (Kahn's algorithm); ord is nil when the graph has
// a cycle (then every check searches without bound).
func (dg *depGraph) order() {
	n := len(dg.adj)
	indeg := make([]int32, n)
	for _, as := range dg.adj {
		for _, b := range as {
			indeg[b]++
		}
	}
	q := make([]int32, 0, n)
	for v := int32(0); int(v) < n; v++ {
		if indeg[v] == 0 {
			q = append(q, v)
		}
	}
	ord := make([]int32, n)
	for i := 0; i < len(q); i++ {
		v := q[i]
		ord[v] = int32(i)
		for _, b := range dg.adj[v] {
			if indeg[b]--; indeg[b] == 0 {
				q = append(q, b)
			}
		}
	}
	dg.ord, dg.dirty = nil, false
	if len(q) == n {
		dg.ord = ord
	}
}

// admissible reports whether the edges in[i]→c and c→out (out < 0: none)
// keep the graph acyclic: no path from c, through c→out and the existing
// edges, back to c or to a channel of in.
func (dg *depGraph) admissible(in []int32, c, out int32) bool {
	if dg.dirty {
		dg.order()
	}
	bound := int32(-1) // search only nodes ordered at most here (-1: all)
	if dg.ord != nil {
		fast := out < 0 || dg.ord[c] < dg.ord[out]
		bound = dg.ord[c]
		for _, i := range in {
			fast = fast && dg.ord[i] < dg.ord[c]
			bound = max(bound, dg.ord[i])
		}
		if fast {
			return true
		}
	}
	dg.stamp++
	if dg.stamp == 0 { // wrapped: clear the stamps
		for i := range dg.seen {
			dg.seen[i] = 0
		}
		dg.stamp = 1
	}
	target := func(x int32) bool {
		if x == c {
			return true
		}
		for _, i := range in {
			if x == i {
				return true
			}
		}
		return false
	}
	dg.stack = dg.stack[:0]
	push := func(x int32) bool {
		if target(x) {
			return false
		}
		if bound >= 0 && dg.ord[x] > bound {
			return true // ordered after every target: cannot reach one
		}
		if dg.seen[x] != dg.stamp {
			dg.seen[x] = dg.stamp
			dg.stack = append(dg.stack, x)
		}
		return true
	}
	dg.seen[c] = dg.stamp
	if out >= 0 && !push(out) {
		return false
	}
	for _, y := range dg.adj[c] {
		if !push(y) {
			return false
		}
	}
	for len(dg.stack) > 0 {
		x := dg.stack[len(dg.stack)-1]
		dg.stack = dg.stack[:len(dg.stack)-1]
		for _, y := range dg.adj[x] {
			if !push(y) {
				return false
			}
		}
	}
	return true
}

// add records the edges admissible accepted.
func (dg *depGraph) add(in []int32, c, out int32) {
	for _, i := range in {
		dg.edge(i, c)
	}
	if out >= 0 {
		dg.edge(c, out)
	}
}
