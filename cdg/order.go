package cdg

import (
	"slices"

	"github.com/nuesm/nuesm/fabric"
)

// topoOrder returns a position per vertex of the acyclic g in a
// topological order (Kahn).
func topoOrder(g *CSR) []int32 {
	n := g.NumVertices()
	indeg := make([]int32, n)
	for _, w := range g.Adj {
		indeg[w]++
	}
	queue := make([]int32, 0, n)
	for v := range int32(n) {
		if indeg[v] == 0 {
			queue = append(queue, v)
		}
	}
	ord := make([]int32, n)
	for i := 0; i < len(queue); i++ {
		v := queue[i]
		ord[v] = int32(i)
		for _, w := range g.Succ(v) {
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	return ord
}

// orderer keeps the topological order of a State's CDG as dependencies
// are added, after Pearce and Kelly ("A dynamic topological sort
// algorithm for directed acyclic graphs", JEA 2006): a dependency x -> y
// against the order searches forward from y and backward from x within
// the positions between them, finds a cycle when the forward search
// reaches x, and otherwise reorders only the vertices it visited.
type orderer struct {
	g       *fabric.Graph // the base fabric
	tbase   []int64
	turnCh  []int32
	V       int64
	deps    []uint64 // the CDG's dependency bits
	ord     []int32
	pending []uint64 // added dependencies not yet inserted
	seen    []uint32 // per vertex: stamp of the search that visited it
	stamp   uint32
	fwd     []int32
	bwd     []int32
	stack   []int32
	pool    []int32
}

func newOrderer(st *State) *orderer {
	b := st.base
	return &orderer{g: b.g, tbase: b.tbase, turnCh: st.baseCh, V: int64(b.V), deps: st.k.live, ord: st.ord}
}

// insertAll inserts the added dependency bits and reports whether the
// CDG stays acyclic.
func (o *orderer) insertAll(added []int64) bool {
	if len(added) == 0 {
		return true
	}
	o.pending = make([]uint64, len(o.deps))
	o.seen = make([]uint32, len(o.ord))
	for _, b := range added {
		o.pending[b>>6] |= 1 << (b & 63)
	}
	for _, b := range added {
		o.pending[b>>6] &^= 1 << (b & 63)
		turn, vl := b/o.V, b%o.V
		c := o.turnCh[turn]
		n := o.g.Off[o.g.Head[c]] + int32(turn-o.tbase[c])
		if !o.insert(int32(int64(c)*o.V+vl), int32(int64(n)*o.V+vl)) {
			return false
		}
	}
	return true
}

// live reports whether dependency bit b is in the CDG and inserted.
func (o *orderer) live(b int64) bool {
	return (o.deps[b>>6]&^o.pending[b>>6])&(1<<(b&63)) != 0
}

// insert adds x -> y, reporting false when it closes a cycle.
func (o *orderer) insert(x, y int32) bool {
	lb, ub := o.ord[y], o.ord[x]
	if lb > ub {
		return true
	}
	o.stamp += 2
	fs, bs := o.stamp, o.stamp+1
	// Forward from y, within positions below x's.
	o.fwd, o.stack = o.fwd[:0], append(o.stack[:0], y)
	o.seen[y] = fs
	for len(o.stack) > 0 {
		w := o.stack[len(o.stack)-1]
		o.stack = o.stack[:len(o.stack)-1]
		o.fwd = append(o.fwd, w)
		c, vl := int64(w)/o.V, int64(w)%o.V
		h := o.g.Head[c]
		for k := range int64(o.g.Degree(h)) {
			if !o.live((o.tbase[c]+k)*o.V + vl) {
				continue
			}
			z := int32((int64(o.g.Off[h])+k)*o.V + vl)
			if z == x {
				return false
			}
			if o.seen[z] != fs && o.ord[z] < ub {
				o.seen[z] = fs
				o.stack = append(o.stack, z)
			}
		}
	}
	// Backward from x, within positions above y's.
	o.bwd, o.stack = o.bwd[:0], append(o.stack[:0], x)
	o.seen[x] = bs
	for len(o.stack) > 0 {
		w := o.stack[len(o.stack)-1]
		o.stack = o.stack[:len(o.stack)-1]
		o.bwd = append(o.bwd, w)
		c2, vl := int64(w)/o.V, int64(w)%o.V
		h := o.g.Tail[c2]
		k := c2 - int64(o.g.Off[h])
		for e := o.g.Off[h]; e < o.g.Off[h+1]; e++ {
			c := o.g.Rev[e]
			if !o.live((o.tbase[c]+k)*o.V + vl) {
				continue
			}
			z := int32(int64(c)*o.V + vl)
			if o.seen[z] != bs && o.ord[z] > lb {
				o.seen[z] = bs
				o.stack = append(o.stack, z)
			}
		}
	}
	o.reorder()
	return true
}

// reorder gives the backward set the lowest of the positions both sets
// hold and the forward set the rest, each in its previous order.
func (o *orderer) reorder() {
	byOrd := func(a, b int32) int { return int(o.ord[a] - o.ord[b]) }
	slices.SortFunc(o.fwd, byOrd)
	slices.SortFunc(o.bwd, byOrd)
	o.pool = o.pool[:0]
	for _, w := range o.bwd {
		o.pool = append(o.pool, o.ord[w])
	}
	for _, w := range o.fwd {
		o.pool = append(o.pool, o.ord[w])
	}
	slices.Sort(o.pool)
	i := 0
	for _, w := range o.bwd {
		o.ord[w] = o.pool[i]
		i++
	}
	for _, w := range o.fwd {
		o.ord[w] = o.pool[i]
		i++
	}
}
