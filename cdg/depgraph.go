package cdg

import (
	"fmt"
	"math"
	"slices"

	"github.com/nuesm/nuesm/fabric"
)

// PK inserts edges into a directed acyclic graph while keeping a
// topological order, with the dynamic topological sort of Pearce and
// Kelly ("A dynamic topological sort algorithm for directed acyclic
// graphs", ACM J. Exp. Algorithmics 11, 2006): inserting x -> y against
// the order searches forward from y and backward from x only among the
// vertices ordered between them, finds a cycle when the forward search
// meets x, and otherwise reorders just the vertices it visited
// (ReorderPK). The graph is the caller's, given by its successors and
// predecessors. Not safe for concurrent use.
type PK struct {
	mark  []uint32
	stamp uint32
	fwd   []int32
	bwd   []int32
	stack []int32
	keys  []int64
	par   []int32 // forward search: vertex -> the vertex it was reached from
	// The current Insert's search, read by the visitors fwdVisit and
	// bwdVisit, which NewPK binds once so that a search allocates
	// nothing.
	ord       []int32
	x, lb, ub int32
	v         int32 // the vertex whose successors fwdVisit gets
	sf, sb    uint32
	visitFwd  func(w int32) bool
	visitBwd  func(u int32)
	// Cycle holds, after Insert refused an edge, the cycle it would
	// close (its head first, its tail last).
	Cycle []int32
}

// NewPK returns the search state for a graph of n vertices.
func NewPK(n int) *PK {
	p := &PK{mark: make([]uint32, n), par: make([]int32, n)}
	p.visitFwd, p.visitBwd = p.fwdVisit, p.bwdVisit
	return p
}

// fwdVisit is the forward search's step to w, a successor of p.v: false
// when w is x (a cycle), otherwise w is queued if unseen and ordered
// before x.
func (p *PK) fwdVisit(w int32) bool {
	if w == p.x {
		return false
	}
	if p.mark[w] != p.sf && p.ord[w] < p.ub {
		p.mark[w] = p.sf
		p.par[w] = p.v
		p.stack = append(p.stack, w)
	}
	return true
}

// bwdVisit is the backward search's step to u, a predecessor: u is
// queued if unseen and ordered after y.
func (p *PK) bwdVisit(u int32) {
	if p.mark[u] != p.sb && p.ord[u] > p.lb {
		p.mark[u] = p.sb
		p.stack = append(p.stack, u)
	}
}

func (p *PK) next() uint32 {
	p.stamp++
	if p.stamp == 0 {
		clear(p.mark)
		p.stamp = 1
	}
	return p.stamp
}

// Insert reports whether edge x -> y keeps the graph acyclic, given ord
// (per vertex, its position in a topological order of the graph without
// the edge), and if so updates ord to an order of the graph with it.
// succ calls fn with every successor of v until fn returns false (then
// succ returns false); pred calls fn with every predecessor of v.
func (p *PK) Insert(ord []int32, x, y int32, succ func(v int32, fn func(w int32) bool) bool, pred func(v int32, fn func(u int32))) bool {
	lb, ub := ord[y], ord[x]
	if lb > ub {
		return true
	}
	p.ord, p.x, p.lb, p.ub = ord, x, lb, ub
	// Forward from y among vertices ordered before x.
	p.sf = p.next()
	p.fwd, p.stack = p.fwd[:0], append(p.stack[:0], y)
	p.mark[y] = p.sf
	for len(p.stack) > 0 {
		v := p.stack[len(p.stack)-1]
		p.stack = p.stack[:len(p.stack)-1]
		p.fwd = append(p.fwd, v)
		p.v = v
		if !succ(v, p.visitFwd) {
			// y ⇝ v -> x, and the new edge x -> y.
			p.Cycle = p.Cycle[:0]
			for u := v; u != y; u = p.par[u] {
				p.Cycle = append(p.Cycle, u)
			}
			p.Cycle = append(p.Cycle, y)
			slices.Reverse(p.Cycle)
			p.Cycle = append(p.Cycle, x)
			return false
		}
	}
	// Backward from x among vertices ordered after y.
	p.sb = p.next()
	p.bwd, p.stack = p.bwd[:0], append(p.stack[:0], x)
	p.mark[x] = p.sb
	for len(p.stack) > 0 {
		v := p.stack[len(p.stack)-1]
		p.stack = p.stack[:len(p.stack)-1]
		p.bwd = append(p.bwd, v)
		pred(v, p.visitBwd)
	}
	p.keys = ReorderPK(ord, p.fwd, p.bwd, p.keys)
	return true
}

// TurnGraph is a channel dependency graph over one fabric's virtual
// channels (channel*V + VL) whose paths keep their VL: every turn on
// every VL has a count (the destinations whose paths take it), and the
// graph stays acyclic as a destination's dependencies are swapped
// (Replace), with a topological order kept by PK. Engines that edit
// finished tables use it to refuse the edits that would close a cycle.
// Not safe for concurrent use.
type TurnGraph struct {
	g     *fabric.Graph
	V     int64
	tbase []int64 // channel -> its first turn
	cnt   []uint16
	ord   []int32
	pk    *PK
}

// NewTurnGraph returns the dependency graph of g's turns on V VLs, with
// no dependency counted.
func NewTurnGraph(g *fabric.Graph, V int) *TurnGraph {
	t := &TurnGraph{g: g, V: int64(V), tbase: make([]int64, g.NumChannels()+1)}
	for c := 0; c < g.NumChannels(); c++ {
		t.tbase[c+1] = t.tbase[c] + int64(g.Degree(g.Head[c]))
	}
	n := g.NumChannels() * V
	t.cnt = make([]uint16, t.tbase[g.NumChannels()]*t.V)
	t.ord = make([]int32, n)
	t.pk = NewPK(n)
	return t
}

// Edge returns the id of the dependency from channel c1 to channel c2
// (which leaves the switch c1 enters) on VL vl.
func (t *TurnGraph) Edge(c1, c2 int32, vl uint8) int64 {
	return (t.tbase[c1]+int64(c2-t.g.Off[t.g.Head[c1]]))*t.V + int64(vl)
}

// Add counts one more occurrence of edge e without keeping the order
// (Order must follow before Replace). It fails when the count overflows.
func (t *TurnGraph) Add(e int64) error {
	if t.cnt[e] == math.MaxUint16 {
		return fmt.Errorf("cdg: dependency %d counted more than %d times", e, math.MaxUint16)
	}
	t.cnt[e]++
	return nil
}

// Order computes a topological order of the counted edges, or fails
// when they form a cycle.
func (t *TurnGraph) Order() error {
	if !KahnOrder(t.ord, t.succ) {
		return fmt.Errorf("cdg: the counted dependencies form a cycle")
	}
	return nil
}

// KahnOrder sets ord[v] to vertex v's position in a topological order of
// the graph of len(ord) vertices whose successors succ gives (Kahn's
// algorithm), and reports false when the graph has a cycle.
func KahnOrder(ord []int32, succ func(v int32, fn func(w int32) bool) bool) bool {
	n := int32(len(ord))
	indeg := make([]int32, n)
	for v := range n {
		succ(v, func(w int32) bool { indeg[w]++; return true })
	}
	q := make([]int32, 0, n)
	for v := range n {
		if indeg[v] == 0 {
			q = append(q, v)
		}
	}
	for i := 0; i < len(q); i++ {
		succ(q[i], func(w int32) bool {
			if indeg[w]--; indeg[w] == 0 {
				q = append(q, w)
			}
			return true
		})
	}
	if int32(len(q)) != n {
		return false
	}
	for i, v := range q {
		ord[v] = int32(i)
	}
	return true
}

// Replace removes one occurrence of every edge of out and adds one of
// every edge of in; when in would close a cycle it leaves the graph as it
// was and returns false.
func (t *TurnGraph) Replace(out, in []int64) bool {
	return SwapEdges(out, in, func(e int64) { t.cnt[e]-- }, t.insert)
}

// SwapEdges replaces the edges out of a counted acyclic graph by those of
// in: remove takes one occurrence of an edge away, insert adds one or
// reports false when it would close a cycle. On such a refusal it undoes
// what it did and returns false.
func SwapEdges(out, in []int64, remove func(int64), insert func(int64) bool) bool {
	for _, e := range out {
		remove(e)
	}
	for i, e := range in {
		if insert(e) {
			continue
		}
		for _, f := range in[:i] {
			remove(f)
		}
		for _, f := range out {
			if !insert(f) {
				panic("cdg: restoring an acyclic dependency graph closed a cycle")
			}
		}
		return false
	}
	return true
}

// insert adds one occurrence of edge e, or reports false when it would
// close a cycle.
func (t *TurnGraph) insert(e int64) bool {
	if t.cnt[e] > 0 {
		t.cnt[e]++
		return true
	}
	turn, vl := e/t.V, e%t.V
	c1, _ := slices.BinarySearch(t.tbase, turn+1) // the first channel whose turns start after turn
	c1--
	c2 := t.g.Off[t.g.Head[c1]] + int32(turn-t.tbase[c1])
	if !t.pk.Insert(t.ord, int32(int64(c1)*t.V+vl), int32(int64(c2)*t.V+vl), t.succ, t.pred) {
		return false
	}
	t.cnt[e] = 1
	return true
}

// succ calls fn for every successor of vertex v present in the graph.
func (t *TurnGraph) succ(v int32, fn func(w int32) bool) bool {
	g, V := t.g, t.V
	c, vl := int64(v)/V, int64(v)%V
	h := g.Head[c]
	for k := int64(0); k < int64(g.Degree(h)); k++ {
		if t.cnt[(t.tbase[c]+k)*V+vl] > 0 && !fn(int32((int64(g.Off[h])+k)*V+vl)) {
			return false
		}
	}
	return true
}

// pred calls fn for every predecessor of vertex v present in the graph.
func (t *TurnGraph) pred(v int32, fn func(u int32)) {
	g, V := t.g, t.V
	c2, vl := int64(v)/V, int64(v)%V
	x := g.Tail[c2]
	k2 := c2 - int64(g.Off[x])
	for e := g.Off[x]; e < g.Off[x+1]; e++ {
		if c0 := int64(g.Rev[e]); t.cnt[(t.tbase[c0]+k2)*V+vl] > 0 {
			fn(int32(c0*V + vl))
		}
	}
}
